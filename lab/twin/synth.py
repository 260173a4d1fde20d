"""Synthetic all-EOS topologies for scale tests and benchmarks (no inventory needed)."""

from __future__ import annotations

from nr_run.lab.twin.topology import Cable, Node, Topology


def leaf_spine(switches: int = 1024, spines: int = 32, uplinks: int = 2) -> Topology:
    """`spines` CTSWs and `switches - spines` RTSWs; RTSW i has `uplinks` uplinks to spines (i + k) % spines."""
    nodes: dict[str, Node] = {}
    links: list[Cable] = []
    ports: dict[str, list[str]] = {}
    for s in range(1, spines + 1):
        ports[f"ctsw{s}"] = []
    for leaf in range(1, switches - spines + 1):
        name = f"rtsw{leaf}"
        ports[name] = []
        for k in range(uplinks):
            spine = f"ctsw{(leaf + k) % spines + 1}"
            sport = f"Ethernet{len(ports[spine]) + 1}"
            lport = f"Ethernet{k + 1}"
            ports[spine].append(sport)
            ports[name].append(lport)
            links.append(Cable(spine, sport, name, lport))
    for i, (name, plist) in enumerate(sorted(ports.items())):
        mgmt = f"172.{16 + i // 65000}.{(i // 250) % 256}.{i % 250 + 1}"
        nodes[name] = Node(name, "eos", mgmt, "cEOSLab", f"{mgmt}/16", tuple(plist), kind="ceos")
    return Topology(nodes=nodes, links=links)
