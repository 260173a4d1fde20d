"""`nr-run exporter`: serve the site's latest collection as Prometheus metrics (docs/metrics.md).

Collects every `--every` (as `watch` does, recording into the history too), serves /metrics from the last
collection, and stops on Ctrl-C or SIGTERM. With --json, each collection is a JSON line on stdout (the
`nr-run.watch/1` schema of `watch --json`) and the messages go to stderr. Exit codes: 0 after a stop, 1 when it cannot listen, 3 invalid input.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from nr_run.cli.check import parse_options
from nr_run.cli.commands import announce_lab, load_intent
from nr_run.cli.common import EXIT_FAIL, EXIT_INVALID, EXIT_OK, UsageError, make_console, verbosity
from nr_run.cli.watch import _exit_now, tick_dict, tick_line


def exporter(args: argparse.Namespace) -> int:
    from prometheus_client import CollectorRegistry

    from nr_run.cli.lab import device_session
    from nr_run.runbooks.exporter import FabricMetrics, serve
    from nr_run.runbooks.history import HistoryRecorder
    from nr_run.runbooks.interrupt import Stop
    from nr_run.runbooks.watch import SOURCES, watch

    console = make_console(stderr=args.json)
    options = parse_options(args.options)
    if args.source not in SOURCES:
        raise UsageError(f"--source {args.source!r}: one of {', '.join(sorted(SOURCES))}")
    intent, _ = load_intent(args, console)
    if intent is None:
        return EXIT_INVALID
    announce_lab(args, console)
    lossless = {d.name: sorted(d.roce.lossless_queues) for d in intent.devices.values()}
    metrics = FabricMetrics(args.site, lossless, float(args.every))
    registry = CollectorRegistry(auto_describe=False)
    registry.register(metrics)
    host, port = args.listen
    try:
        server = serve(registry, host, port)
    except OSError as exc:
        console.print(f"[red]cannot listen on {host}:{port}: {exc}[/]")
        return EXIT_FAIL
    shown = f"[{host}]" if ":" in host else host
    console.print(f"serving http://{shown}:{server.server_port}/metrics for {args.site}, collecting every "
                  f"{args.every} s; Ctrl-C stops", highlight=False)
    recorder = HistoryRecorder(args.artifacts, args.site, args.retention)

    def on_tick(tick: Any) -> None:
        metrics.update(tick.collection, tick.duration_s, tick.error)
        d = tick_dict(tick, args.site)
        if args.json:       # the collections as `watch --json` prints them; the rest goes to stderr
            sys.stdout.write(json.dumps(d, sort_keys=True) + "\n")
            sys.stdout.flush()
        elif verbosity(args) >= 1 or d["error"] or d["overrun"] or d["record_error"]:
            console.print(tick_line(d), highlight=False, markup=False)

    with Stop() as stop, device_session(args) as nr:
        source = SOURCES[args.source](nr, intent, options, "exporter")
        watch(source, float(args.every), None, stop, on_tick, recorder)
        recorder.close()
        server.shutdown()
        console.print(f"stopped ({stop.reason})", highlight=False)
        _exit_now(EXIT_OK)
    return EXIT_OK
