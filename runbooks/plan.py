"""Rollout plan: a canary stage, then batches that keep the fabric's capacity.

RTSW batches are whole rails: a batch takes RTSWs of one rail across scalable units (bounded by
--batch), never two rails at once, so every server loses at most one of its NICs' switches per batch.
The chunks of each rail are cut before the canary is taken out of them, so the canary never shifts
the chunking into the next rail. CTSWs go one plane at a time, never together. GPU servers' NICs follow
(nr_run.runbooks.plan_hosts): a server canary, then whole racks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from nr_run.intent.models import FabricIntent
from nr_run.runbooks.plan_hosts import server_batches


@dataclass(frozen=True)
class Stage:
    name: str
    devices: tuple[str, ...]


def batch_size(spec: str, total: int) -> int:
    """'3' -> 3; '25%' -> ceil(25% of total), at least 1."""
    spec = spec.strip()
    if spec.endswith("%"):
        pct = float(spec[:-1])
        if not 0 < pct <= 100:
            raise ValueError(f"batch percentage {spec!r} must be in (0, 100]")
        return max(1, math.ceil(total * pct / 100))
    size = int(spec)
    if size < 1:
        raise ValueError(f"batch size {spec!r} must be >= 1")
    return size


def rail_chunks(intent: FabricIntent, rtsws: list[str], size: int) -> list[list[str]]:
    """RTSWs grouped by rail (the RTSW's index within its unit), each rail cut into chunks of at most
    `size`, units in order; rails in order."""
    rails: dict[int, list[str]] = {}
    for name in rtsws:
        rails.setdefault(intent.devices[name].index, []).append(name)
    chunks: list[list[str]] = []
    for rail in sorted(rails):
        members = sorted(rails[rail], key=lambda n: (intent.devices[n].su or 0, n))
        chunks += [members[i:i + size] for i in range(0, len(members), size)]
    return chunks


def plan_rollout(intent: FabricIntent, devices: list[str], canary: int = 1, batch: str = "25%") -> list[Stage]:
    """Stages for the given switches (those with pending changes), in rollout order.

    The canary holds up to `canary` leaves, all of the first rail (so it, too, never takes two switches
    of one server), plus at most one spine. Then the leaves by rail, the spines a plane (one index across
    the zones) at a time, the aggregation switches one at a time. No stage takes every uplink of a switch
    below it: a plane that would is split into single switches."""
    devs = intent.devices
    rtsw = [n for n in devices if devs[n].tier == 1]
    ctsw = sorted((n for n in devices if devs[n].tier == 2), key=lambda n: (devs[n].index, devs[n].zone or 0, n))
    atsw = sorted((n for n in devices if devs[n].tier >= 3), key=lambda n: (devs[n].tier, devs[n].index, n))
    size = batch_size(batch, len(rtsw)) if rtsw else 1
    chunks = rail_chunks(intent, rtsw, size)
    first_rail = rail_chunks(intent, rtsw, len(rtsw) or 1)[:1]
    canary_rtsw = first_rail[0][:max(canary, 0)] if first_rail else []
    stages: list[Stage] = []
    first = tuple(canary_rtsw + ctsw[:min(canary, 1)])   # never more than one CTSW at once
    if first:
        stages.append(Stage("canary", first))
    taken = set(first)
    for chunk in chunks:
        rest = tuple(n for n in chunk if n not in taken)
        if rest:
            stages.append(Stage(f"batch {len(stages)}", rest))
    planes: dict[int, list[str]] = {}
    for name in ctsw:
        if name not in taken:
            planes.setdefault(devs[name].index, []).append(name)
    zoned = intent.shape == "multi-zone"
    for _index, members in sorted(planes.items()):
        groups = [members] if zoned and keeps_an_uplink(intent, set(members)) else [[m] for m in members]
        for group in groups:
            stages.append(Stage(f"batch {len(stages)}", tuple(group)))
    for name in atsw:
        if name not in taken:
            stages.append(Stage(f"batch {len(stages)}", (name,)))
    # the servers' NICs go last, once their switches run the new config: whole racks, --batch of the servers
    servers = [n for n in devices if intent.devices[n].tier == 0]
    for i, chunk in enumerate(server_batches(intent, servers, batch_size(batch, len(intent.servers()) or 1))):
        stages.append(Stage("server canary" if i == 0 else f"batch {len(stages)}", tuple(chunk)))
    return stages


def keeps_an_uplink(intent: FabricIntent, stage: set[str]) -> bool:
    """Whether every switch below the stage's switches keeps an uplink to a switch outside the stage."""
    devs = intent.devices
    below: dict[str, set[str]] = {}
    for name in stage:
        dev = devs[name]
        for itf in dev.interfaces:
            peer = devs.get(itf.peer_device)
            if peer is not None and 0 < peer.tier < dev.tier:
                below.setdefault(peer.name, set())
    for name in below:
        ups = {i.peer_device for i in devs[name].interfaces
               if i.peer_device in devs and devs[i.peer_device].tier > devs[name].tier}
        if ups and ups <= stage:
            return False
    return True
