"""Every intended eBGP session Established with the intended peer ASN and prefixes; no extra peers."""

from __future__ import annotations

from nr_run.validators.base import Check, Finding, register


@register
class BgpCheck(Check):
    name = "bgp"
    tags = ("fabric", "routing")
    description = "Intended BGP sessions Established, right peer ASN, prefixes received, no unexpected peers"
    requires = ("bgp",)
    defaults = {"min_prefixes": 1}

    def evaluate(self, intent, state, fabric, states) -> list[Finding]:
        out: list[Finding] = []
        if intent.bgp is None:
            return out
        intended = {p.address: p for p in intent.bgp.peers}
        for addr, peer in intended.items():
            target = f"{addr} ({peer.peer_device} via {peer.local_port})"
            obs = state.bgp.get(addr)
            if obs is None:
                out.append(self.fail(intent.name, target, f"peer AS{peer.remote_asn} Established", "not configured",
                                     f"add neighbor {addr} remote-as {peer.remote_asn}"))
                continue
            bad = []
            if obs.remote_asn != peer.remote_asn:
                bad.append((f"remote-as {peer.remote_asn}", f"remote-as {obs.remote_asn}",
                            f"set neighbor {addr} remote-as {peer.remote_asn} ({peer.peer_device})"))
            if obs.state != "Established":
                bad.append(("Established", obs.state or "unknown",
                            f"session to {peer.peer_device} down: check link {peer.local_port}, addressing and ASNs"))
            elif obs.prefixes_received < self.options["min_prefixes"]:
                bad.append((f">= {self.options['min_prefixes']} prefixes received",
                            f"{obs.prefixes_received} prefixes", f"{peer.peer_device} advertises nothing"))
            for exp, got, hint in bad:
                out.append(self.fail(intent.name, target, exp, got, hint))
            if not bad:
                out.append(self.ok(intent.name, target, f"AS{peer.remote_asn} Established",
                                   f"AS{obs.remote_asn} Established, {obs.prefixes_received} prefixes"))
        for addr in sorted(set(state.bgp) - set(intended)):
            obs = state.bgp[addr]
            out.append(self.fail(intent.name, addr, "no such peer", f"AS{obs.remote_asn} {obs.state}",
                                 f"remove neighbor {addr}: not in the plan"))
        return out
