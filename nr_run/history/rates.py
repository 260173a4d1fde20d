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


def rate(points: Sequence[tuple[float, int]]) -> float | None:
    """Average growth per second over (time, value) readings in time order; None under two readings."""
    if len(points) < 2 or points[-1][0] <= points[0][0]:
        return None
    return increase(v for _, v in points) / (points[-1][0] - points[0][0])


def peak_rate(points: Sequence[tuple[float, int]]) -> float | None:
    """The highest growth per second between two consecutive readings."""
    best = None
    for (t0, v0), (t1, v1) in zip(points, points[1:], strict=False):
        if t1 > t0:
            r = delta(v0, v1) / (t1 - t0)
            best = r if best is None else max(best, r)
    return best
