"""RDMA test planning: which GPU NIC pairs to probe for a pattern, and at what size (pure, deterministic)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from nr_run.intent.models import FabricIntent, Interface
from nr_run.intent.preflight import ROCE_HEADERS

PATTERNS = ("auto", "all", "cover", "same_rail", "cross_rail", "ring", "mesh")
# `auto` pings every NIC pair while a site has at most this many (ordered, on different servers), else it
# probes the covering design (`cover`)
AUTO_ALL_MAX_PAIRS = 1024
# RDMA MTUs a RoCE NIC can negotiate (IB MTU enum), largest first
RDMA_MTUS = (4096, 2048, 1024, 512, 256)

Nic = tuple[str, str, str, int]      # device, NIC, ip, rail
T = TypeVar("T")


@dataclass(frozen=True)
class Pair:
    src_device: str
    src_nic: str
    src_ip: str
    dst_device: str
    dst_nic: str
    dst_ip: str
    bandwidth: bool = True       # also run the bandwidth test on this pair (pings cover every pair)


def _nics(fabric: FabricIntent) -> list[Nic]:
    return sorted((d.name, n.name, n.ip, n.rail) for d in fabric.servers() for n in d.nics)


def _routed(fabric: FabricIntent) -> Callable[[Nic, Nic], bool]:
    """Whether the fabric has a path between two NICs: in a star (no tier above the switches) only NICs on one
    switch reach each other; traffic between switches goes over the servers' GPU interconnect."""
    if fabric.shape != "star":
        return lambda a, b: True
    switch = {(d.name, n.name): n.peer_device for d in fabric.servers() for n in d.nics}
    return lambda a, b: switch[(a[0], a[1])] == switch[(b[0], b[1])]


def _ring(nics: list[Nic]) -> list[tuple[Nic, Nic]]:
    # rail-major order puts consecutive NICs on different servers
    ring = sorted(nics, key=lambda n: (n[3], n[0], n[1]))
    cand = [(ring[i], ring[(i + 1) % len(ring)]) for i in range(len(ring))]
    return [(a, b) for a, b in cand if a[0] != b[0]]


def resolve_pattern(fabric: FabricIntent, pattern: str) -> str:
    """`auto` -> `all` on sites with at most AUTO_ALL_MAX_PAIRS NIC pairs, else `cover`."""
    if pattern != "auto":
        return pattern
    nics = _nics(fabric)
    per_server: dict[str, int] = {}
    for n in nics:
        per_server[n[0]] = per_server.get(n[0], 0) + 1
    pairs = len(nics) ** 2 - sum(c * c for c in per_server.values())
    return "all" if pairs <= AUTO_ALL_MAX_PAIRS else "cover"


# plans of the last few fabrics: every server's check evaluation and the probe ask for the same plan
_PLANS: dict[tuple[int, str, int], tuple[FabricIntent, list[Pair], dict[str, list[Pair]]]] = {}
_PLANS_KEPT = 8


def _plan(fabric: FabricIntent, pattern: str, max_pairs: int) -> tuple[list[Pair], dict[str, list[Pair]]]:
    """The plan and its pairs by source device, computed once per fabric object (a pure function of it)."""
    key = (id(fabric), pattern, max_pairs)
    hit = _PLANS.get(key)
    if hit is not None and hit[0] is fabric:
        return hit[1], hit[2]
    plan = _plan_pairs(fabric, pattern, max_pairs)
    by_src: dict[str, list[Pair]] = {}
    for p in plan:
        by_src.setdefault(p.src_device, []).append(p)
    if len(_PLANS) >= _PLANS_KEPT:
        _PLANS.pop(next(iter(_PLANS)))
    _PLANS[key] = (fabric, plan, by_src)
    return plan, by_src


def plan_pairs(fabric: FabricIntent, pattern: str, max_pairs: int = 64) -> list[Pair]:
    """`_plan_pairs`, remembered per fabric object (the plan is a pure function of it)."""
    return list(_plan(fabric, pattern, max_pairs)[0])


def pairs_from(fabric: FabricIntent, device: str, pattern: str, max_pairs: int = 64) -> list[Pair]:
    """The planned pairs whose source is `device`, in plan order: what one server sends, found without going
    through the whole plan (which grows with the site) once per server."""
    return list(_plan(fabric, pattern, max_pairs)[1].get(device, ()))


