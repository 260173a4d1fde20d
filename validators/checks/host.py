"""GPU server RoCE NICs: address, MTU, PFC on the lossless priority, DSCP trust."""

from __future__ import annotations

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms.state import DeviceState
from nr_run.validators.base import Check, Finding, on_port, register
from nr_run.validators.helpers import fmt_list


@register
class HostNicCheck(Check):
    name = "host"
    tags = ("roce", "host")
    description = "Every RoCE NIC up with its address, MTU, PFC on the lossless priorities and DSCP trust"
    requires = ("nics",)
    roles = ("gpu",)

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        out: list[Finding] = []
        for nic in intent.nics:
            obs = state.nics.get(nic.name)
            at = on_port(nic)
            if obs is None:
                out.append(self.fail(intent.name, nic.name, "NIC present", "absent", "driver/firmware or naming",
                                     where=at))
                continue
            checks = [
                ("up", "up" if obs.oper_up else "down", f"bring {nic.name} up; check the cable to {nic.peer_device}"),
                (f"address {nic.address}", "address " + (",".join(obs.addresses) or "none"), f"ip addr add {nic.address} dev {nic.name}"),
                (f"mtu {nic.mtu}", f"mtu {obs.mtu}", f"ip link set {nic.name} mtu {nic.mtu}"),
                (f"pfc {fmt_list(sorted(nic.lossless_priorities))}", f"pfc {fmt_list(obs.pfc_priorities)}",
                 f"dcb pfc set dev {nic.name} prio-pfc {' '.join(f'{p}:on' for p in nic.lossless_priorities)}"),
                (f"trust {nic.trust}", f"trust {obs.trust}", f"dcb apptrust set dev {nic.name} order {nic.trust}"),
            ]
            bad = [(e, g, h) for e, g, h in checks
                   if (e.startswith("address") and nic.address not in obs.addresses)
                   or (not e.startswith("address") and e != g)]
            for exp, got, hint in bad:
                out.append(self.fail(intent.name, nic.name, exp, got, hint, where=at))
            if not bad:
                out.append(self.ok(intent.name, nic.name, f"up {nic.address} mtu {nic.mtu} pfc "
                                                          f"{fmt_list(sorted(nic.lossless_priorities))} trust {nic.trust}",
                                   where=at))
        return out
