"""Device calls that carry the twin's added latency, counted from its per-device command logs.

The twin delays each eAPI HTTP request (EOS) by the lab's latency; one request may carry several commands,
each logged with its time. Commands of one device logged less than GAP_S apart belong to one request, since
requests of one device are at least one latency apart. SSH commands (SONiC, Linux) get no added latency on
the twin and are not counted, so a bound built on these counts is the conservative one.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

EAPI_FORMATS = {"json", "text"}
GAP_S = 0.02


def latency_calls(state: Path, since: float = 0.0) -> Counter:
    """device -> eAPI requests logged after `since` (epoch seconds)."""
    calls: Counter = Counter()
    for path in sorted((state / "logs").glob("*.log")):
        last = None
        for line in path.read_text().splitlines():
            stamp, fmt, _ = line.split("\t", 2)
            t = float(stamp)
            if fmt not in EAPI_FORMATS or t < since:
                continue
            if last is None or t - last > GAP_S:
                calls[path.stem] += 1
            last = t
    return calls
