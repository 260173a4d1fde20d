"""Every RTSW reaches the other RTSWs' loopbacks over the equal-cost paths the cabling provides.

A device is asked for the routes it is judged on, not its whole table (which grows with the site, and would make
what a collection reads grow with its square). Destinations fall into classes: those of one zone cabled to the
same CTSWs, to which every source expects the same next hops. Each source judges every class of its paths on `PER_CLASS`
destinations of that class, rotated by the source's place among the RTSWs, so that every destination is judged
by some sources and every source on every kind of path it has; the BGP check judges that each session receives
prefixes. Uniform cabling is one class; each cabling override adds at most one.
"""

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


# destinations judged per class of paths on each source
PER_CLASS = 4

# the destination classes of the fabric last asked about (a run asks once per device: compute them once)
_classes: tuple[FabricIntent, dict[str, int], list[list[DeviceIntent]]] | None = None


def _destination_classes(fabric: FabricIntent) -> tuple[dict[str, int], list[list[DeviceIntent]]]:
    """(each RTSW's place in name order, the RTSWs with a loopback grouped by their zone and the set of CTSWs cabled to
    them: what expected_next_hops reads of a destination, so any source expects the same hops to a group)."""
    global _classes
    if _classes is None or _classes[0] is not fabric:
        rtsws = sorted((d for d in fabric.devices.values() if d.role == "rtsw"), key=lambda d: d.name)
        groups: dict[tuple[int, frozenset[str]], list[DeviceIntent]] = {}
        for d in rtsws:
            if d.loopback:
                key = (-1 if d.zone is None else d.zone, frozenset(i.peer_device for i in d.interfaces if i.role == "fabric"))
                groups.setdefault(key, []).append(d)
        order = sorted(groups, key=lambda k: (k[0], sorted(k[1])))
        _classes = fabric, {d.name: i for i, d in enumerate(rtsws)}, [groups[k] for k in order]
    return _classes[1], _classes[2]


def destinations(source: DeviceIntent, fabric: FabricIntent) -> list[DeviceIntent]:
    """The RTSWs whose loopback routes `source` is judged on: PER_CLASS of each destination class, starting at
    the source's own place among the RTSWs (so consecutive sources cover consecutive destinations)."""
    places, classes = _destination_classes(fabric)
    at = places.get(source.name, 0)
    picked: list[DeviceIntent] = []
    for members in classes:
        others = [d for d in members if d.name != source.name]
        picked += [others[(at + k) % len(others)] for k in range(min(PER_CLASS, len(others)))]
    return sorted({d.name: d for d in picked}.values(), key=lambda d: d.name)


@register
class EcmpCheck(Check):
    name = "ecmp"
    tags = ("fabric", "routing")
    description = "Each RTSW loopback reachable from every other RTSW over every cabled CTSW path (ECMP)"
    requires = ("routes",)
    roles = ("rtsw",)

    def route_prefixes(self, intent: DeviceIntent, fabric: FabricIntent) -> set[str] | None:
        return {str(d.loopback) for d in destinations(intent, fabric)}

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        out: list[Finding] = []
        for other in destinations(intent, fabric):
            uplinks = expected_next_hops(intent, other, fabric)
            want_hops = {ip for ip, _ in uplinks}
            prefix = str(other.loopback)          # destinations() holds RTSWs with a loopback
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
