"""LLDP neighbors against the intended cabling (missing, wrong and swapped cables), and servers missing a rail."""

from __future__ import annotations

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms.state import DeviceState
from nr_run.validators.base import Check, CheckOptions, Finding, Severity, Where, on_port, register
from nr_run.validators.helpers import short


class CablingOptions(CheckOptions):
    # Servers often run no LLDP agent; with False a missing neighbor on a host port is only a warning.
    host_ports_require_lldp: bool = True


@register
class CablingCheck(Check):
    name = "cabling"
    tags = ("fabric", "l1", "lldp", "stage")
    description = "LLDP neighbor on every intended port equals the planned peer device and port"
    requires = ("lldp",)
    Options = CablingOptions
    options: CablingOptions

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        seen: dict[str, list[tuple[str, str]]] = {}
        for n in state.lldp:
            seen.setdefault(n.local_port, []).append((short(n.remote_device), n.remote_port))
        planned = {itf.name: (itf.peer_device, itf.peer_port) for itf in intent.interfaces}
        where_planned = {peer: port for port, peer in planned.items()}
        out: list[Finding] = []
        for itf in intent.interfaces:
            want = (itf.peer_device, itf.peer_port)
            got = seen.get(itf.name, [])
            exp = f"{want[0]}:{want[1]}"
            at = on_port(itf)
            if want in got:
                out.append(self.ok(intent.name, itf.name, exp, where=at))
                continue
            if not got:
                sev: Severity = "error" if itf.role == "fabric" or self.options.host_ports_require_lldp else "warning"
                out.append(self.fail(intent.name, itf.name, exp, "no LLDP neighbor",
                                     f"link missing: check the cable {intent.name}:{itf.name} <-> {exp} and both ports",
                                     sev, at))
                continue
            obs = ", ".join(f"{d}:{p}" for d, p in got)
            other = next((where_planned[g] for g in got if g in where_planned), None)
            hint = (f"cable swapped: the neighbor seen here is planned on {intent.name}:{other}"
                    if other else f"miscabled: move the cable so {itf.name} reaches {exp}")
            out.append(self.fail(intent.name, itf.name, exp, obs, hint, where=at))
        return out


@register
class RailsCheck(Check):
    """A server whose compute NIC has no rail link runs degraded, whatever its switches report."""

    name = "rails"
    tags = ("fabric", "l1", "host")
    description = "Every compute NIC of a server (its hardware's downlinks) has a rail link in the cabling plan"
    roles = ("gpu",)

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        cabled = {n.name for n in intent.nics}
        out: list[Finding] = []
        for port in intent.rails:
            if port in cabled:
                out.append(self.ok(intent.name, port, "a rail link", where=Where(port=port)))
                continue
            out.append(self.fail(intent.name, port, "a rail link", "no rail link in the cabling plan",
                                 f"{intent.name} runs with {len(cabled)} of {len(intent.rails)} rails: restore the "
                                 "link (cabling.overrides) or take the NIC out of the hardware's downlinks",
                                 "warning", Where(port=port)))
        return out
