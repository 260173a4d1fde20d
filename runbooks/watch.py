"""Watching a site: a collection every interval, recorded in the history, never two at once.

    source = PollSource(nr, fabric, options)           # or any CollectionSource (streaming telemetry)
    watch(source, every_s=30, count=None, stop=Stop(), on_tick=print, record=recorder)

A collection source returns a `nr_run.history.model.Collection`; SOURCES maps the `--source` names to their
factories (PollSource: the checks without the RDMA probes, through the site's Nornir connections). The next
collection starts one interval after the previous one started, or at once when a collection took longer than
the interval (a tick then says `overrun`); ticks never overlap. A stop (Ctrl-C, SIGTERM) ends the wait at once
and a collection in flight within the stop's grace period; nothing half-collected is recorded.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from nornir.core import Nornir

from nr_run.history.model import Collection, wall_time
from nr_run.intent.models import FabricIntent
from nr_run.runbooks.check import run_checks
from nr_run.runbooks.history import collection_of
from nr_run.runbooks.interrupt import Interrupted, Stop, bounded


class CollectionSource(Protocol):
    """Where a watch's collections come from."""

    name: str

    def collect(self) -> Collection: ...

    def close(self) -> None: ...


def light_checks(options: Mapping[str, Mapping[str, Any]] | None = None) -> list[str]:
    """Every check except those that need the RDMA probes (traffic between servers: too heavy to repeat)."""
    from nr_run.validators.base import select
    from nr_run.validators.probes import RdmaPairs

    return [c.name for c in select(None, options) if not any(isinstance(p, RdmaPairs) for p in c.probes())]


class PollSource:
    """Collections by polling: the light checks over the site's Nornir connections, kept open between ticks
    (a host whose collection failed gets fresh connections next time)."""

    name = "poll"

    def __init__(self, nr: Nornir, fabric: FabricIntent, options: Mapping[str, Mapping[str, Any]] | None = None,
                 kind: str = "watch", checks: list[str] | None = None):
        self.nr, self.fabric, self.options, self.kind = nr, fabric, options, kind
        self.checks = checks if checks is not None else light_checks(options)

    def collect(self) -> Collection:
        report = run_checks(self.nr, self.fabric, self.checks, self.options)
        for host in report.collection_errors:
            if host in self.nr.inventory.hosts:
                self.nr.inventory.hosts[host].close_connections()
        return collection_of(report, self.kind, self.name)

    def close(self) -> None:
        self.nr.close_connections()


class GnmiSource:
    """Counters over gNMI every tick (a switch without gNMI is polled for them, and says why); the light
    checks, which read what these gNMI paths do not carry (PFC/ECN config, BGP, LLDP, storm state), are
    polled on the first tick and every `checks_every`-th after it."""

    name = "gnmi"

    def __init__(self, nr: Nornir, fabric: FabricIntent, options: Mapping[str, Mapping[str, Any]] | None = None,
                 kind: str = "watch", checks_every: int = 10):
        self.nr, self.kind, self.checks_every, self.ticks = nr, kind, max(1, checks_every), 0
        self.poll = PollSource(nr, fabric, options, kind)
        self.sources: dict[str, str] = {}        # host -> how its counters came last time

    def collect(self) -> Collection:
        self.ticks += 1
        if (self.ticks - 1) % self.checks_every == 0:
            return self.poll.collect()
        from nr_run.platforms.telemetry import collect_counters_gnmi

        started = time.time()
        # as many gNMI sessions at once as the run allows device connections (--workers)
        workers = int(self.nr.config.runner.options.get("num_workers", 20))
        got = collect_counters_gnmi(self.nr, workers=workers)
        self.sources = dict(got.sources)
        errors = {host: {"counters": how} for host, how in got.sources.items() if how.startswith("none")}
        return Collection(self.kind, self.name, started, time.time(), samples=got.samples,
                          sample_times={h: wall_time(s.taken_at) for h, s in got.samples.items()},
                          errors=errors, devices=sorted(got.sources))

    def close(self) -> None:
        self.poll.close()


# --source name -> factory(nr, fabric, options, kind); streaming sources register here
SourceFactory = Callable[[Nornir, FabricIntent, Mapping[str, Mapping[str, Any]] | None, str], CollectionSource]
SOURCES: dict[str, SourceFactory] = {"poll": PollSource, "gnmi": GnmiSource}


@dataclass
class Tick:
    """One collection of a watch: what it found, how long it took, whether it outlasted the interval."""

    index: int
    started: float                      # wall clock
    duration_s: float
    interval_s: float
    collection: Collection | None = None
    error: str = ""                     # the collection failed as a whole
    recorded: Any = None                # what the recorder returned
    record_error: str = ""

    @property
    def overrun(self) -> bool:
        return self.duration_s > self.interval_s


Recorder = Callable[[Collection], tuple[Any, str]]


def watch(source: CollectionSource, every_s: float, count: int | None, stop: Stop,
          on_tick: Callable[[Tick], None], record: Recorder | None = None,
          clock: Callable[[], float] = time.monotonic) -> int:
    """Collect every `every_s` seconds until `count` collections were made or `stop` is set; returns the number
    of collections made. `record` stores each collection (history); `on_tick` reports it."""
    made = 0
    while not stop.is_set() and (count is None or made < count):
        t0 = clock()
        wall = time.time()
        tick = Tick(made + 1, wall, 0.0, every_s)
        try:
            tick.collection = bounded(source.collect, stop)
        except Interrupted:
            break
        except Exception as exc:
            tick.error = f"{type(exc).__name__}: {exc}"
        tick.duration_s = clock() - t0
        if tick.collection is not None and record is not None:
            tick.recorded, tick.record_error = record(tick.collection)
        made += 1
        on_tick(tick)
        if count is not None and made >= count:
            break
        wait = t0 + every_s - clock()
        if wait > 0:
            stop.wait(wait)
    return made
