"""One `Collector` for every platform whose collect module is three functions (runner, commands, parser)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from nr_run.intent.models import DeviceIntent
from nr_run.platforms.base import Runner
from nr_run.platforms.state import DeviceState

R = TypeVar("R")


def once_per_output(parse: Callable[[Any], R]) -> Callable[[Any], R]:
    """`parse` remembering, per thread, its last output object and result: sections that read one command's
    output (a running config holds PFC and QoS) parse it once per collection. The output is matched by
    identity, so a new collection always parses anew; callers must not change the result."""
    local = threading.local()

    def parsed(output: Any) -> R:
        last = getattr(local, "last", None)
        if last is not None and last[0] is output:
            return last[1]
        result = parse(output)
        local.last = (output, result)
        return result

    parsed.__doc__ = parse.__doc__
    return parsed


@dataclass(frozen=True)
class FunctionCollector:
    """The `Collector` protocol over a platform's module-level functions."""

    run_with: Callable[[Any], Runner]
    commands: Callable[[str, DeviceIntent], Sequence[Any]]
    apply: Callable[[str, Mapping[Any, Any], DeviceState, DeviceIntent, float], None]

    def runner(self, task: Any) -> Runner:
        return self.run_with(task)

    def section_commands(self, section: str, device: DeviceIntent) -> list[Any]:
        return list(self.commands(section, device))        # a copy: callers may extend it

    def apply_section(self, section: str, outputs: Mapping[Any, Any], state: DeviceState, device: DeviceIntent,
                      taken_at: float) -> None:
        self.apply(section, outputs, state, device, taken_at)


@dataclass(frozen=True)
class LookupCollector(FunctionCollector):
    """A FunctionCollector that also reads the routes to named prefixes (the `RouteLookup` capability)."""

    lookup: Callable[[Sequence[str]], Sequence[Any]]
    apply_lookup: Callable[[Mapping[Any, Any], Sequence[str], DeviceState], None]

    def route_commands(self, prefixes: Sequence[str]) -> list[Any]:
        return list(self.lookup(prefixes))

    def apply_routes(self, outputs: Mapping[Any, Any], prefixes: Sequence[str], state: DeviceState) -> None:
        self.apply_lookup(outputs, prefixes, state)


@dataclass(frozen=True)
class PortScopedCollector(LookupCollector):
    """A LookupCollector that can also read the counters of named ports only (the `CounterPorts` capability)."""

    port_counters: Callable[[DeviceIntent, Sequence[str]], Sequence[Any]]

    def counter_commands(self, device: DeviceIntent, ports: Sequence[str]) -> list[Any]:
        return list(self.port_counters(device, ports))


class LazyCollector:
    """A platform's `Collector` (the module attribute `collector` of `module`) imported on first use, so that
    loading the plug-in (render, preflight, `inventory validate`) does not import its commands and parsers.
    Optional capabilities (RouteLookup, CounterPorts) are those of the collector it stands for."""

    def __init__(self, module: str) -> None:
        self._module = module

    def _target(self) -> Any:
        import importlib

        return importlib.import_module(self._module).collector

    def runner(self, task: Any) -> Runner:
        runner: Runner = self._target().runner(task)
        return runner

    def section_commands(self, section: str, device: DeviceIntent) -> list[Any]:
        return list(self._target().section_commands(section, device))

    def apply_section(self, section: str, outputs: Mapping[Any, Any], state: DeviceState, device: DeviceIntent,
                      taken_at: float) -> None:
        self._target().apply_section(section, outputs, state, device, taken_at)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):        # copying or unpickling reads these before __init__ has run
            raise AttributeError(name)
        return getattr(self._target(), name)
