"""Device calls that carry the twin's added latency, counted from its per-device command logs.

The twin delays each eAPI HTTP request (EOS) and each SSH command (exec channel or shell line: SONiC, Linux)
by the lab's latency; one eAPI request may carry several commands, each logged with its time. Commands of one
device logged less than GAP_S apart belong to one call, since calls of one device are at least one latency
apart (exec channels started together run together, so they count once too). By default only eAPI requests are
counted, the conservative bound; pass SSH_FORMATS to count SSH commands as well.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

EAPI_FORMATS = {"json", "text"}
SSH_FORMATS = {"exec", "shell"}
GAP_S = 0.02


def latency_calls(state: Path, since: float = 0.0, formats: set[str] = EAPI_FORMATS, gap_s: float = GAP_S,
                  from_start: bool = False) -> Counter:
    """device -> calls of the given log kinds (default: eAPI requests) logged after `since` (epoch seconds).
    `gap_s`: commands closer than this to the one before belong to one call. `from_start`: closer than this to the
    call's first command instead; with `gap_s` = the latency this counts the device's calls that must have been
    sequential (one comes at least a latency after the one before), where a busy twin spreads the channels a
    client opened together over more than GAP_S."""
    calls: Counter = Counter()
    for path in sorted((state / "logs").glob("*.log")):
        last = None
        for line in path.read_text().splitlines():
            stamp, fmt, _ = line.split("\t", 2)
            t = float(stamp)
            if fmt not in formats or t < since:
                continue
            if last is None or t - last > gap_s:
                calls[path.stem] += 1
                last = t
            elif not from_start:
                last = t
    return calls
