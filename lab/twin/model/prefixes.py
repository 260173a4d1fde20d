"""Prefix strings as numbers, parsed once: sort keys and per-length indexes for longest-prefix matches."""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable


@functools.lru_cache(maxsize=1 << 18)
def net_key(prefix: str) -> tuple[int, int, int, int]:
    """(version, network address, prefix length, netmask) of a prefix string; sorting by
    (version, address, netmask) is the order of ipaddress networks."""
    net = ipaddress.ip_network(prefix)
    return net.version, int(net.network_address), net.prefixlen, int(net.netmask)


def sort_key(prefix: str) -> tuple[int, int, int]:
    version, address, _, mask = net_key(prefix)
    return version, address, mask


ByLength = list[tuple[int, int, dict[int, str]]]


def by_length(prefixes: Iterable[str]) -> ByLength:
    """(version, length, network address -> prefix) per prefix length present, longest first."""
    tables: dict[tuple[int, int], dict[int, str]] = {}
    for pfx in prefixes:
        version, address, length, _ = net_key(pfx)
        tables.setdefault((version, length), {}).setdefault(address, pfx)
    return [(v, n, t) for (v, n), t in sorted(tables.items(), key=lambda kv: -kv[0][1])]


def matches(index: ByLength, version: int, bits: int, value: int) -> Iterable[tuple[int, str]]:
    """(length, prefix) of every indexed prefix holding the address `value`, longest first."""
    for v, length, table in index:
        if v == version:
            pfx = table.get(value >> (bits - length) << (bits - length))
            if pfx is not None:
                yield length, pfx
