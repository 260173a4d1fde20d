"""Rollout plan: a canary stage, then batches that keep the fabric's capacity.

RTSW batches take the same rail across scalable units rather than a whole unit (a unit's servers
keep their other rails), and are bounded by --batch; CTSWs go one plane at a time, never together.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from nr_run.intent.models import FabricIntent


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


def plan_rollout(intent: FabricIntent, devices: list[str], canary: int = 1, batch: str = "25%") -> list[Stage]:
    """Stages for the given switches (those with pending changes), in rollout order."""
    def order(name: str) -> tuple:
        d = intent.devices[name]
        return (d.index, d.su or 0, name)   # rail-major: rail 1 of every unit before rail 2

    rtsw = sorted((n for n in devices if intent.devices[n].role == "rtsw"), key=order)
    ctsw = sorted((n for n in devices if intent.devices[n].role == "ctsw"), key=order)
    stages: list[Stage] = []
    first = tuple(rtsw[:canary] + ctsw[:min(canary, 1)])   # never more than one CTSW at once
    if first:
        stages.append(Stage("canary", first))
    rest_rtsw, rest_ctsw = rtsw[canary:], ctsw[min(canary, 1):]
    size = batch_size(batch, len(rtsw)) if rtsw else 1
    for i in range(0, len(rest_rtsw), size):
        stages.append(Stage(f"batch {len(stages)}", tuple(rest_rtsw[i:i + size])))
    for name in rest_ctsw:
        stages.append(Stage(f"batch {len(stages)}", (name,)))
    return stages
