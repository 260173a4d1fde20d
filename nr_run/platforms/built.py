"""Structured configs built once and shared, inside a `sharing()` scope: `nr-run render` builds each switch's
structured config for the safety preflight's QoS views and renders the same dict, instead of building it twice.

Outside a scope nothing is kept (a check or a deploy does not hold every switch's structured config for its whole
run); inside one, a rendered device's entry is dropped once rendered (`take`). The dicts are never modified after
they are built (views and templates only read them), which is what makes sharing them safe.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nr_run.intent.models import DeviceIntent, FabricIntent

# None: not sharing; else (the fabric the entries belong to, device name -> structured config)
_SHARED: list[tuple[Any, dict[str, dict[str, Any]]]] | None = None


@contextmanager
def sharing() -> Iterator[None]:
    """Share structured configs between their first build and their render while the block runs."""
    global _SHARED
    outer, _SHARED = _SHARED, []
    try:
        yield
    finally:
        _SHARED = outer


def _entries(fabric: FabricIntent) -> dict[str, dict[str, Any]] | None:
    if _SHARED is None:
        return None
    if not _SHARED or _SHARED[0][0] is not fabric:
        _SHARED[:] = [(fabric, {})]
    return _SHARED[0][1]


def structured_config(builder: Any, device: DeviceIntent, fabric: FabricIntent | None) -> dict[str, Any]:
    """builder.structured_config(device, fabric), built once per device while sharing."""
    entries = _entries(fabric) if fabric is not None else None
    if entries is None:
        built: dict[str, Any] = builder.structured_config(device, fabric)
        return built
    if device.name not in entries:
        entries[device.name] = builder.structured_config(device, fabric)
    return entries[device.name]


def take(builder: Any, device: DeviceIntent, fabric: FabricIntent | None) -> dict[str, Any]:
    """The device's structured config for its render, which is its last use: it is no longer kept."""
    entries = _entries(fabric) if fabric is not None else None
    if entries is not None and device.name in entries:
        return entries.pop(device.name)
    return structured_config(builder, device, fabric) if entries is None else builder.structured_config(device, fabric)