def _plan_pairs(fabric: FabricIntent, pattern: str, max_pairs: int = 64) -> list[Pair]:
    """Ordered (source, destination) NIC pairs on different servers.

    all: every pair is pinged, the bandwidth test runs on the ring (each NIC sends once and receives once);
    auto: `all` up to AUTO_ALL_MAX_PAIRS pairs, else `cover`; cover: the covering design (cover_pairs), ping and
    bandwidth on every pair, never capped (a cap would break the cover); same_rail: every NIC to every NIC of
    the same rail; cross_rail: to every NIC of another rail (through the CTSWs); ring: each NIC to the next one
    in rail-major order; mesh: all pairs, capped at max_pairs by taking an even stride so every source keeps
    some destinations. same_rail, cross_rail, ring and mesh are capped at max_pairs.
    """
    if pattern not in PATTERNS:
        raise ValueError(f"unknown RDMA pattern {pattern!r}; choose from {', '.join(PATTERNS)}")
    pattern = resolve_pattern(fabric, pattern)
    nics = _nics(fabric)
    routed = _routed(fabric)
    if pattern == "all":
        ring = set(_ring(nics))
        return [Pair(a[0], a[1], a[2], b[0], b[1], b[2], (a, b) in ring)
                for a in nics for b in nics if a[0] != b[0] and routed(a, b)]
    if pattern == "cover":
        return [Pair(a[0], a[1], a[2], b[0], b[1], b[2]) for a, b in cover_pairs(fabric) if routed(a, b)]
    if pattern == "ring":
        cand = [(a, b) for a, b in _ring(nics) if routed(a, b)]
    else:
        cand = [(a, b) for a in nics for b in nics if a[0] != b[0] and routed(a, b)]
        if pattern == "same_rail":
            cand = [(a, b) for a, b in cand if a[3] == b[3]]
        elif pattern == "cross_rail":
            cand = [(a, b) for a, b in cand if a[3] != b[3]]
    if len(cand) > max_pairs:
        step = len(cand) / max_pairs
        cand = [cand[int(i * step)] for i in range(max_pairs)]
    return [Pair(a[0], a[1], a[2], b[0], b[1], b[2]) for a, b in cand]


# ---------------------------------------------------------------- covering design

def _leaves(fabric: FabricIntent) -> dict[str, list[Nic]]:
    """RTSW -> the NICs cabled to it, sorted."""
    out: dict[str, list[Nic]] = defaultdict(list)
    for d in fabric.servers():
        for n in d.nics:
            if n.peer_device in fabric.devices:
                out[n.peer_device].append((d.name, n.name, n.ip, n.rail))
    return {leaf: sorted(nics) for leaf, nics in sorted(out.items())}


def _uplinks(fabric: FabricIntent, leaf: str) -> set[str]:
    return {i.peer_device for i in fabric.devices[leaf].interfaces if i.role == "fabric"}


def leaf_kind(fabric: FabricIntent, a: str, b: str) -> str:
    """The path kind between two RTSWs, as the path classes (analysis.paths) name them: same-rtsw, same-rail
    (same RTSW index in another unit), cross-rail, or cross-zone (RTSWs of different zones, via an ATSW)."""
    if a == b:
        return "same-rtsw"
    da, db = fabric.devices[a], fabric.devices[b]
    if da.zone != db.zone:
        return "cross-zone"
    return "same-rail" if da.index == db.index and da.su != db.su else "cross-rail"


def _branches(fabric: FabricIntent, leaf: str, kind: str) -> set[str]:
    """The ECMP branches a path of `kind` from `leaf` can take: its CTSWs, or across zones their ATSWs."""
    spines = _uplinks(fabric, leaf)
    if kind != "cross-zone":
        return spines
    return {i.peer_device for s in spines for i in fabric.devices[s].interfaces
            if i.role == "fabric" and fabric.devices[i.peer_device].tier > fabric.devices[s].tier}


def _rotate(items: list[T], by: int) -> list[T]:
    return items[by % len(items):] + items[:by % len(items)] if items else []


def _interleave(*lists: list[str]) -> list[str]:
    out: list[str] = []
    for k in range(max((len(x) for x in lists), default=0)):
        out += [x[k] for x in lists if k < len(x)]
    return out


