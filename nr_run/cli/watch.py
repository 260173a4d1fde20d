"""`nr-run watch`: a collection every interval into the site's history, one line (or JSON line) per collection.

Exit codes: 0 when every collection was made and recorded (stopped by --count, Ctrl-C or SIGTERM); 1 when a
collection or its recording failed; 3 invalid input. Failed findings do not change the exit code: `report`
and the exporter say what they were.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from nr_run.cli.check import site_options
from nr_run.cli.commands import announce_lab, load_intent
from nr_run.cli.common import EXIT_FAIL, EXIT_INVALID, EXIT_OK, UsageError, make_console, verbosity

SCHEMA = "nr-run.watch/1"


def tick_dict(tick: Any, site: str) -> dict[str, Any]:
    """One collection as the JSON line `--json` prints (schema nr-run.watch/1)."""
    c, rec = tick.collection, tick.recorded
    return {
        "schema": SCHEMA, "site": site, "index": tick.index,
        "started": datetime.fromtimestamp(tick.started, UTC).isoformat(timespec="seconds"),
        "duration_s": round(tick.duration_s, 3), "interval_s": tick.interval_s, "overrun": tick.overrun,
        "error": tick.error, "devices": len(c.devices) if c else 0,
        "collection_errors": {d: dict(sorted(e.items())) for d, e in sorted(c.errors.items())} if c else {},
        "failed_findings": c.failed if c else 0,
        "recorded": None if rec is None else {"run": rec.run_id, "new_findings": rec.new_findings,
                                              "resolved_findings": rec.resolved_findings, "events": rec.events,
                                              "counter_rows": rec.samples},
        "record_error": tick.record_error,
    }


def tick_line(d: dict[str, Any]) -> str:
    head = f"{d['started']} watch {d['site']} #{d['index']}"
    if d["error"]:
        return f"{head}: collection failed after {d['duration_s']:.1f} s: {d['error']}"
    rec = d["recorded"]
    text = (f"{head}: {d['devices']} devices in {d['duration_s']:.1f} s, {d['failed_findings']} failed findings"
            + (f" ({rec['new_findings']} new, {rec['resolved_findings']} resolved), {rec['events']} events"
               if rec else ""))
    if d["collection_errors"]:
        text += f"; not collected from {', '.join(d['collection_errors'])}"
    if d["overrun"]:
        text += (f"; OVERRUN: collection took {d['duration_s']:.1f} s, longer than the {d['interval_s']:g} s "
                 "interval (the next one starts now)")
    if d["record_error"]:
        text += f"; {d['record_error']}"
    return text


def prepare(args: argparse.Namespace, console: Any) -> tuple[Any, dict[str, dict[str, Any]]] | None:
    """What watch and exporter validate before any device is contacted: the check options, --source and the
    site's intent (None: its preflight findings were printed). Returns (intent, options)."""
    from nr_run.runbooks.watch import SOURCES

    options = site_options(args)          # the catalog's thresholds, --option over them
    if args.source not in SOURCES:
        raise UsageError(f"--source {args.source!r}: one of {', '.join(sorted(SOURCES))}")
    intent, _ = load_intent(args, console)
    if intent is None:
        return None
    announce_lab(args, console)
    return intent, options


def show_tick(tick: Any, args: argparse.Namespace, console: Any, verbose_from: int) -> dict[str, Any]:
    """Print one collection: its JSON line with --json, else its line from that verbosity on, or whenever it
    failed or overran. Returns the tick as JSON."""
    d = tick_dict(tick, args.site)
    if args.json:
        sys.stdout.write(json.dumps(d, sort_keys=True) + "\n")
        sys.stdout.flush()
    elif verbosity(args) >= verbose_from or d["error"] or d["overrun"] or d["record_error"]:
        console.print(tick_line(d), highlight=False, markup=False)
    return d


@contextlib.contextmanager
def _source(args: argparse.Namespace, intent: Any, options: Any) -> Iterator[Any]:
    """The watch's collection source: --source over the site's Nornir, or with --cluster polls on Dask workers."""
    if getattr(args, "cluster", None):
        if args.source != "poll":
            raise UsageError("--cluster polls: gNMI subscriptions stay on this host (--source poll)")
        from nr_run.cli.check import cluster_checks
        from nr_run.runbooks.distributed import DistributedSource

        with cluster_checks(args, options) as run:
            yield DistributedSource(run, intent)
        return
    from nr_run.cli.lab import device_session
    from nr_run.runbooks.watch import SOURCES

    with device_session(args, intent) as nr:
        yield SOURCES[args.source](nr, intent, options, "watch")


def watch(args: argparse.Namespace) -> int:
    from nr_run.runbooks.history import HistoryRecorder, history_path
    from nr_run.runbooks.interrupt import Stop
    from nr_run.runbooks.watch import watch as watch_loop

    console = make_console(stderr=args.json)
    ready = prepare(args, console)
    if ready is None:
        return EXIT_INVALID
    intent, options = ready
    failures = 0

    def on_tick(tick: Any) -> None:
        nonlocal failures
        d = show_tick(tick, args, console, verbose_from=0)
        failures += bool(d["error"] or d["record_error"])

    recorder = HistoryRecorder(args.artifacts, args.site, args.retention)
    if verbosity(args) >= 0:
        console.print(f"watching {args.site} every {args.every} s ({args.source}) into "
                      f"{history_path(args.artifacts, args.site)}; Ctrl-C stops", highlight=False, markup=False)
    with Stop() as stop, _source(args, intent, options) as source:
        made = watch_loop(source, float(args.every), args.count, stop, on_tick, recorder)
        recorder.close()
        if stop.is_set():
            console.print(f"stopped ({stop.reason}) after {made} collection(s)", highlight=False)
            _exit_now(EXIT_FAIL if failures else EXIT_OK)
    return EXIT_FAIL if failures else EXIT_OK


def _exit_now(code: int) -> None:
    """A stop may leave device calls in flight holding worker threads: exit without waiting for them."""
    import os

    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
