"""Prometheus exporter: the latest collection of a site as metrics (docs/metrics.md names every one).

    metrics = FabricMetrics("dc1", lossless={"rtsw1": [3], ...})
    registry = CollectorRegistry(); registry.register(metrics)
    server = serve(registry, "127.0.0.1", 9464)      # /metrics over HTTP, in a daemon thread
    metrics.update(collection, duration_s)           # after each collection (runbooks.watch)

Counters are the devices' own cumulative counters (`_total`; a device's reset shows as a Prometheus counter
reset, which rate() handles); the `_per_second` gauges are the growth between this exporter's last two
collections, computed across resets and wraps (nr_run.history.rates). Storm, link-flap and collection counts
are counted by this process since it started. Everything is served from the last collection: a scrape never
talks to a device.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator, Mapping
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from nr_run.history.model import COUNTERS, LINK_CHANGES, NO_INDEX, Collection, counter_values
from nr_run.history.rates import delta
from nr_run.validators.base import SEVERITY_ORDER

P = "nr_run_"
# history series -> (metric stem, unit divisor): frames/packets as counted, microseconds as seconds; the index
# label (priority or queue) is the series' own (nr_run.history.model.COUNTERS)
SERIES: dict[str, tuple[str, float]] = {
    "pfc_rx_frames": ("pfc_rx_pause_frames", 1.0),
    "pfc_tx_frames": ("pfc_tx_pause_frames", 1.0),
    "pfc_rx_pause_us": ("pfc_rx_pause_seconds", 1e6),
    "pfc_tx_pause_us": ("pfc_tx_pause_seconds", 1e6),
    "ecn_marked_packets": ("ecn_marked_packets", 1.0),
    "queue_dropped_packets": ("queue_dropped_packets", 1.0),
}
HELP = {
    "pfc_rx_pause_frames": "PFC pause frames received on the port for the priority",
    "pfc_tx_pause_frames": "PFC pause frames sent by the port for the priority",
    "pfc_rx_pause_seconds": "Time the port was paused by received PFC frames",
    "pfc_tx_pause_seconds": "Pause time the port asked of its peer with sent PFC frames",
    "ecn_marked_packets": "Packets ECN-marked (CE) on the egress queue",
    "queue_dropped_packets": "Packets dropped on the egress queue",
}


def _index(idx: int) -> str:
    return "all" if idx == NO_INDEX else str(idx)


class FabricMetrics(Collector):
    """A prometheus_client collector over the latest Collection of one site (thread-safe)."""

    def __init__(self, site: str, lossless: Mapping[str, list[int]] | None = None, interval_s: float = 0.0):
        self.site = site
        self.lossless = {d: set(q) for d, q in (lossless or {}).items()}
        self.interval_s = interval_s
        self._lock = threading.Lock()
        self._latest: Collection | None = None
        self._values: dict[tuple[str, str, str, int], tuple[float, int]] = {}
        self._rates: dict[tuple[str, str, str, int], float] = {}
        self._storms: dict[tuple[str, str, int], int] = {}
        self._flaps: dict[tuple[str, str], int] = {}
        self._observed: dict[tuple[str, str, str, int], str] = {}
        self._collections = {"success": 0, "failure": 0}
        self._last_time: float | None = None
        self._last_ok = False
        self._last_duration = 0.0

    def update(self, collection: Collection | None, duration_s: float, error: str = "") -> None:
        """Take a collection (None with `error`: it failed as a whole)."""
        with self._lock:
            self._last_duration = duration_s
            if collection is None:
                self._collections["failure"] += 1
                self._last_ok = False
                return
            self._collections["success"] += 1
            self._last_ok = not collection.errors
            self._last_time = collection.finished
            self._latest = collection
            for device, sample in collection.samples.items():
                t = collection.sample_times.get(device, collection.finished)
                for port, name, idx, value in counter_values(sample):
                    key = (device, port, name, idx)
                    prev = self._values.get(key)
                    if prev is not None and t > prev[0]:
                        self._rates[key] = delta(prev[1], value) / (t - prev[0])
                    self._values[key] = (t, value)
            for o in collection.observations:
                key = (o.device, o.kind, o.port, o.idx)
                old = self._observed.get(key)
                if o.kind == "storm" and o.value == "stormed" and old != "stormed":
                    self._storms[(o.device, o.port, o.idx)] = self._storms.get((o.device, o.port, o.idx), 0) + 1
                if o.kind == "link" and o.value == "down" and old == "up":
                    self._flaps[(o.device, o.port)] = self._flaps.get((o.device, o.port), 0) + 1
                self._observed[key] = o.value

    def describe(self) -> Iterator[Metric]:
        return iter(())          # families are built at each scrape: nothing to describe up front

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            yield from self._counter_families()
            yield from self._state_families()
            yield from self._check_families()
            yield from self._collection_families()

    # ------------------------------------------------------------ families

    def _counter_families(self) -> Iterator[Metric]:
        totals: dict[str, CounterMetricFamily] = {}
        rates: dict[str, GaugeMetricFamily] = {}
        lossless = CounterMetricFamily(P + "lossless_dropped_packets", "Packets dropped on a lossless egress "
                                       "queue (the queues of the device's lossless priorities)",
                                       labels=["site", "device", "port", "queue"])
        watermark = GaugeMetricFamily(P + "queue_watermark_bytes", "Peak occupancy of the egress queue since the "
                                      "device last cleared it", labels=["site", "device", "port", "queue"])
        changes = CounterMetricFamily(P + LINK_CHANGES, "Link status changes of the port since the device booted, "
                                      "as the device counts them", labels=["site", "device", "port"])
        for (device, port, name, idx), (_, value) in sorted(self._values.items()):
            if name == "queue_watermark_bytes":
                watermark.add_metric([self.site, device, port, _index(idx)], value)
                continue
            if name == LINK_CHANGES:
                changes.add_metric([self.site, device, port], value)
                continue
            (stem, div), label = SERIES[name], COUNTERS[name][1]
            if stem not in totals:
                totals[stem] = CounterMetricFamily(P + stem, HELP[stem], labels=["site", "device", "port", label])
                rates[stem] = GaugeMetricFamily(P + stem + "_per_second", HELP[stem] + ", per second between the "
                                                "last two collections", labels=["site", "device", "port", label])
            labels = [self.site, device, port, _index(idx)]
            totals[stem].add_metric(labels, value / div)
            rate = self._rates.get((device, port, name, idx))
            if rate is not None:
                rates[stem].add_metric(labels, rate / div)
            if name == "queue_dropped_packets" and idx in self.lossless.get(device, set()):
                lossless.add_metric(labels, value)
        for stem in sorted(totals):
            yield totals[stem]
            yield rates[stem]
        yield lossless
        if watermark.samples:
            yield watermark
        if changes.samples:
            yield changes

    def _state_families(self) -> Iterator[Metric]:
        storm = GaugeMetricFamily(P + "pfc_watchdog_storm_active", "1 while the PFC watchdog sees a pause storm "
                                  "on the port and priority", labels=["site", "device", "port", "priority"])
        storms = CounterMetricFamily(P + "pfc_watchdog_storms", "Pause storms the PFC watchdog began to see, "
                                     "counted by this exporter", labels=["site", "device", "port", "priority"])
        link = GaugeMetricFamily(P + "link_up", "1 when the admin-up port is operationally up",
                                 labels=["site", "device", "port"])
        flaps = CounterMetricFamily(P + "link_flaps", "Times the admin-up port went down, counted by this exporter",
                                    labels=["site", "device", "port"])
        bgp = GaugeMetricFamily(P + "bgp_session_established", "1 when the BGP session is Established",
                                labels=["site", "device", "peer"])
        for (device, kind, port, idx), value in sorted(self._observed.items()):
            if kind == "storm":
                storm.add_metric([self.site, device, port, _index(idx)], float(value == "stormed"))
                storms.add_metric([self.site, device, port, _index(idx)], self._storms.get((device, port, idx), 0))
            elif kind == "link":
                link.add_metric([self.site, device, port], float(value == "up"))
                flaps.add_metric([self.site, device, port], self._flaps.get((device, port), 0))
            else:
                bgp.add_metric([self.site, device, port], float(value == "Established"))
        yield from (storm, storms, link, flaps, bgp)

    def _check_families(self) -> Iterator[Metric]:
        """The same names and meanings as the compliance textfile (runbooks.report.formats.to_prom), so one
        dashboard reads both."""
        findings = GaugeMetricFamily(P + "check_findings", "Failed findings per check and severity in the last "
                                     "collection", labels=["site", "check", "severity"])
        passed = GaugeMetricFamily(P + "check_passed", "Passed findings per check in the last collection",
                                   labels=["site", "check"])
        failures = GaugeMetricFamily(P + "check_failures", "Failed findings per check and device in the last "
                                     "collection", labels=["site", "check", "device"])
        c = self._latest
        if c is not None:
            failed = {(check, sev): 0 for check in c.checks for sev in SEVERITY_ORDER}
            ok = dict.fromkeys(c.checks, 0)
            per_device: dict[tuple[str, str], int] = {}
            for f in c.findings:
                if f.passed:
                    ok[f.check] = ok.get(f.check, 0) + 1
                else:
                    failed[(f.check, f.severity)] = failed.get((f.check, f.severity), 0) + 1
                per_device[(f.check, f.device)] = per_device.get((f.check, f.device), 0) + (not f.passed)
            for (check, sev), n in sorted(failed.items()):
                findings.add_metric([self.site, check, sev], n)
            for check, n in sorted(ok.items()):
                passed.add_metric([self.site, check], n)
            for (check, device), n in sorted(per_device.items()):
                failures.add_metric([self.site, check, device], n)
        yield from (findings, passed, failures)

    def _collection_families(self) -> Iterator[Metric]:
        site = [self.site]
        last = GaugeMetricFamily(P + "last_collection_timestamp_seconds", "When the last successful collection "
                                 "ended (Unix time)", labels=["site"])
        if self._last_time is not None:
            last.add_metric(site, self._last_time)
        ok = GaugeMetricFamily(P + "last_collection_success", "1 when the last collection reached every device "
                               "without a collection error", labels=["site"])
        ok.add_metric(site, float(self._last_ok))
        dur = GaugeMetricFamily(P + "last_collection_duration_seconds", "How long the last collection took",
                                labels=["site"])
        dur.add_metric(site, self._last_duration)
        interval = GaugeMetricFamily(P + "collection_interval_seconds", "The configured collection interval",
                                     labels=["site"])
        interval.add_metric(site, self.interval_s)
        total = CounterMetricFamily(P + "collections", "Collections made by this exporter",
                                    labels=["site", "result"])
        for result, n in sorted(self._collections.items()):
            total.add_metric([self.site, result], n)
        device = GaugeMetricFamily(P + "device_collection_success", "1 when the device was collected without "
                                   "errors in the last collection", labels=["site", "device"])
        c = self._latest
        if c is not None:
            for name in c.devices:
                device.add_metric([self.site, name], float(name not in c.errors))
        yield from (last, ok, dur, interval, total, device)


# ------------------------------------------------------------------ HTTP

# Requests served at once (one thread each): more are answered 503 at once, never queued on a new thread
MAX_REQUESTS = 8
# A client gets this long per read or write of its socket, and REQUEST_DEADLINE_S for the whole request:
# a slow or stalled client (or many) cannot hold the exporter's threads
REQUEST_TIMEOUT_S = 5.0
REQUEST_DEADLINE_S = 10.0
_BUSY = b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    # the accept backlog: connections beyond it wait in the kernel, not in this process
    request_queue_size = 64

    def server_activate(self) -> None:
        super().server_activate()
        self._slots = threading.BoundedSemaphore(MAX_REQUESTS)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):        # every slot busy: say so now, keep no thread
            with contextlib.suppress(OSError):
                request.settimeout(1.0)
                request.sendall(_BUSY)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        # the whole request is bounded: past the deadline its socket is shut, which ends any read or write
        deadline = threading.Timer(REQUEST_DEADLINE_S, _shut, (request,))
        deadline.daemon = True
        deadline.start()
        try:
            super().process_request_thread(request, client_address)
        finally:
            deadline.cancel()
            self._slots.release()


def _shut(request: Any) -> None:
    with contextlib.suppress(OSError):
        request.shutdown(socket.SHUT_RDWR)


class _Quiet(WSGIRequestHandler):
    timeout = REQUEST_TIMEOUT_S           # StreamRequestHandler: the socket's timeout for each read and write

    def log_message(self, format: str, *args: Any) -> None:   # noqa: A002 - the base class' name
        """Scrapes are not logged (one line per scrape would fill a journal)."""


def serve(registry: CollectorRegistry, host: str, port: int) -> WSGIServer:
    """Serve `registry` at http://host:port/metrics in a daemon thread; the server's `server_port` is the port
    bound (0 asks the system for a free one). Stop it with shutdown()."""
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    server_class = type("MetricsServer", (_Server,), {"address_family": family})
    server: WSGIServer = make_server(host, port, make_wsgi_app(registry), server_class, handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, name="nr-run-metrics", daemon=True).start()
    return server
