"""Each zone is one prefix beyond its boundary: the aggregation tier and the other zones' CTSWs hold every zone's
summary and none of the host blocks inside it.

A multi-zone CTSW originates its zone's summary (an aggregate, active while any host block of the zone is in
its table) and the ATSWs drop the specifics on receipt. A specific found on an ATSW is a CTSW's leak that the
ATSW let in; one found on another zone's CTSW has crossed the boundary, which is what the summary exists to
prevent (every zone's table would again grow with the whole site). A missing summary leaves the hosts of that
zone unreachable from the others. Each device is asked for the summaries and a few host blocks of each zone
(rotated by its place, as the ECMP check samples loopbacks), not its whole table.
"""

from __future__ import annotations

import ipaddress

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms.state import DeviceState
from nr_run.validators.base import Check, Finding, Where, register

# host blocks judged per zone on each device
PER_ZONE = 4

# the zones of the fabric last asked about (a run asks once per device: compute them once)
_zones: tuple[FabricIntent, dict[int, tuple[str, list[DeviceIntent]]], dict[str, int]] | None = None


def zones(fabric: FabricIntent) -> tuple[dict[int, tuple[str, list[DeviceIntent]]], dict[str, int]]:
    """(zone -> (its summary, its RTSWs with a host block, in name order), each switch's place in name order)."""
    global _zones
    if _zones is None or _zones[0] is not fabric:
        out: dict[int, tuple[str, list[DeviceIntent]]] = {}
        for d in sorted(fabric.devices.values(), key=lambda d: d.name):
            if d.tier == 2 and d.zone is not None and d.zone_summary:
                out.setdefault(d.zone, (d.zone_summary, []))
        for d in sorted(fabric.devices.values(), key=lambda d: d.name):
            if d.tier == 1 and d.zone in out and d.host_block:
                out[d.zone][1].append(d)
        places = {name: i for i, name in enumerate(sorted(fabric.devices))}
        _zones = fabric, dict(sorted(out.items())), places
    return _zones[1], _zones[2]


def judged_zones(device: DeviceIntent, fabric: FabricIntent) -> list[tuple[int, str, list[DeviceIntent]]]:
    """The zones `device` must see as one prefix: every zone from an ATSW, the other zones from a CTSW, each
    with PER_ZONE of its RTSWs (starting at the device's place) whose host blocks must be absent."""
    by_zone, places = zones(fabric)
    at = places.get(device.name, 0)
    out = []
    for zone, (summary, leaves) in by_zone.items():
        if device.tier == 2 and zone == device.zone:
            continue
        picked = [leaves[(at + k) % len(leaves)] for k in range(min(PER_ZONE, len(leaves)))]
        out.append((zone, summary, sorted({d.name: d for d in picked}.values(), key=lambda d: d.name)))
    return out


def specifics(leaf: DeviceIntent) -> list[str]:
    """What an RTSW may advertise of its hosts: its host block (a platform that summarises the block) and the
    /31 of its first host port (one that redistributes the connected /31s)."""
    first = min((i for i in leaf.interfaces if i.role == "host" and i.address), key=lambda i: i.name, default=None)
    p31 = [str(ipaddress.ip_interface(first.address).network)] if first is not None else []
    return [str(leaf.host_block), *p31]


@register
class ZoneSummaryCheck(Check):
    name = "zone-summary"
    tags = ("fabric", "routing")
    description = ("Beyond a zone's CTSWs (on the ATSWs and the other zones' CTSWs) each zone is its one summary "
                   "prefix: summary present, none of its host blocks")
    requires = ("routes",)
    roles = ("atsw", "ctsw")

    def applies_to(self, intent: DeviceIntent) -> bool:
        return (intent.role == "atsw" and bool(intent.zone_summaries)) or (
            intent.role == "ctsw" and intent.zone_summary is not None)

    def route_prefixes(self, intent: DeviceIntent, fabric: FabricIntent) -> set[str] | None:
        out: set[str] = set()
        for _, summary, leaves in judged_zones(intent, fabric):
            out.add(summary)
            out |= {p for d in leaves for p in specifics(d)}
        return out

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        out: list[Finding] = []
        by_ip = {i.peer_ip: i.peer_device for i in intent.interfaces}
        for zone, summary, leaves in judged_zones(intent, fabric):
            route = state.routes.get(summary)
            target = f"{summary} (zone {zone} summary)"
            if route is None or not route.next_hops:
                out.append(self.fail(intent.name, target, "the zone's summary", "no route",
                                     f"zone {zone}'s CTSWs originate no aggregate (none of its host blocks in their "
                                     "tables?) or the path from them drops it: its hosts are unreachable from here"))
            else:
                out.append(self.ok(intent.name, target, "the zone's summary", f"{len(route.next_hops)} next-hops"))
            for leaf, prefix in ((lf, p) for lf in leaves for p in specifics(lf)):
                specific = state.routes.get(prefix)
                at = Where(peer_device=leaf.name)
                target = f"{prefix} ({leaf.name}, zone {zone})"
                if specific is None:
                    out.append(self.ok(intent.name, target, f"only {summary}", "absent", where=at))
                    continue
                via = sorted({by_ip.get(h.ip or "", h.ip or h.interface) for h in specific.next_hops})
                hint = (f"filter the host blocks inside {summary} from the CTSWs ({', '.join(via)}): the ATSWs' "
                        "inbound route-map" if intent.role == "atsw" else
                        f"zone {zone}'s host blocks crossed the aggregation tier via {', '.join(via)}: check the "
                        "ATSWs' inbound route-map")
                out.append(self.fail(intent.name, target, f"only {summary}", f"specific route via {', '.join(via)}",
                                     hint, where=at))
        return out
