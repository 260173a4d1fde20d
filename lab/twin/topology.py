"""Lab topology in the twin's own terms: nodes, cables and the GPU servers' NIC setup (plain data).

The twin never sees the product's intent objects; intent_adapter.py is the one place that converts them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Node:
    name: str
    platform: str          # "eos" | "sonic" | "linux"
    role: str              # "ctsw" | "rtsw" | "gpu"
    mgmt_address: str
    model: str = ""
    mgmt_prefix: str = ""  # "172.20.20.21/24"
    ports: tuple[str, ...] = ()


@dataclass(frozen=True)
class Cable:
    a_dev: str
    a_port: str
    b_dev: str
    b_port: str
    speed_mbps: int
    cable_length_m: int


@dataclass(frozen=True)
class HostNic:
    """A GPU server's RoCE NIC as the server's own setup leaves it (servers are not configured by nr-run)."""

    name: str
    address: str                       # "10.0.0.1/31"
    ip: str                            # "10.0.0.1"
    gateway: str
    mtu: int
    speed_mbps: int
    lossless_priorities: tuple[int, ...] = ()
    trust: str = "dscp"
    routes: tuple[str, ...] = ()       # prefixes reached through this NIC's rail gateway


@dataclass(frozen=True)
class HostSpec:
    """What a twin GPU server boots with: its NICs and the DSCP->priority entries of its `dcb app` table."""

    name: str
    mgmt_address: str
    nics: tuple[HostNic, ...] = ()
    dscp_to_prio: tuple[tuple[int, int], ...] = ()


@dataclass
class Topology:
    nodes: dict[str, Node] = field(default_factory=dict)
    links: list[Cable] = field(default_factory=list)
    hosts: dict[str, HostSpec] = field(default_factory=dict)   # linux nodes' NIC setup
    site: str = "lab"

    def by_platform(self, platform: str) -> list[Node]:
        return [n for n in self.nodes.values() if n.platform == platform]


def port_sort(ports: list[str]) -> list[str]:
    """Natural order: Ethernet2 before Ethernet10."""
    return sorted(ports, key=lambda p: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p)])
