"""The exporter as an operator runs it (a process serving /metrics), scraped over HTTP while the dc1 twin has
an injected PFC storm: every metric docs/metrics.md documents as always present is served, and the storm's
values are the ones it implies."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from nr_run.lab.twin.faults import DROPS_PER_S, ECN_MARKS_PER_S, PFC_STORM_FRAMES_PER_S
from tests.conftest import REPO
from tests.twin_site import TwinSite, wait_until

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def documented() -> tuple[set[str], set[str]]:
    """(always-present, conditional) metric names in docs/metrics.md's tables."""
    always, conditional = set(), set()
    for line in (REPO / "docs" / "metrics.md").read_text().splitlines():
        m = re.match(r"\|\s*`(nr_run_[a-z0-9_]+)`\s*\|", line)
        if m:
            (conditional if "only where" in line else always).add(m.group(1))
    return always, conditional


def scrape(url: str) -> tuple[Samples, set[str]]:
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    samples: Samples = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples, {name for name, _ in samples}


def at(device: str, port: str, **labels: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted({"site": "dc1", "device": device, "port": port, **labels}.items()))


@pytest.fixture
def exporter(deployed_twin: TwinSite, tmp_path: Path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "nr_run.cli.main", "exporter", "--site", "dc1", "--lab", "--listen", "127.0.0.1:0",
         "--every", "1s", "--artifacts", str(tmp_path / "art"), "--option", "counters.interval_s=0.2"],
        cwd=REPO, env={**os.environ, "NR_RUN_LAB_STATE_DIR": str(deployed_twin.state), "COLUMNS": "200"},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True).start()
    try:
        deadline = time.monotonic() + 60
        url = None
        while url is None and time.monotonic() < deadline and proc.poll() is None:
            url = next((m.group(1) for line in lines if (m := re.search(r"serving (http://\S+/metrics)", line))),
                       None)
            time.sleep(0.05)
        assert url, f"exporter did not start: {lines}"
        yield url, proc, lines
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_scrape_during_a_pfc_storm_congestion_and_drops(deployed_twin: TwinSite, exporter) -> None:
    url, proc, lines = exporter
    deployed_twin.fault("pfc_storm", device="rtsw3", port="Ethernet16", priority=3)        # SONiC
    # EOS, ECN queue; a standing queue far above the maximum ECN threshold: every packet is marked
    deployed_twin.fault("congestion", device="rtsw1", port="Ethernet1", queue=3, depth=100_000_000)
    deployed_twin.fault("lossless_drops", device="rtsw2", port="Ethernet2", queue=3)
    faulted_at = time.time()
    scraped: list[tuple[dict, set]] = []

    def collected() -> bool:    # two collections that both saw the faults: the rates are over the faults alone
        scraped[:] = [scrape(url)]
        samples = scraped[0][0]
        stamp = samples.get(("nr_run_last_collection_timestamp_seconds", (("site", "dc1"),)), 0)
        ok = samples.get(("nr_run_collections_total", (("result", "success"), ("site", "dc1"))), 0)
        rate = samples.get(("nr_run_pfc_rx_pause_frames_per_second", at("rtsw3", "Ethernet16", priority="3")), 0)
        return ok >= 3 and stamp > faulted_at + 3 and rate > 0

    wait_until(collected, timeout=60, step=0.3, what=lambda: f"no collection after the fault: {lines}")
    samples, names = scraped[0]

    always, conditional = documented()
    assert always and not (names - always - conditional), f"undocumented: {sorted(names - always - conditional)}"
    assert always <= names, f"documented but not served: {sorted(always - names)}"

    storm = at("rtsw3", "Ethernet16", priority="3")
    assert samples[("nr_run_pfc_rx_pause_frames_total", storm)] > 0
    assert samples[("nr_run_pfc_rx_pause_frames_per_second", storm)] == pytest.approx(PFC_STORM_FRAMES_PER_S, rel=0.2)
    assert samples[("nr_run_pfc_watchdog_storm_active", storm)] == 1
    assert samples[("nr_run_pfc_watchdog_storms_total", storm)] == 1
    quiet = at("rtsw3", "Ethernet24", priority="3")
    assert samples[("nr_run_pfc_rx_pause_frames_total", quiet)] == 0
    assert samples[("nr_run_pfc_watchdog_storm_active", quiet)] == 0
    # the watchdog drops the stormed lossless queue
    assert samples[("nr_run_lossless_dropped_packets_total", at("rtsw3", "Ethernet16", queue="3"))] > 0
    marks = at("rtsw1", "Ethernet1", queue="3")
    assert samples[("nr_run_ecn_marked_packets_per_second", marks)] == pytest.approx(ECN_MARKS_PER_S, rel=0.2)
    assert samples[("nr_run_ecn_marked_packets_total", marks)] > 0
    assert samples[("nr_run_queue_dropped_packets_total", marks)] == 0             # ECN marks instead of drops
    drops = at("rtsw2", "Ethernet2", queue="3")
    assert samples[("nr_run_queue_dropped_packets_per_second", drops)] == pytest.approx(DROPS_PER_S, rel=0.2)
    assert samples[("nr_run_lossless_dropped_packets_total", drops)] == samples[("nr_run_queue_dropped_packets_total",
                                                                                 drops)] > 0
    assert samples[("nr_run_check_findings", (("check", "pfc"), ("severity", "error"), ("site", "dc1")))] >= 1
    assert samples[("nr_run_check_findings", (("check", "bgp"), ("severity", "error"), ("site", "dc1")))] == 0
    assert samples[("nr_run_check_failures", (("check", "pfc"), ("device", "rtsw3"), ("site", "dc1")))] >= 1
    assert samples[("nr_run_check_failures", (("check", "pfc"), ("device", "rtsw1"), ("site", "dc1")))] == 0
    assert samples[("nr_run_check_passed", (("check", "bgp"), ("site", "dc1")))] > 0
    assert samples[("nr_run_last_collection_success", (("site", "dc1"),))] == 1
    assert samples[("nr_run_last_collection_timestamp_seconds", (("site", "dc1"),))] > faulted_at

    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=15) == 0
    assert any("stopped (SIGTERM)" in line for line in lines)
