"""One `Collector` for every platform whose collect module is three functions (runner, commands, parser)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nr_run.intent.models import DeviceIntent
from nr_run.platforms.base import Runner
from nr_run.platforms.state import DeviceState


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