def cover_pairs(fabric: FabricIntent) -> list[tuple[Nic, Nic]]:
    """A covering design of NIC pairs (deterministic): every RTSW sends once to another server below itself
    (same-rtsw), then to max(2, its uplinks) other RTSWs, alternating same-rail and cross-rail destinations
    rotated by its position so every RTSW also receives; then one pair is added for each path class of
    analysis.paths (kind x CTSW branch) and each rail the pairs above miss (a partial spine: an RTSW pair
    below that CTSW). Size: about RTSWs x (1 + max(2, uplinks)) pairs, plus the repairs; e.g. 64 RTSWs with 8
    uplinks: 576 pairs, where `all` would be 261,632."""
    from nr_run.analysis.paths import path_classes

    leaves = _leaves(fabric)
    names = list(leaves)
    pairs: list[tuple[Nic, Nic]] = []
    seen: set[tuple[Nic, Nic]] = set()

    def add(src: str, dst: str, k: int) -> bool:
        a = leaves[src][k % len(leaves[src])]
        others = _rotate([n for n in leaves[dst] if n[0] != a[0]], k)
        if not others:
            return False
        for b in others:
            if (a, b) not in seen:
                seen.add((a, b))
                pairs.append((a, b))
                return True
        return False

    for i, leaf in enumerate(names):
        add(leaf, leaf, 0)                   # below one RTSW: no CTSW hop (skipped with one server)
        same = [x for x in names if leaf_kind(fabric, leaf, x) == "same-rail"]
        cross = [x for x in names if leaf_kind(fabric, leaf, x) == "cross-rail"]
        for k, dst in enumerate(_interleave(_rotate(same, i), _rotate(cross, i))[:max(2, len(_uplinks(fabric, leaf)))]):
            add(leaf, dst, k + 1)
    leaf_of = {(n[0], n[1]): leaf for leaf, nics in leaves.items() for n in nics}
    for pc in path_classes(fabric):
        if not _covers(fabric, pc, pairs, leaf_of):
            members = [m for m in pc.members if m in leaves]
            for a in members:
                dsts = [b for b in members if leaf_kind(fabric, a, b) == pc.kind]
                if any(add(a, b, 0) for b in dsts):
                    break
    for rail in sorted({n[3] for nics in leaves.values() for n in nics}):
        if not any(rail in (a[3], b[3]) for a, b in pairs):
            src = next(leaf for leaf, nics in leaves.items() if any(n[3] == rail for n in nics))
            any(add(src, dst, 0) for dst in names if dst != src)
    return pairs


def _covers(fabric: FabricIntent, pc: Any, pairs: Iterable[tuple[Nic, Nic]], leaf_of: dict[tuple[str, str], str]) -> bool:
    """Whether some pair runs between members of the path class, of its kind, both below its CTSW branch."""
    members = set(pc.members)
    for a, b in pairs:
        la, lb = leaf_of.get((a[0], a[1])), leaf_of.get((b[0], b[1]))
        if la in members and lb in members and la is not None and lb is not None \
                and leaf_kind(fabric, la, lb) == pc.kind \
                and (pc.ctsw is None or pc.ctsw in _branches(fabric, la, pc.kind) & _branches(fabric, lb, pc.kind)):
            return True
    return False


def coverage(fabric: FabricIntent, pairs: list[Pair]) -> dict[str, Any]:
    """What a pair set exercises: the path classes (analysis.paths) with a pair of theirs, the rails, and the
    RTSWs sending and receiving across a CTSW; with the ones missed, by name."""
    from nr_run.analysis.paths import path_classes

    leaves = _leaves(fabric)
    leaf_of = {(n[0], n[1]): leaf for leaf, nics in leaves.items() for n in nics}
    ends = [((p.src_device, p.src_nic, p.src_ip, 0), (p.dst_device, p.dst_nic, p.dst_ip, 0)) for p in pairs]
    classes = path_classes(fabric)
    missed = [pc.name for pc in classes if not _covers(fabric, pc, ends, leaf_of)]
    rail_of = {(n[0], n[1]): n[3] for nics in leaves.values() for n in nics}
    rails = sorted(set(rail_of.values()))
    used = {rail_of.get((p.src_device, p.src_nic)) for p in pairs} | {rail_of.get((p.dst_device, p.dst_nic)) for p in pairs}
    return {"pairs": len(pairs), "path_classes": len(classes), "path_classes_covered": len(classes) - len(missed),
            "path_classes_missed": missed, "rails": len(rails),
            "rails_missed": [r for r in rails if r not in used]}


