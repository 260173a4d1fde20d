"""Every long-running command ends within seconds on SIGTERM or SIGINT, at several points of its work, as a
real process against the twin (compliance --every, watch, exporter, check, deploy); the exporter bounds its
threads and each request's time however many slow clients hold connections. "Within 5 s" is a bounded wait
for the process to exit (proc.wait(timeout=5)), not a measured time."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from nr_run.runbooks.exporter import MAX_REQUESTS, REQUEST_DEADLINE_S
from tests.conftest import REPO
from tests.twin_site import FAST_CHECKS, TwinSite, wait_until

FAST = [f"--option={c}.{k}={v}" for c, opts in FAST_CHECKS.items() for k, v in opts.items()]
# Only a guard against a hang, not a speed budget: how long in-flight calls get is the product's own grace,
# which it prints and which the deploy interrupt tests read from the pauses it asks its Stop for.
EXIT_WITHIN_S = 30


class Running:
    """A nr-run process with its output collected as it comes."""

    def __init__(self, twin: TwinSite, tmp_path: Path, *argv: str):
        env = {**os.environ, "NR_RUN_LAB_STATE_DIR": str(twin.state), "COLUMNS": "200"}
        self.proc = subprocess.Popen([sys.executable, "-m", "nr_run.cli.main", *argv, "--site", "dc1", "--lab",
                                      "--artifacts", str(tmp_path / "art")], cwd=REPO, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(iter(self.proc.stdout.readline, "")),  # type: ignore
                         daemon=True).start()

    def said(self, pattern: str) -> Callable[[], bool]:
        def seen() -> bool:
            assert self.proc.poll() is None, "".join(self.lines)[-3000:]
            return any(re.search(pattern, ln) for ln in self.lines)
        return seen

    def stop(self, sig: signal.Signals) -> int:
        """Send `sig`; the exit status (a run still alive EXIT_WITHIN_S later is taken as hung)."""
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=EXIT_WITHIN_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"still running {EXIT_WITHIN_S} s after {sig.name}: {''.join(self.lines)[-3000:]}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def output(self) -> str:
        time.sleep(0.2)         # the reader thread drains what the process printed before exiting
        return "".join(self.lines)


def _stopped(run: Running, sig: signal.Signals, codes: tuple[int, ...] = (0, 1)) -> None:
    rc = run.stop(sig)
    out = run.output()
    assert rc in codes, out[-3000:]
    assert "Traceback" not in out, out[-3000:]


# ------------------------------------------------------------------ compliance --every

@pytest.mark.parametrize("sig", [signal.SIGTERM, pytest.param(signal.SIGINT, marks=pytest.mark.long)])
def test_compliance_every_stops_while_waiting_for_its_next_run(deployed_twin, tmp_path, sig):
    run = Running(deployed_twin, tmp_path, "compliance", "--every", "1h", "--format", "json", *FAST)
    try:
        wait_until(run.said(r"next at"), timeout=120, step=0.1)
        _stopped(run, sig, codes=(0, 1, 2))
        assert re.search(r"stopped \(SIG(TERM|INT)\) while waiting for the next run", run.output())
    finally:
        run.kill()


@pytest.mark.long
def test_compliance_every_stops_during_a_run(deployed_twin, tmp_path):
    deployed_twin.fault("slow", device="ctsw1", ms=3000)
    run = Running(deployed_twin, tmp_path, "compliance", "--every", "1h", "--format", "json", *FAST)
    try:
        wait_until(run.said(r"compliance run started"), timeout=120, step=0.1)
        time.sleep(2)
        _stopped(run, signal.SIGTERM)
        assert "next at" not in run.output()
    finally:
        run.kill()


@pytest.mark.long
def test_compliance_every_stops_when_the_signal_lands_at_the_end_of_a_run(deployed_twin, tmp_path):
    """The signal arrives after the devices were read, while the run writes its reports: the loop ends
    there instead of sleeping until the next run."""
    run = Running(deployed_twin, tmp_path, "compliance", "--every", "1h", "--format", "json,junit,md,html,prom",
                  *FAST)
    try:
        reports = tmp_path / "art" / "runs" / "dc1"
        wait_until(lambda: any(p.name.startswith("compliance.") for p in reports.rglob("*"))
                   if reports.exists() else False, timeout=120, step=0.01)
        rc = run.stop(signal.SIGTERM)
        out = run.output()
        assert rc in (0, 1, 2) and "Traceback" not in out, out[-3000:]
    finally:
        run.kill()


# ------------------------------------------------------------------ watch

def test_watch_stops_between_collections(twin, tmp_path):
    run = Running(twin, tmp_path, "watch", "--every", "1h", *FAST)
    try:
        wait_until(run.said(r"^#?1\b|collection|\d+ device"), timeout=120, step=0.1)
        time.sleep(1)
        _stopped(run, signal.SIGTERM)
        assert "stopped (SIGTERM)" in run.output()
    finally:
        run.kill()


@pytest.mark.long
def test_watch_stops_during_a_collection(twin, tmp_path):
    twin.fault("slow", device="ctsw1", ms=4000)
    run = Running(twin, tmp_path, "watch", "--every", "1s", *FAST)
    try:
        wait_until(run.said(r"watching dc1"), timeout=120, step=0.1)
        time.sleep(2)
        _stopped(run, signal.SIGINT)
    finally:
        run.kill()


# ------------------------------------------------------------------ check and deploy

def test_check_stops_during_collection(twin, tmp_path):
    twin.fault("slow", device="ctsw1", ms=4000)
    run = Running(twin, tmp_path, "check", *FAST)
    try:
        wait_until(run.said(r"collecting state"), timeout=120, step=0.05)
        time.sleep(1)
        _stopped(run, signal.SIGTERM)
        assert "interrupted (SIGTERM)" in run.output()
    finally:
        run.kill()


@pytest.mark.long     # by default: test_deploy_interrupts (a dry run) and the interrupt matrix's GCU case (a commit)
def test_deploy_stops_during_its_baseline_check(twin, tmp_path):
    twin.fault("slow", device="ctsw2", ms=3000)
    run = Running(twin, tmp_path, "deploy", "--commit", "--yes", "--confirm-timeout", "20", *FAST)
    try:
        wait_until(run.said(r"baseline"), timeout=120, step=0.05)
        time.sleep(1)
        _stopped(run, signal.SIGTERM)
    finally:
        run.kill()


# ------------------------------------------------------------------ exporter

def _exporter(twin: TwinSite, tmp_path: Path, every: str) -> tuple[Running, str]:
    run = Running(twin, tmp_path, "exporter", "--listen", "127.0.0.1:0", "--every", every, *FAST)
    wait_until(run.said(r"serving http://\S+/metrics"), timeout=120, step=0.05)
    url = next(m.group(1) for ln in run.lines if (m := re.search(r"serving (http://\S+/metrics)", ln)))
    return run, url


@pytest.fixture
def exporter(twin: TwinSite, tmp_path: Path):
    run, url = _exporter(twin, tmp_path, "2s")
    try:
        yield run, url
    finally:
        run.kill()


def _threads(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^Threads:\s+(\d+)", status, re.M).group(1))     # type: ignore[union-attr]


def test_exporter_stops_while_serving(exporter):
    run, url = exporter
    assert urllib.request.urlopen(url, timeout=10).status == 200
    _stopped(run, signal.SIGTERM)
    assert "stopped (SIGTERM)" in run.output()


@pytest.mark.long
def test_exporter_stops_during_a_collection(twin, exporter):
    run, _ = exporter
    twin.fault("slow", device="ctsw1", ms=4000)
    time.sleep(3)
    _stopped(run, signal.SIGINT)


@pytest.mark.long     # by default the exporter serves and stops: test_exporter_stops_while_serving
def test_many_slow_clients_hold_neither_threads_nor_time(twin, tmp_path):
    """60 clients connect and send nothing (or half a request line): the exporter keeps at most MAX_REQUESTS
    request threads, answers a client beyond them at once (503 or the metrics), drops every stalled client
    by its request deadline, then serves scrapes again. (One collection an hour: its threads do not count.)"""
    run, url = _exporter(twin, tmp_path, "1h")
    try:
        wait_until(lambda: "nr_run_last_collection_timestamp_seconds{" in
                   urllib.request.urlopen(url, timeout=10).read().decode(), timeout=60, step=0.5)
        _slow_clients(run, url)
    finally:
        run.kill()


def _slow_clients(run: Running, url: str) -> None:
    host, port = re.match(r"http://([\d.]+):(\d+)/", url).groups()      # type: ignore[union-attr]
    base = _threads(run.proc.pid)
    slow = []
    for i in range(60):
        s = socket.create_connection((host, int(port)), timeout=5)
        if i % 2:
            s.sendall(b"GET /metr")
        slow.append(s)
    time.sleep(1)
    # one request thread and its deadline timer per slot, a few more for the collections
    assert _threads(run.proc.pid) <= base + 2 * MAX_REQUESTS + 4
    try:
        answer = urllib.request.urlopen(url, timeout=5).status
    except urllib.error.HTTPError as exc:
        answer = exc.code
    assert answer in (200, 503)
    for s in slow:          # each is answered 503 or dropped by the server, by its deadline at the latest
        s.settimeout(REQUEST_DEADLINE_S + 10)
        try:
            while s.recv(4096):
                pass
        except ConnectionResetError:
            pass
        except TimeoutError:
            pytest.fail("a stalled client was not dropped by its request deadline")
        finally:
            s.close()
    wait_until(lambda: urllib.request.urlopen(url, timeout=5).status == 200, timeout=15, step=0.5)
    assert _threads(run.proc.pid) <= base + 4
