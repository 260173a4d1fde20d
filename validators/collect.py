"""Collection driver: run each needed command once per device and let the device's platform collector
parse the outputs into the normalized DeviceState.

The collector comes from the device's platform plug-in (`nr_run.platforms.registry`); commands,
connections and parsing stay inside it, so nothing here knows a platform.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from nr_run.intent.models import DeviceIntent
from nr_run.platforms import registry
from nr_run.platforms.base import Collector, CounterPorts, RouteLookup, Runner
from nr_run.platforms.state import SECTIONS, DeviceState
from nr_run.validators.helpers import distinct


def collector_for(device: DeviceIntent) -> Collector:
    """The collector of the device's platform plug-in."""
    return registry.get(device.platform).collector


def collect_sections(run: Runner, device: DeviceIntent, sections: Iterable[str], state: DeviceState,
                     prefixes: Sequence[str] | None = None) -> None:
    """Fill `sections` of `state`. All commands go in one batch; if the batch fails, each section is
    retried alone so one failing command only costs its own section. `prefixes`: the "routes" section holds
    the routes to these only, when the platform can look prefixes up (RouteLookup), else the whole table.
    `state.counter_ports`: the ports whose counters are judged, read alone where the platform can
    (CounterPorts); the other ports' counters may then be absent."""
    col = collector_for(device)
    asked = set(sections)
    lookup = col if prefixes is not None and isinstance(col, RouteLookup) else None
    commands = {s: cmds for s in SECTIONS if s in asked and (cmds := col.section_commands(s, device))}
    if lookup is not None and "routes" in commands:
        commands["routes"] = lookup.route_commands(prefixes or ())
    if state.counter_ports is not None and "counters" in commands and isinstance(col, CounterPorts):
        commands["counters"] = col.counter_commands(device, state.counter_ports)
    if not commands:
        return
    # counter commands first: the sample is stamped as the batch starts, and a rate over a short window is
    # only right when the counters were read at that moment, not after the rest of a long batch
    batch = distinct(c for s in sorted(commands, key=lambda s: s != "counters") for c in commands[s])
    now = time.monotonic()
    try:
        out: dict[Any, Any] | None = run(batch) if batch else {}
    except Exception:
        out = None
    for section, cmds in commands.items():
        try:
            section_out = out if out is not None else (run(cmds) if cmds else {})
            if section == "routes" and lookup is not None:
                lookup.apply_routes(section_out, prefixes or (), state)
            else:
                col.apply_section(section, section_out, state, device, now)
        except Exception as exc:
            state.errors[section] = f"{type(exc).__name__}: {exc}"
            state.sections.discard(section)


def supported(device: DeviceIntent, section: str) -> bool:
    """Whether the device's platform can collect `section` at all."""
    return bool(collector_for(device).section_commands(section, device))


def runner_for(task: Any, device: DeviceIntent) -> Runner:
    """The collector's command runner over the task host's Nornir connection."""
    return collector_for(device).runner(task)
