"""Increases of cumulative counters across counter resets and 32-bit wraps.

A device's counters only grow; a value lower than the previous one means the counter started again: the
device rebooted, someone cleared the counters, or a 32-bit counter wrapped. A wrap is assumed only when the old
value sat in the top quarter of the 32-bit range and the new one in the bottom quarter (what a wrap looks like
between two samples seconds apart); any other decrease is a reset, after which the counter counted up from
zero, so the new value is the increase. Prometheus' rate() treats every decrease as a reset the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

WRAP32 = 1 << 32
_QUARTER = 1 << 30


def delta(old: int, new: int) -> int:
    """How much a cumulative counter grew from `old` to `new`."""
    if new >= old:
        return new - old
    if WRAP32 - _QUARTER <= old < WRAP32 and new < _QUARTER:
        return WRAP32 - old + new
    return new


def increase(values: Iterable[int]) -> int:
    """Total growth over consecutive readings of one counter."""
    total, last = 0, None
    for v in values:
        if last is not None:
            total += delta(last, v)
        last = v
    return total


def resets(values: Sequence[int]) -> int:
    """How many times the counter went down (resets and wraps) over consecutive readings."""
    return sum(1 for a, b in zip(values, values[1:], strict=False) if b < a)

