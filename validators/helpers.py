"""Small helpers shared by checks and parsers (no platform knowledge here)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from nr_run.intent.models import DeviceIntent, Interface

T = TypeVar("T")


def distinct(items: Iterable[T]) -> list[T]:
    """Items in first-seen order, each once (by equality: commands and probes need not be hashable)."""
    out: list[T] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def short(name: str) -> str:
    """Host part of an LLDP system name ("ctsw1.lab.example" -> "ctsw1")."""
    return name.split(".")[0]


def lossless(intf: Interface, intent: DeviceIntent) -> list[int]:
    """The port's lossless priorities as compiled: none on a link the site leaves lossy (policy.cross_zone)."""
    return sorted(intf.lossless_priorities)


def fmt_list(values: list[int] | None) -> str:
    if values is None:
        return "unknown"
    return ",".join(str(v) for v in values) if values else "none"
