"""GPU-to-GPU path classes of a star, two-tier or multi-zone fabric, from the cabled links.

A RoCE path goes NIC -> RTSW -> (CTSW -> (ATSW -> CTSW ->)) RTSW -> NIC, up then down. The classes are:
same RTSW (no CTSW hop), same rail across units via each CTSW, cross rail via each CTSW, and, between zones,
cross zone via each ATSW; each CTSW (ATSW) is one ECMP branch. A class is a list of hop positions; each position holds every port (or link) some path of the
class crosses there, so a check over the positions covers every concrete path without listing the pairs.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal

from nr_run.intent.models import FabricIntent

Direction = Literal["tx", "rx"]


@dataclass(frozen=True, order=True)
class PortRef:
    device: str
    port: str
    direction: Direction       # "rx": RoCE arrives on this port; "tx": it leaves through it


@dataclass(frozen=True, order=True)
class LinkRef:
    tx: PortRef
    rx: PortRef


HostPart = Literal["nic-tx", "up-link", "rtsw-rx", "rtsw-tx", "down-link", "nic-rx"]


@dataclass
class Position:
    """One hop position of a path class: what kind of hop and every port or link found there.

    Host-side hops (NICs, their links, RTSW host ports) are the same in every class, so they are given per RTSW
    (`hosts`: the RTSWs whose host ports this position covers, `part`: which hop) and expanded by the checker
    once per RTSW; the other hops list their ports or links."""

    label: str                                   # e.g. "source RTSW uplink (tx)"
    ports: list[PortRef] = field(default_factory=list)
    links: list[LinkRef] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    part: HostPart | None = None


@dataclass
class PathClass:
    name: str                                    # "same-rail via ctsw1"
    kind: Literal["same-rtsw", "same-rail", "cross-rail", "cross-zone"]
    positions: list[Position]
    example: list[str]                           # one concrete path, "gpu1:eth1 -> rtsw1 -> ...", for the report
    pairs: int                                   # RTSW pairs (or host pairs on one RTSW) this class covers
    example_ports: list[PortRef] = field(default_factory=list)   # the example path's ports, hop by hop
    host_links: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)  # rtsw -> (port, gpu, nic)
    members: list[str] = field(default_factory=list)             # the RTSWs the class runs between
    ctsw: str | None = None                                      # the ECMP branch (None: same RTSW)
    uplinks: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)  # rtsw -> {ctsw: (port, port)}
    aggregation: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)  # ctsw -> {atsw: ports}


def host_side(topo_hosts: list[tuple[str, str, str]], rtsw: str, part: HostPart) -> list[PortRef | LinkRef]:
    """The ports or links of one host-side hop below `rtsw` (its (port, gpu, nic) host links)."""
    if part == "nic-tx":
        return [PortRef(g, n, "tx") for _, g, n in topo_hosts]
    if part == "nic-rx":
        return [PortRef(g, n, "rx") for _, g, n in topo_hosts]
    if part == "rtsw-rx":
        return [PortRef(rtsw, p, "rx") for p, _, _ in topo_hosts]
    if part == "rtsw-tx":
        return [PortRef(rtsw, p, "tx") for p, _, _ in topo_hosts]
    if part == "up-link":
        return [_link((g, n), (rtsw, p)) for p, g, n in topo_hosts]
    return [_link((rtsw, p), (g, n)) for p, g, n in topo_hosts]


@dataclass
class _Topology:
    host_ports: dict[str, list[tuple[str, str, str]]] = field(default_factory=lambda: defaultdict(list))
    uplinks: dict[str, dict[str, tuple[str, str]]] = field(default_factory=lambda: defaultdict(dict))
    aggregation: dict[str, dict[str, tuple[str, str]]] = field(default_factory=lambda: defaultdict(dict))


def _topology(fabric: FabricIntent) -> _Topology:
    """rtsw -> [(its host port, gpu, nic)], rtsw -> {ctsw: (rtsw port, ctsw port)} and ctsw -> {atsw: (ctsw port,
    atsw port)} from the links, by the tiers of their ends."""
    topo = _Topology()
    tier = {n: d.tier for n, d in fabric.devices.items()}
    for lk in fabric.links:
        ends = {tier.get(lk.a_device): (lk.a_device, lk.a_port), tier.get(lk.b_device): (lk.b_device, lk.b_port)}
        if 0 in ends and 1 in ends:
            (rtsw, rport), (gpu, nic) = ends[1], ends[0]
            topo.host_ports[rtsw].append((rport, gpu, nic))
        elif 2 in ends and 1 in ends:
            (rtsw, rport), (ctsw, cport) = ends[1], ends[2]
            topo.uplinks[rtsw].setdefault(ctsw, (rport, cport))
        elif 3 in ends and 2 in ends:
            (ctsw, cport), (atsw, aport) = ends[2], ends[3]
            topo.aggregation[ctsw].setdefault(atsw, (cport, aport))
    return topo


def _link(a: tuple[str, str], b: tuple[str, str]) -> LinkRef:
    return LinkRef(PortRef(a[0], a[1], "tx"), PortRef(b[0], b[1], "rx"))


def path_classes(fabric: FabricIntent) -> list[PathClass]:
    """Every path class of the fabric, sorted: same RTSW, then same rail and cross rail per CTSW."""
    topo = _topology(fabric)
    rtsws = sorted(n for n in topo.host_ports if fabric.devices[n].tier == 1)
    out: list[PathClass] = []
    local = [r for r in rtsws if len(topo.host_ports[r]) >= 2]
    if local:
        out.append(_class("same RTSW", "same-rtsw", topo, local, len(local), None, fabric))
    ctsws = sorted({c for r in rtsws for c in topo.uplinks[r]})
    devs = fabric.devices
    for ctsw in ctsws:
        below = [r for r in rtsws if ctsw in topo.uplinks[r]]
        # same rail: an RTSW takes part when its rail has an RTSW of another unit below this CTSW; cross rail:
        # when another rail has one. Counted per group, never listing the (quadratic) pairs.
        by_rail: dict[int, list[str]] = defaultdict(list)
        for r in below:
            by_rail[devs[r].index].append(r)
        same: list[str] = []
        same_pairs = 0
        for members in by_rail.values():
            units: dict[int | None, int] = defaultdict(int)
            for r in members:
                units[devs[r].su] += 1
            if len(units) > 1:
                same += members
                same_pairs += len(members) ** 2 - sum(n * n for n in units.values())
        cross = below if len(by_rail) > 1 else []
        cross_pairs = len(below) ** 2 - sum(len(m) ** 2 for m in by_rail.values())
        # both classes through a CTSW usually run between the same RTSWs: then they share their positions
        # (the same ports and links), built once and judged once
        shared: dict[tuple[str, ...], list[Position]] = {}
        if same:
            out.append(_class(f"same-rail via {ctsw}", "same-rail", topo, sorted(same), same_pairs, ctsw, fabric,
                              shared))
        if cross:
            out.append(_class(f"cross-rail via {ctsw}", "cross-rail", topo, cross, cross_pairs, ctsw, fabric,
                              shared))
    # the NIC, RTSW and RTSW-CTSW hops of a cross-zone path are those of the in-zone classes through the same
    # CTSWs: judged there once, not again per ATSW (a site of 128 ATSWs would list them 128 times)
    judged = {r for pc in out if pc.ctsw is not None for r in pc.members}
    for atsw in sorted({a for c in topo.aggregation.values() for a in c}):
        spines = {c for c, up in topo.aggregation.items() if atsw in up}
        members = [r for r in rtsws if spines & set(topo.uplinks[r])]
        zones: dict[int | None, int] = defaultdict(int)
        for r in members:
            zones[devs[r].zone] += 1
        if len(zones) > 1:
            pairs = len(members) ** 2 - sum(n * n for n in zones.values())
            out.append(_cross_zone(atsw, topo, members, sorted(spines), pairs, fabric,
                                   [r for r in members if r not in judged]))
    return out


def _cross_zone(atsw: str, topo: _Topology, members: list[str], ctsws: list[str], pairs: int,
                fabric: FabricIntent, unjudged: list[str]) -> PathClass:
    """Between zones through `atsw`: the CTSWs' links to it and back, and, for the RTSWs no in-zone class
    covers (`unjudged`), their host side and uplinks to those CTSWs."""
    below = set(ctsws)
    ups = [(r, c, topo.uplinks[r][c]) for r in unjudged for c in sorted(topo.uplinks[r]) if c in below]
    agg = [(c, topo.aggregation[c][atsw]) for c in ctsws]
    pos = [
        Position("source NIC (tx)", hosts=unjudged, part="nic-tx"),
        Position("NIC -> RTSW link", hosts=unjudged, part="up-link"),
        Position("source RTSW host port (rx)", hosts=unjudged, part="rtsw-rx"),
        Position("source RTSW uplink (tx)", ports=[PortRef(r, p[0], "tx") for r, _, p in ups]),
        Position("RTSW -> CTSW link", links=[_link((r, p[0]), (c, p[1])) for r, c, p in ups]),
        Position("CTSW port from the source RTSW (rx)", ports=[PortRef(c, p[1], "rx") for _, c, p in ups]),
        Position(f"CTSW uplink to {atsw} (tx)", ports=[PortRef(c, p[0], "tx") for c, p in agg]),
        Position(f"CTSW -> {atsw} link", links=[_link((c, p[0]), (atsw, p[1])) for c, p in agg]),
        Position(f"{atsw} port from the source zone (rx)", ports=[PortRef(atsw, p[1], "rx") for _, p in agg]),
        Position(f"{atsw} port to the destination zone (tx)", ports=[PortRef(atsw, p[1], "tx") for _, p in agg]),
        Position(f"{atsw} -> CTSW link", links=[_link((atsw, p[1]), (c, p[0])) for c, p in agg]),
        Position(f"CTSW uplink from {atsw} (rx)", ports=[PortRef(c, p[0], "rx") for c, p in agg]),
        Position("CTSW port to the destination RTSW (tx)", ports=[PortRef(c, p[1], "tx") for _, c, p in ups]),
        Position("CTSW -> RTSW link", links=[_link((c, p[1]), (r, p[0])) for r, c, p in ups]),
        Position("destination RTSW uplink (rx)", ports=[PortRef(r, p[0], "rx") for r, _, p in ups]),
        Position("destination RTSW host port (tx)", hosts=unjudged, part="rtsw-tx"),
        Position("RTSW -> NIC link", hosts=unjudged, part="down-link"),
        Position("destination NIC (rx)", hosts=unjudged, part="nic-rx"),
    ]
    pos = [p for p in pos if p.ports or p.links or p.hosts]
    pc = PathClass(name=f"cross-zone via {atsw}", kind="cross-zone", positions=pos, example=[], pairs=pairs,
                   host_links=topo.host_ports, members=members, ctsw=atsw, uplinks=topo.uplinks,
                   aggregation=topo.aggregation)
    pc.example, pc.example_ports = example_path(pc, fabric)
    return pc


def _class(name: str, kind: str, topo: _Topology, members: list[str], pairs: int, ctsw: str | None,
           fabric: FabricIntent, shared: dict[tuple[str, ...], list[Position]] | None = None) -> PathClass:
    """The positions of a class over its RTSWs (each is a source and a destination); each port appears once.
    `shared`: positions already built for these members through the same CTSW, reused (never modified)."""
    key = tuple(members)
    if shared is not None and key in shared:
        pos = shared[key]
    else:
        pos = _positions(topo, members, ctsw)
        if shared is not None:
            shared[key] = pos
    pc = PathClass(name=name, kind=kind, positions=pos, example=[], pairs=pairs,   # type: ignore[arg-type]
                   host_links=topo.host_ports, members=members, ctsw=ctsw, uplinks=topo.uplinks)
    pc.example, pc.example_ports = example_path(pc, fabric)
    return pc


def _positions(topo: _Topology, members: list[str], ctsw: str | None) -> list[Position]:
    sources = dests = members
    pos = [
        Position("source NIC (tx)", hosts=sources, part="nic-tx"),
        Position("NIC -> RTSW link", hosts=sources, part="up-link"),
        Position("source RTSW host port (rx)", hosts=sources, part="rtsw-rx"),
    ]
    if ctsw is None:
        pos.append(Position("RTSW host port (tx)", hosts=dests, part="rtsw-tx"))
    else:
        up = {r: topo.uplinks[r][ctsw] for r in sorted(set(sources) | set(dests))}
        pos += [
            Position("source RTSW uplink (tx)", ports=[PortRef(r, up[r][0], "tx") for r in sources]),
            Position(f"RTSW -> {ctsw} link", links=[_link((r, up[r][0]), (ctsw, up[r][1])) for r in sources]),
            Position(f"{ctsw} port from the source RTSW (rx)", ports=[PortRef(ctsw, up[r][1], "rx") for r in sources]),
            Position(f"{ctsw} port to the destination RTSW (tx)", ports=[PortRef(ctsw, up[r][1], "tx") for r in dests]),
            Position(f"{ctsw} -> RTSW link", links=[_link((ctsw, up[r][1]), (r, up[r][0])) for r in dests]),
            Position("destination RTSW uplink (rx)", ports=[PortRef(r, up[r][0], "rx") for r in dests]),
            Position("destination RTSW host port (tx)", hosts=dests, part="rtsw-tx"),
        ]
    pos += [
        Position("RTSW -> NIC link", hosts=dests, part="down-link"),
        Position("destination NIC (rx)", hosts=dests, part="nic-rx"),
    ]
    return pos


def example_path(pc: PathClass, fabric: FabricIntent, through: str | None = None) -> tuple[list[str], list[PortRef]]:
    """One concrete path of the class (names, and its ports hop by hop), through device `through` when the class
    has a path through it (an RTSW of the class, a server below one), else from its first RTSW."""
    devs = fabric.devices
    a, nic = pc.members[0], None
    for rtsw in pc.members if through is not None else ():
        hosts = sorted(pc.host_links.get(rtsw, []))
        if through == rtsw or any(g == through for _, g, _ in hosts):
            a, nic = rtsw, next((h for h in hosts if h[1] == through), None)
            break
    if pc.kind == "cross-zone":
        return _cross_zone_example(pc, fabric, a, nic)
    if pc.ctsw is None:
        b = a
    elif pc.kind == "same-rail":
        b = next(r for r in pc.members if devs[r].index == devs[a].index and devs[r].su != devs[a].su)
    else:
        b = next(r for r in pc.members if devs[r].index != devs[a].index)
    src = nic or sorted(pc.host_links[a])[0]
    dst = next((h for h in sorted(pc.host_links[b]) if h[1] != src[1]), sorted(pc.host_links[b])[-1])
    middle = [a] if pc.ctsw is None else [a, pc.ctsw, b]
    names = [f"{src[1]}:{src[2]}", *middle, f"{dst[1]}:{dst[2]}"]
    ports = [PortRef(src[1], src[2], "tx"), PortRef(a, src[0], "rx")]
    if pc.ctsw is not None:
        (a_up, c_a), (b_up, c_b) = pc.uplinks[a][pc.ctsw], pc.uplinks[b][pc.ctsw]
        ports += [PortRef(a, a_up, "tx"), PortRef(pc.ctsw, c_a, "rx"), PortRef(pc.ctsw, c_b, "tx"),
                  PortRef(b, b_up, "rx")]
    ports += [PortRef(b, dst[0], "tx"), PortRef(dst[1], dst[2], "rx")]
    return names, ports


def _cross_zone_example(pc: PathClass, fabric: FabricIntent, a: str,
                        nic: tuple[str, str, str] | None) -> tuple[list[str], list[PortRef]]:
    """A path from RTSW `a` to the first RTSW of another zone, over one CTSW each and the class's ATSW."""
    devs, atsw = fabric.devices, pc.ctsw or ""
    b = next(r for r in pc.members if devs[r].zone != devs[a].zone)
    c_a = next(c for c in sorted(pc.uplinks[a]) if atsw in pc.aggregation.get(c, {}))
    c_b = next(c for c in sorted(pc.uplinks[b]) if atsw in pc.aggregation.get(c, {}))
    src = nic or sorted(pc.host_links[a])[0]
    dst = sorted(pc.host_links[b])[0]
    names = [f"{src[1]}:{src[2]}", a, c_a, atsw, c_b, b, f"{dst[1]}:{dst[2]}"]
    (a_up, ca_down), (b_up, cb_down) = pc.uplinks[a][c_a], pc.uplinks[b][c_b]
    (ca_up, at_a), (cb_up, at_b) = pc.aggregation[c_a][atsw], pc.aggregation[c_b][atsw]
    ports = [PortRef(src[1], src[2], "tx"), PortRef(a, src[0], "rx"), PortRef(a, a_up, "tx"),
             PortRef(c_a, ca_down, "rx"), PortRef(c_a, ca_up, "tx"), PortRef(atsw, at_a, "rx"),
             PortRef(atsw, at_b, "tx"), PortRef(c_b, cb_up, "rx"), PortRef(c_b, cb_down, "tx"),
             PortRef(b, b_up, "rx"), PortRef(b, dst[0], "tx"), PortRef(dst[1], dst[2], "rx")]
    return names, ports
