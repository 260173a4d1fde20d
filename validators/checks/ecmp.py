"""Every RTSW reaches every other RTSW loopback over the equal-cost paths the cabling provides."""

from __future__ import annotations

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms.state import DeviceState
from nr_run.validators.base import Check, Finding, Where, register


def expected_next_hops(source: DeviceIntent, dest: DeviceIntent,
                       fabric: FabricIntent | None = None) -> list[tuple[str, str]]:
    """(next-hop IP, local port) of every uplink of `source` whose CTSW also has a link to `dest`.

    In a two-tier Clos a CTSW can only forward to RTSWs it is cabled to (a path back down through another
    RTSW would carry the CTSW tier's ASN twice), so an uplink removed by an override on either RTSW
    removes that CTSW's paths, and a CTSW with several links to `dest` still is one next hop per uplink.
    Toward another zone (given the fabric), a CTSW reaches `dest` through an ATSW that has a link to a CTSW
    cabled to `dest`; within the zone only directly, as the zone's CTSWs share one ASN.
    """
    reaching = {i.peer_device for i in dest.interfaces if i.role == "fabric"}
    if fabric is not None and dest.zone is not None and source.zone != dest.zone:
        reaching = _reaching_across_zones(fabric, reaching)
    hops = [(i.peer_ip, i.name) for i in source.interfaces if i.role == "fabric" and i.peer_device in reaching]
    width = source.bgp.maximum_paths if source.bgp else len(hops)
    return sorted(hops)[:width] if len(hops) > width else sorted(hops)


def _reaching_across_zones(fabric: FabricIntent, dest_spines: set[str]) -> set[str]:
    """The spines of other zones with a path to a leaf whose own spines are `dest_spines`: those sharing an
    aggregation switch with one of them."""
    devs = fabric.devices
    aggs = {i.peer_device for s in dest_spines if s in devs for i in devs[s].interfaces
            if i.peer_device in devs and devs[i.peer_device].tier > devs[s].tier}
    zones = {devs[s].zone for s in dest_spines if s in devs}
    return {i.peer_device for a in aggs for i in devs[a].interfaces
            if i.peer_device in devs and devs[i.peer_device].zone not in zones}


@register
class EcmpCheck(Check):
    name = "ecmp"
    tags = ("fabric", "routing")
    description = "Each RTSW loopback reachable from every other RTSW over every cabled CTSW path (ECMP)"
    requires = ("routes",)
    roles = ("rtsw",)

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        out: list[Finding] = []
        for other in sorted(fabric.devices.values(), key=lambda d: d.name):
            if other.role != "rtsw" or other.name == intent.name or not other.loopback:
                continue
            uplinks = expected_next_hops(intent, other, fabric)
            want_hops = {ip for ip, _ in uplinks}
            prefix = other.loopback
            route = state.routes.get(prefix)
            target = f"{prefix} ({other.name})"
            at = Where(peer_device=other.name)          # the route's destination device
            if not uplinks:
                exp = "no path (no CTSW is cabled to both)"
                if route is None:
                    out.append(self.ok(intent.name, target, exp, where=at))
                else:
                    out.append(self.fail(intent.name, target, exp, f"{len(route.next_hops)} next-hops",
                                         "a path the cabling does not provide: check the LLDP/cabling findings",
                                         where=at))
                continue
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
