"""Lab topology (nodes and cables) derived from the compiled site intent."""

from __future__ import annotations

from dataclasses import dataclass, field

from nr_run.intent.models import FabricIntent


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


@dataclass
class Topology:
    nodes: dict[str, Node] = field(default_factory=dict)
    links: list[Cable] = field(default_factory=list)

    @classmethod
    def from_intent(cls, fabric: FabricIntent) -> Topology:
        links = [Cable(lk.a_device, lk.a_port, lk.b_device, lk.b_port, lk.speed_mbps, lk.cable_length_m)
                 for lk in fabric.links]
        ports: dict[str, list[str]] = {n: [] for n in fabric.devices}
        for c in links:
            ports[c.a_dev].append(c.a_port)
            ports[c.b_dev].append(c.b_port)
        nodes = {}
        for name, d in sorted(fabric.devices.items()):
            nodes[name] = Node(name=name, platform=d.platform, role=d.role, mgmt_address=d.mgmt_address,
                               model=d.model if d.platform != "linux" else "linux",
                               mgmt_prefix=d.mgmt_prefix, ports=tuple(_port_sort(ports[name])))
        return cls(nodes=nodes, links=links)

    def by_platform(self, platform: str) -> list[Node]:
        return [n for n in self.nodes.values() if n.platform == platform]


def _port_sort(ports: list[str]) -> list[str]:
    """Natural order: Ethernet2 before Ethernet10."""
    import re

    return sorted(ports, key=lambda p: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p)])
