"""Every RTSW reaches every other RTSW loopback over one equal-cost path per fabric uplink."""

from __future__ import annotations

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms.state import DeviceState
from nr_run.validators.base import Check, Finding, Where, register


@register
class EcmpCheck(Check):
    name = "ecmp"
    tags = ("fabric", "routing")
    description = "Each RTSW loopback reachable from every other RTSW over all fabric uplinks (ECMP)"
    requires = ("routes",)
    roles = ("rtsw",)

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        uplinks = sorted((i.peer_ip, i.name) for i in intent.interfaces if i.role == "fabric")
        want_hops = {ip for ip, _ in uplinks}
        out: list[Finding] = []
        for other in sorted(fabric.devices.values(), key=lambda d: d.name):
            if other.role != "rtsw" or other.name == intent.name or not other.loopback:
                continue
            prefix = other.loopback
            route = state.routes.get(prefix)
            target = f"{prefix} ({other.name})"
            at = Where(peer_device=other.name)          # the route's destination device
            exp = f"{len(want_hops)} next-hops via {', '.join(n for _, n in uplinks)}"
            if route is None:
                out.append(self.fail(intent.name, target, exp, "no route",
                                     f"no path to {other.name}: check BGP sessions and loopback advertisement", where=at))
                continue
            hops = {h.ip for h in route.next_hops if h.ip}
            if hops != want_hops:
                got = f"{len(hops)} next-hops ({', '.join(sorted(hops)) or 'none'})"
                missing = sorted(want_hops - hops)
                hint = (f"missing path(s) via {', '.join(missing)}: check those uplinks/sessions and maximum-paths"
                        if missing else "unexpected next-hops: check routing policy")
                out.append(self.fail(intent.name, target, exp, got, hint, where=at))
            else:
                out.append(self.ok(intent.name, target, exp, where=at))
        return out
