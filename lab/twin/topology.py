"""Lab topology in the twin's own terms: nodes and cables, as a containerlab topology file declares them.

lab.twin.clab reads the file into these objects; nothing here knows the product's inventory or intent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Node:
    name: str
    platform: str          # "eos" | "sonic" | "linux" (from the containerlab kind)
    mgmt_address: str
    model: str = ""
    mgmt_prefix: str = ""  # "172.20.20.21/24": mgmt-ipv4 with the management subnet's length
    ports: tuple[str, ...] = ()       # cabled ports, in the platform's own names
    kind: str = ""                    # the containerlab kind as written ("ceos", "sonic-vm", ...)
    startup_config: str | None = None  # text of the node's startup-config file
    exec: tuple[str, ...] = ()        # containerlab `exec` commands, run in order once the node is up
    image: str = ""                   # the containerlab image ("vrnetlab/sonic_sonic-vs:202305"): its release
    labels: tuple[tuple[str, str], ...] = ()   # containerlab node labels (a server's `nic-driver`: mlx5 | generic)

    def label(self, key: str, default: str = "") -> str:
        return next((v for k, v in self.labels if k == key), default)


@dataclass(frozen=True)
class Cable:
    a_dev: str
    a_port: str
    b_dev: str
    b_port: str


@dataclass
class Topology:
    nodes: dict[str, Node] = field(default_factory=dict)
    links: list[Cable] = field(default_factory=list)
    site: str = "lab"

    def by_platform(self, platform: str) -> list[Node]:
        return [n for n in self.nodes.values() if n.platform == platform]


def natural_key(port: str) -> list[int | str]:
    """A port name's natural-order key: Ethernet2 before Ethernet10, Ethernet1/2 before Ethernet1/10."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", port)]


def port_sort(ports: list[str]) -> list[str]:
    """Natural order: Ethernet2 before Ethernet10."""
    return sorted(ports, key=natural_key)
