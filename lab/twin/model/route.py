"""Routes as the fabric model computes them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NextHop:
    ip: str | None          # None: directly connected
    interface: str


@dataclass
class Route:
    prefix: str
    protocol: str           # connected | static | bgp
    next_hops: list[NextHop]
    as_path: tuple[int, ...] = ()
    distance: int = 0


