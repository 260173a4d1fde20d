"""A training job's ports: Slurm hostlists, and node -> NIC -> RTSW port -> the RTSW's CTSW uplinks.

Minimal on purpose: the job report needs the set of (device, port) a job's traffic crosses.
"""

from __future__ import annotations

import re

from nr_run.intent.models import FabricIntent

MAX_NODES = 100_000
_RANGE = re.compile(r"(\d+)(?:-(\d+))?")


class HostlistError(ValueError):
    """A hostlist that is not Slurm syntax, or too large."""


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise HostlistError(f"unbalanced ']' in {text!r}")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if depth:
        raise HostlistError(f"unbalanced '[' in {text!r}")
    return [*parts, cur]


def expand_hostlist(text: str) -> list[str]:
    """'gpu[1-4,7],login1' -> gpu1 gpu2 gpu3 gpu4 gpu7 login1 (zero padding kept: gpu[01-03] -> gpu01...)."""
    out: list[str] = []
    for part in _split_top(text.strip()):
        part = part.strip()
        if not part:
            raise HostlistError(f"empty name in hostlist {text!r}")
        m = re.fullmatch(r"([^\[\]]*)\[([^\[\]]+)\]([^\[\]]*)", part)
        if m is None:
            if "[" in part or "]" in part:
                raise HostlistError(f"{part!r}: one bracket range per name is supported")
            out.append(part)
            continue
        prefix, ranges, suffix = m.groups()
        for r in ranges.split(","):
            rm = _RANGE.fullmatch(r.strip())
            if rm is None:
                raise HostlistError(f"{r!r} in {part!r} is not N or N-M")
            lo, hi = rm.group(1), rm.group(2) or rm.group(1)
            if int(hi) < int(lo):
                raise HostlistError(f"{r!r} in {part!r} counts down")
            if len(out) + int(hi) - int(lo) + 1 > MAX_NODES:
                raise HostlistError(f"hostlist {text[:40]!r} has more than {MAX_NODES} names")
            width = len(lo) if lo.startswith("0") and len(lo) > 1 else 0
            out += [f"{prefix}{str(n).zfill(width)}{suffix}" for n in range(int(lo), int(hi) + 1)]
    return list(dict.fromkeys(out))


def job_ports(fabric: FabricIntent, nodes: list[str]) -> tuple[set[tuple[str, str]], list[str]]:
    """The (device, port) a job on `nodes` uses: each node's NICs, the RTSW ports they plug into, and those
    RTSWs' uplinks at both ends (RTSW and CTSW); plus the nodes the fabric does not know."""
    ports: set[tuple[str, str]] = set()
    unknown = [n for n in nodes if n not in fabric.devices or fabric.devices[n].role != "gpu"]
    rtsws: set[str] = set()
    for name in nodes:
        node = fabric.devices.get(name)
        if node is None or node.role != "gpu":
            continue
        for nic in node.nics:
            ports.add((name, nic.name))
            if nic.peer_device:
                ports.add((nic.peer_device, nic.peer_port))
                rtsws.add(nic.peer_device)
    for name in sorted(rtsws):
        rtsw = fabric.devices.get(name)
        for itf in rtsw.interfaces if rtsw else []:
            peer = fabric.devices.get(itf.peer_device)
            if itf.role == "fabric" and peer is not None and peer.role == "ctsw":
                ports.add((name, itf.name))
                ports.add((itf.peer_device, itf.peer_port))
    return ports, unknown
