"""RDMA test planning: which GPU NIC pairs to probe for a pattern, and at what size (pure, deterministic)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nr_run.intent.models import FabricIntent
from nr_run.intent.preflight import ROCE_HEADERS

PATTERNS = ("auto", "all", "same_rail", "cross_rail", "ring", "mesh")
# `auto` pings every NIC pair while a site has at most this many (ordered, on different servers), else a ring
AUTO_ALL_MAX_PAIRS = 1024
# RDMA MTUs a RoCE NIC can negotiate (IB MTU enum), largest first
RDMA_MTUS = (4096, 2048, 1024, 512, 256)

Nic = tuple[str, str, str, int]      # device, NIC, ip, rail


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
    """`auto` -> `all` on sites with at most AUTO_ALL_MAX_PAIRS NIC pairs, else `ring`."""
    if pattern != "auto":
        return pattern
    nics = _nics(fabric)
    per_server: dict[str, int] = {}
    for n in nics:
        per_server[n[0]] = per_server.get(n[0], 0) + 1
    pairs = len(nics) ** 2 - sum(c * c for c in per_server.values())
    return "all" if pairs <= AUTO_ALL_MAX_PAIRS else "ring"


def plan_pairs(fabric: FabricIntent, pattern: str, max_pairs: int = 64) -> list[Pair]:
    """Ordered (source, destination) NIC pairs on different servers.

    all: every pair is pinged, the bandwidth test runs on the ring (each NIC sends once and receives once);
    auto: `all` up to AUTO_ALL_MAX_PAIRS pairs, else `ring`; same_rail: every NIC to every NIC of the same
    rail; cross_rail: to every NIC of another rail (through the CTSWs); ring: each NIC to the next one in
    rail-major order; mesh: all pairs, capped at max_pairs by taking an even stride so every source keeps
    some destinations. Every pattern but `all` and `auto` is capped at max_pairs.
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


def path_mtu(fabric: FabricIntent, pair: Pair) -> int:
    """The smallest IP MTU on the pair's path: both NICs, their RTSW ports and, between different RTSWs, the
    fabric ports of both RTSWs (and their CTSW peers)."""
    devices = fabric.devices
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
        mtus += [i.mtu for i in leaf.interfaces if i.name == nic.peer_port]
    if len(set(leaves)) > 1:
        for leaf_name in set(leaves):
            for itf in devices[leaf_name].interfaces:
                if itf.role != "fabric":
                    continue
                mtus.append(itf.mtu)
                spine = devices.get(itf.peer_device)
                if spine is not None:
                    mtus += [i.mtu for i in spine.interfaces if i.name == itf.peer_port]
    return min(mtus) if mtus else RDMA_MTUS[-1] + ROCE_HEADERS


def ping_size(fabric: FabricIntent, pair: Pair) -> int:
    """IP packet size of the RDMA reachability ping: the largest RoCE frame the path carries (RDMA MTU 4096
    + RoCEv2 headers on a jumbo fabric), not the sender's interface MTU (a 9000-byte NIC behind 9214-byte
    switch ports needs only 4156 bytes for RoCE)."""
    limit = path_mtu(fabric, pair)
    for rdma_mtu in RDMA_MTUS:
        if rdma_mtu + ROCE_HEADERS <= limit:
            return rdma_mtu + ROCE_HEADERS
    return limit
