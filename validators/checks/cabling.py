"""LLDP neighbors against the intended cabling (missing, wrong and swapped cables), and servers missing a rail."""

from __future__ import annotations

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms import registry
from nr_run.platforms.base import PortAliases
from nr_run.platforms.state import DeviceState
from nr_run.validators.base import Check, CheckOptions, Finding, Severity, Where, on_port, register
from nr_run.validators.helpers import short


class CablingOptions(CheckOptions):
    # Servers often run no LLDP agent; with False a missing neighbor on a host port is only a warning.
    host_ports_require_lldp: bool = True


def _port_names(device: DeviceIntent) -> dict[str, str]:
    """Other names of the device's ports -> its intent port names, from its platform (a SONiC neighbour's
    LLDP port ID is the PORT alias, EOS prints Et1/1 for Ethernet1/1); {} when the platform has none."""
    config = registry.get(device.platform).config
    if not isinstance(config, PortAliases):
        return {}
    own = {i.name for i in device.interfaces}
    return {other: name for other, name in config.port_names(device).items() if other not in own}


@register
class CablingCheck(Check):
    name = "cabling"
    tags = ("fabric", "l1", "lldp", "stage")
    description = "LLDP neighbor on every intended port equals the planned peer device and port"
    requires = ("lldp", "interfaces")
    peer_fields = ("interfaces",)             # the port aliases neighbours advertise
    Options = CablingOptions
    options: CablingOptions

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        # a neighbor may advertise a port by another name (SONiC sends its PORT alias as the LLDP port ID)
        by_alias = {(dev, itf.alias): name for dev, st in states.items() for name, itf in st.interfaces.items()
                    if itf.alias}
        seen: dict[str, list[tuple[str, str]]] = {}
        aliases: dict[str, dict[str, str]] = {}

        def canonical(device: str, port: str) -> str:
            if device not in aliases:
                peer = fabric.devices.get(device)
                aliases[device] = _port_names(peer) if peer is not None else {}
            return aliases[device].get(port, port)

        for n in state.lldp:
            remote = short(n.remote_device)
            port = canonical(remote, n.remote_port)
            seen.setdefault(canonical(intent.name, n.local_port), []).append((remote, by_alias.get((remote, port), port)))
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
    # the cabling plan is the inventory: a rail it leaves without a link is declared (cabling.overrides remove)
    declared = True

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
