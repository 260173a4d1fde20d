"""Routing policy the twin evaluates: prefix-lists and route-maps applied to redistributed routes.

Semantics are EOS's (and FRR's, which match for what is modelled here): prefix-list entries are tried in
sequence order, the first match decides, no match denies; a route-map's entries likewise, an entry without
a match clause matches everything, no match denies; a redistribution that names a route-map which does not
exist advertises nothing.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PrefixEntry:
    seq: int
    permit: bool
    prefix: ipaddress.IPv4Network
    ge: int | None = None
    le: int | None = None

    def matches(self, net: ipaddress.IPv4Network) -> bool:
        if not net.subnet_of(self.prefix):
            return False
        if self.ge is None and self.le is None:
            return net.prefixlen == self.prefix.prefixlen
        lo = self.ge if self.ge is not None else self.prefix.prefixlen
        hi = self.le if self.le is not None else 32
        return lo <= net.prefixlen <= hi


@dataclass(frozen=True)
class RouteMapEntry:
    seq: int
    permit: bool
    prefix_lists: tuple[str, ...] = ()      # `match ip address prefix-list X` (all must match)


@dataclass
class RoutingPolicy:
    prefix_lists: dict[str, list[PrefixEntry]] = field(default_factory=dict)
    route_maps: dict[str, list[RouteMapEntry]] = field(default_factory=dict)

    def prefix_list_permits(self, name: str, net: ipaddress.IPv4Network) -> bool:
        for entry in sorted(self.prefix_lists.get(name, []), key=lambda e: e.seq):
            if entry.matches(net):
                return entry.permit
        return False

    def route_map_permits(self, name: str, prefix: str) -> bool:
        entries = self.route_maps.get(name)
        if not entries:
            return False
        net = ipaddress.ip_network(prefix, strict=False)
        for entry in sorted(entries, key=lambda e: e.seq):
            if all(self.prefix_list_permits(pl, net) for pl in entry.prefix_lists):  # type: ignore[arg-type]
                return entry.permit
        return False


def filter_redistributed(policy: RoutingPolicy | None, route_map: str | None, prefixes: set[str]) -> set[str]:
    """The prefixes a redistribution with `route_map` (None: no route-map) passes into BGP."""
    if route_map is None:
        return prefixes
    if policy is None:
        return set()
    return {p for p in prefixes if policy.route_map_permits(route_map, p)}
