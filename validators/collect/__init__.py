"""Per-platform collection: run each needed command once per device, parse into DeviceState.

Each platform module exposes `runner(task)` (commands -> raw outputs over the host's Nornir
connection), `section_commands(section, intent)` and `apply_section(section, outputs, state, intent,
taken_at)`. Connection details stay inside those modules.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from nr_run.intent.models import DeviceIntent
from nr_run.validators.collect import eos, linux, sonic
from nr_run.validators.state import SECTIONS, DeviceState

PLATFORMS: dict[str, ModuleType] = {"eos": eos, "sonic": sonic, "linux": linux}

Runner = Callable[[list[Any]], dict[str, Any]]


def _dedupe(items: Iterable[Any]) -> list[Any]:
    seen: list[Any] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def collect_sections(run: Runner, intent: DeviceIntent, sections: Iterable[str], state: DeviceState) -> None:
    """Fill `sections` of `state`. All commands go in one batch; if the batch fails, each section is
    retried alone so one failing command only costs its own section."""
    mod = PLATFORMS[intent.platform]
    wanted = [s for s in SECTIONS if s in set(sections) and mod.section_commands(s, intent)]
    if not wanted:
        return
    batch = _dedupe(c for s in wanted for c in mod.section_commands(s, intent))
    now = time.monotonic()
    try:
        out: dict[str, Any] | None = run(batch)
    except Exception:
        out = None
    for section in wanted:
        try:
            section_out = out if out is not None else run(mod.section_commands(section, intent))
            mod.apply_section(section, section_out, state, intent, now)
        except Exception as exc:
            state.errors[section] = f"{type(exc).__name__}: {exc}"
            state.sections.discard(section)


def supported(intent: DeviceIntent, section: str) -> bool:
    return bool(PLATFORMS[intent.platform].section_commands(section, intent))


def runner_for(task: Any, intent: DeviceIntent) -> Runner:
    return PLATFORMS[intent.platform].runner(task)