# the port index of the fabric last asked about: path_mtu and path_rate_mbps read the far end of every uplink of a
# pair's RTSWs, and a CTSW's port list grows with the site
_PORTS: tuple[FabricIntent, dict[tuple[str, str], Interface], dict[str, list[int]]] | None = None


def _port_index(fabric: FabricIntent) -> tuple[dict[tuple[str, str], Interface], dict[str, list[int]]]:
    """((device, port) -> its intended interface, switch -> the speeds of its links to a higher tier)."""
    global _PORTS
    if _PORTS is None or _PORTS[0] is not fabric:
        devices = fabric.devices
        ports = {(d.name, i.name): i for d in devices.values() for i in d.interfaces}
        up = {d.name: [i.speed_mbps for i in d.interfaces
                       if i.peer_device in devices and devices[i.peer_device].tier > d.tier]
              for d in devices.values()}
        _PORTS = fabric, ports, up
    return _PORTS[1], _PORTS[2]


def path_mtu(fabric: FabricIntent, pair: Pair) -> int:
    """The smallest IP MTU on the pair's path: both NICs, their RTSW ports and, between different RTSWs, the
    fabric ports of both RTSWs (and their CTSW peers)."""
    devices = fabric.devices
    ports, _ = _port_index(fabric)
    mtus: list[int] = []
    leaves: list[str] = []
    for device, nic_name in ((pair.src_device, pair.src_nic), (pair.dst_device, pair.dst_nic)):
        nic = next((n for n in devices[device].nics if n.name == nic_name), None)
        if nic is None:
            continue
        mtus.append(nic.mtu)
        leaf = devices.get(nic.peer_device)
        if leaf is None:
            continue
        leaves.append(leaf.name)
        if (near := ports.get((leaf.name, nic.peer_port))) is not None:
            mtus.append(near.mtu)
    if len(set(leaves)) > 1:
        for leaf_name in set(leaves):
            for itf in devices[leaf_name].interfaces:
                if itf.role != "fabric":
                    continue
                mtus.append(itf.mtu)
                if itf.peer_device in devices and (far := ports.get((itf.peer_device, itf.peer_port))) is not None:
                    mtus.append(far.mtu)
    return min(mtus) if mtus else RDMA_MTUS[-1] + ROCE_HEADERS


def path_rate_mbps(fabric: FabricIntent, pair: Pair) -> int:
    """The most one QP of the pair can carry: the slower NIC and, between RTSWs, the slowest link a hashed path
    may take (the RTSWs' uplinks; across zones also their CTSWs' links to the ATSWs). 0 when no NIC is known."""
    devices = fabric.devices
    _, up = _port_index(fabric)
    rates: list[int] = []
    leaves: list[str] = []
    for device, nic_name in ((pair.src_device, pair.src_nic), (pair.dst_device, pair.dst_nic)):
        nic = next((n for n in devices[device].nics if n.name == nic_name), None) if device in devices else None
        if nic is None:
            continue
        rates.append(nic.speed_mbps)
        if nic.peer_device in devices:
            leaves.append(nic.peer_device)
    if len(set(leaves)) > 1:
        zones = {devices[leaf].zone for leaf in leaves}
        for leaf in set(leaves):
            for itf in devices[leaf].interfaces:
                if itf.role != "fabric":
                    continue
                rates.append(itf.speed_mbps)
                if itf.peer_device in devices and len(zones) > 1:
                    rates += up.get(itf.peer_device, [])
    return min(rates) if rates else 0


def ping_size(fabric: FabricIntent, pair: Pair) -> int:
    """IP packet size of the RDMA reachability ping: the largest RoCE frame the path carries (RDMA MTU 4096
    + RoCEv2 headers on a jumbo fabric), not the sender's interface MTU (a 9000-byte NIC behind 9214-byte
    switch ports needs only 4156 bytes for RoCE)."""
    limit = path_mtu(fabric, pair)
    for rdma_mtu in RDMA_MTUS:
        if rdma_mtu + ROCE_HEADERS <= limit:
            return rdma_mtu + ROCE_HEADERS
    return limit
