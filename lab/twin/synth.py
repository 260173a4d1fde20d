"""Synthetic all-EOS leaf-spine labs for scale tests and benchmarks, as containerlab topology files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def leaf_spine_doc(switches: int = 1024, spines: int = 32, uplinks: int = 2) -> dict[str, Any]:
    """`spines` CTSWs and `switches - spines` RTSWs; RTSW i has `uplinks` uplinks to spines (i + k) % spines.
    Every node boots cEOS's own day 0 (no startup-config); management addresses come from a /16."""
    nodes: dict[str, dict[str, str]] = {}
    links: list[dict[str, list[str]]] = []
    used: dict[str, int] = {f"ctsw{s}": 0 for s in range(1, spines + 1)}
    for leaf in range(1, switches - spines + 1):
        name = f"rtsw{leaf}"
        used[name] = 0
        for k in range(uplinks):
            spine = f"ctsw{(leaf + k) % spines + 1}"
            used[spine] += 1
            links.append({"endpoints": [f"{spine}:eth{used[spine]}", f"{name}:eth{k + 1}"]})
    for i, name in enumerate(sorted(used)):
        nodes[name] = {"kind": "ceos", "image": "ceos:4.32.0F", "mgmt-ipv4": f"172.16.{i // 250}.{i % 250 + 2}"}
    return {"name": "synth", "mgmt": {"network": "synth-mgmt", "ipv4-subnet": "172.16.0.0/16"},
            "topology": {"nodes": nodes, "links": links}}


def leaf_spine(path: str | Path, switches: int = 1024, spines: int = 32, uplinks: int = 2) -> Path:
    """Write leaf_spine_doc() to `path` (a *.clab.yml) and return it."""
    path = Path(path)
    path.write_text(yaml.safe_dump(leaf_spine_doc(switches, spines, uplinks), sort_keys=False))
    return path
