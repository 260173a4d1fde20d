"""Admin/oper state, speed and MTU of every intended fabric and host port."""

from __future__ import annotations

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms.state import DeviceState
from nr_run.validators.base import Check, Finding, on_port, register


@register
class InterfacesCheck(Check):
    name = "interfaces"
    tags = ("fabric", "l1", "health", "stage")
    description = "Fabric and host ports admin up, oper up, at the intended speed and MTU"
    requires = ("interfaces",)

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        out: list[Finding] = []
        for itf in intent.interfaces:
            obs = state.interfaces.get(itf.name)
            peer = f"{itf.peer_device}:{itf.peer_port}"
            at = on_port(itf)
            if obs is None:
                out.append(self.fail(intent.name, itf.name, "port present", "absent",
                                     "port missing from the device: check the port/breakout configuration", where=at))
                continue
            bad = []
            if not obs.admin_up:
                bad.append(("admin up", "admin down", f"no shutdown on {itf.name}"))
            if obs.admin_up and not obs.oper_up:
                bad.append(("oper up", "oper down", f"check optics/cable to {peer} and the peer port"))
            if obs.speed_mbps is not None and obs.speed_mbps != itf.speed_mbps:
                bad.append((f"speed {itf.speed_mbps} Mb/s", f"speed {obs.speed_mbps} Mb/s", "set the port speed"))
            if obs.mtu != itf.mtu:
                bad.append((f"mtu {itf.mtu}", f"mtu {obs.mtu}", f"set mtu {itf.mtu} on {itf.name} (link to {peer})"))
            for exp, got, hint in bad:
                out.append(self.fail(intent.name, itf.name, exp, got, hint, where=at))
            if not bad:
                out.append(self.ok(intent.name, itf.name, f"up, {itf.speed_mbps} Mb/s, mtu {itf.mtu}", where=at))
        return out
