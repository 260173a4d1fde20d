"""RDMA test planning: which GPU NIC pairs to probe for a pattern (pure, deterministic)."""

from __future__ import annotations

from dataclasses import dataclass

from nr_run.intent.models import FabricIntent

PATTERNS = ("same_rail", "cross_rail", "ring", "mesh")


@dataclass(frozen=True)
class Pair:
    src_device: str
    src_nic: str
    src_ip: str
    dst_device: str
    dst_nic: str
    dst_ip: str


def _nics(fabric: FabricIntent) -> list[tuple[str, str, str, int]]:
    return sorted((d.name, n.name, n.ip, n.rail) for d in fabric.servers() for n in d.nics)


def plan_pairs(fabric: FabricIntent, pattern: str, max_pairs: int = 64) -> list[Pair]:
    """Ordered (source, destination) NIC pairs on different servers.

    same_rail: every NIC to every NIC of the same rail; cross_rail: to every NIC of another rail
    (through the CTSWs); ring: each NIC to the next one in name order; mesh: all pairs, capped at
    max_pairs by taking an even stride so every source keeps some destinations.
    """
    if pattern not in PATTERNS:
        raise ValueError(f"unknown RDMA pattern {pattern!r}; choose from {', '.join(PATTERNS)}")
    nics = _nics(fabric)
    if pattern == "ring":
        # rail-major order puts consecutive NICs on different servers
        ring = sorted(nics, key=lambda n: (n[3], n[0], n[1]))
        cand = [(ring[i], ring[(i + 1) % len(ring)]) for i in range(len(ring))]
        cand = [(a, b) for a, b in cand if a[0] != b[0]]
    else:
        cand = [(a, b) for a in nics for b in nics if a[0] != b[0]]
        if pattern == "same_rail":
            cand = [(a, b) for a, b in cand if a[3] == b[3]]
        elif pattern == "cross_rail":
            cand = [(a, b) for a, b in cand if a[3] != b[3]]
    if len(cand) > max_pairs:
        step = len(cand) / max_pairs
        cand = [cand[int(i * step)] for i in range(max_pairs)]
    return [Pair(a[0], a[1], a[2], b[0], b[1], b[2]) for a, b in cand]
