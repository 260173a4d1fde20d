"""Every intended eBGP session Established with the intended peer ASN and prefixes; no extra peers."""

from __future__ import annotations

from pydantic import Field

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms.state import DeviceState
from nr_run.validators.base import Check, CheckOptions, Finding, Where, register


class BgpOptions(CheckOptions):
    min_prefixes: int = Field(1, ge=0, description="prefixes an Established session must have received")


@register
class BgpCheck(Check):
    name = "bgp"
    tags = ("fabric", "routing", "stage")
    description = "Intended BGP sessions Established, right peer ASN, prefixes received, no unexpected peers"
    requires = ("bgp",)
    Options = BgpOptions
    options: BgpOptions

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        out: list[Finding] = []
        if intent.bgp is None:
            return out
        intended = {p.address: p for p in intent.bgp.peers}
        far = {i.name: i.peer_port for i in intent.interfaces}
        by_ip = {i.peer_ip: i for i in intent.interfaces}
        for addr, peer in intended.items():
            target = f"{addr} ({peer.peer_device} via {peer.local_port})"
            at = Where(peer.local_port, peer.peer_device, far.get(peer.local_port, ""))
            obs = state.bgp.get(addr)
            if obs is None:
                out.append(self.fail(intent.name, target, f"peer AS{peer.remote_asn} Established", "not configured",
                                     f"add neighbor {addr} remote-as {peer.remote_asn}", where=at))
                continue
            bad = []
            if obs.remote_asn != peer.remote_asn:
                bad.append((f"remote-as {peer.remote_asn}", f"remote-as {obs.remote_asn}",
                            f"set neighbor {addr} remote-as {peer.remote_asn} ({peer.peer_device})"))
            if obs.state != "Established":
                bad.append(("Established", obs.state or "unknown",
                            f"session to {peer.peer_device} down: check link {peer.local_port}, addressing and ASNs"))
            elif obs.prefixes_received < self.options.min_prefixes:
                bad.append((f">= {self.options.min_prefixes} prefixes received",
                            f"{obs.prefixes_received} prefixes", f"{peer.peer_device} advertises nothing"))
            for exp, got, hint in bad:
                out.append(self.fail(intent.name, target, exp, got, hint, where=at))
            if not bad:
                out.append(self.ok(intent.name, target, f"AS{peer.remote_asn} Established",
                                   f"AS{obs.remote_asn} Established, {obs.prefixes_received} prefixes", where=at))
        for addr in sorted(set(state.bgp) - set(intended)):
            obs = state.bgp[addr]
            itf = by_ip.get(addr)      # an unplanned session may still run over a planned link
            at = Where(itf.name, itf.peer_device, itf.peer_port) if itf else Where()
            out.append(self.fail(intent.name, addr, "no such peer", f"AS{obs.remote_asn} {obs.state}",
                                 f"remove neighbor {addr}: not in the plan", where=at))
        return out
