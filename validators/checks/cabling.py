"""LLDP neighbors against the intended cabling (missing, wrong and swapped cables), and servers missing a rail."""

from __future__ import annotations

import weakref
from typing import Any

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

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        # a run judges every device's neighbors against the same far ends: their port names are read once per
        # far end (a CTSW's list grows with the site), not once per device that sees it
        self._intended: dict[str, tuple[DeviceIntent | None, dict[str, str]]] = {}
        self._collected: dict[str, tuple[weakref.ref[DeviceState] | None, int, dict[str, str]]] = {}

    def _intended_names(self, fabric: FabricIntent, device: str) -> dict[str, str]:
        """Other names of `device`'s ports (its platform's) -> its intent port names."""
        peer = fabric.devices.get(device)
        hit = self._intended.get(device)
        if hit is None or hit[0] is not peer:
            hit = self._intended[device] = (peer, _port_names(peer) if peer is not None else {})
        return hit[1]

    def _collected_aliases(self, states: dict[str, DeviceState], device: str) -> dict[str, str]:
        """The aliases `device`'s collected interfaces carry -> their names (SONiC's PORT alias)."""
        st = states.get(device)
        hit = self._collected.get(device)
        # refreshed when the device's state (or its interfaces) is another than the one read: a weak reference,
        # so that this never keeps a run's states alive
        if hit is None or (hit[0]() if hit[0] is not None else None) is not st or \
                hit[1] != (id(st.interfaces) if st is not None else 0):
            names = {itf.alias: name for name, itf in st.interfaces.items() if itf.alias} if st is not None else {}
            hit = self._collected[device] = (weakref.ref(st) if st is not None else None,
                                             id(st.interfaces) if st is not None else 0, names)
        return hit[2]

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        # a neighbor may advertise a port by another name (SONiC sends its PORT alias as the LLDP port ID)
        seen: dict[str, list[tuple[str, str]]] = {}
        own = self._intended_names(fabric, intent.name)
        for n in state.lldp:
            remote = short(n.remote_device)
            port = self._intended_names(fabric, remote).get(n.remote_port, n.remote_port)
            seen.setdefault(own.get(n.local_port, n.local_port), []).append(
                (remote, self._collected_aliases(states, remote).get(port, port)))
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
