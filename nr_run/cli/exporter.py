"""`nr-run exporter`: serve the site's latest collection as Prometheus metrics (docs/metrics.md).

Collects every `--every` (as `watch` does, recording into the history too), serves /metrics from the last
collection, and stops on Ctrl-C or SIGTERM. With --json, each collection is a JSON line on stdout (the
`nr-run.watch/1` schema of `watch --json`) and the messages go to stderr. Exit codes: 0 after a stop, 1 when it
cannot listen, 3 invalid input.

/metrics is plain HTTP without authentication, and it maps the fabric (device and port names, where it hurts): it is
served on a loopback address unless `--allow-remote` says the network may read it (behind a firewall or a TLS
proxy).
"""

from __future__ import annotations

import argparse
from typing import Any

from nr_run.cli.common import EXIT_FAIL, EXIT_INVALID, EXIT_OK, UsageError, make_console
from nr_run.cli.watch import _exit_now, prepare, show_tick

LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")


def is_loopback(host: str) -> bool:
    """A host address that only this machine reaches (a loopback IP, or a name the system resolves only there)."""
    import ipaddress

    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exporter(args: argparse.Namespace) -> int:
    from prometheus_client import CollectorRegistry

    from nr_run.cli.lab import device_session
    from nr_run.runbooks.exporter import FabricMetrics, serve
    from nr_run.runbooks.history import HistoryRecorder
    from nr_run.runbooks.interrupt import Stop
    from nr_run.runbooks.watch import SOURCES, watch

    console = make_console(stderr=args.json)
    host, port = args.listen
    if not args.allow_remote and not is_loopback(host):
        raise UsageError(f"--listen {host}: not a loopback address; /metrics is plain HTTP without authentication, "
                         "add --allow-remote to serve it to the network (behind a firewall or a TLS proxy)")
    ready = prepare(args, console)
    if ready is None:
        return EXIT_INVALID
    intent, options = ready
    lossless = {d.name: sorted(d.roce.lossless_queues) for d in intent.devices.values()}
    metrics = FabricMetrics(args.site, lossless, float(args.every))
    registry = CollectorRegistry(auto_describe=False)
    registry.register(metrics)

    def on_tick(tick: Any) -> None:
        metrics.update(tick.collection, tick.duration_s, tick.error)
        show_tick(tick, args, console, verbose_from=1)      # with --json: watch's lines; the rest on stderr

    # listen only once the devices' credentials and the lab are known good (device_session refuses them first)
    with Stop() as stop, device_session(args, intent) as nr:
        try:
            server = serve(registry, host, port)
        except OSError as exc:
            console.print(f"cannot listen on {host}:{port}: {exc}", style="red", highlight=False, markup=False)
            return EXIT_FAIL
        shown = f"[{host}]" if ":" in host else host
        console.print(f"serving http://{shown}:{server.server_port}/metrics for {args.site}, collecting every "
                      f"{args.every} s; Ctrl-C stops", highlight=False, markup=False)
        recorder = HistoryRecorder(args.artifacts, args.site, args.retention)
        source = SOURCES[args.source](nr, intent, options, "exporter")
        watch(source, float(args.every), None, stop, on_tick, recorder)
        recorder.close()
        server.shutdown()
        console.print(f"stopped ({stop.reason})", highlight=False)
        _exit_now(EXIT_OK)
    return EXIT_OK
