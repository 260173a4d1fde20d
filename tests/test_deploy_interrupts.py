"""Interrupted and killed deploys against the twin: a real `nr-run deploy` process, a slow device keeping a
device call in flight, and the signal a user or a supervisor sends. Device state is read back through the
real NAPALM drivers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nr_run.runbooks.records import read_audit, unfinished
from tests.conftest import REPO
from tests.twin_site import FAST_CHECKS, run_json, wait_until

FAST = [f"--option={c}.{k}={v}" for c, opts in FAST_CHECKS.items() for k, v in opts.items()]


def _start_deploy(twin, *argv: str) -> subprocess.Popen:
    env = {**os.environ, "NR_RUN_LAB_STATE_DIR": str(twin.state)}
    return subprocess.Popen([sys.executable, "-m", "nr_run.cli.main", "deploy", "--site", "dc1", "--lab",
                             "--artifacts", str(twin.artifacts), "--json", *FAST, *argv], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _signal(proc: subprocess.Popen, sig: int) -> tuple[str, str]:
    """Send `sig`; the process's output once it exited. The run's own budget is what the tests read: it says
    in-flight calls get their grace, and a device whose call was still in flight when the grace ran out is
    reported `interrupted` (had the run waited for the slowed reply, the call's own outcome would show)."""
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)     # only a hang guard
    return out, err


GRACE = "in-flight calls get 2 s"


def _wait_for_audit(twin, predicate, timeout: float = 120) -> None:
    wait_until(lambda: any(predicate(a) for a in read_audit(twin.artifacts)), timeout=timeout, step=0.05)


@pytest.mark.long
def test_ctrl_c_during_commit_exits_within_5_s_with_results_and_leaves_devices_to_their_timers(twin):
    before = twin.snapshot()
    twin.fault("slow", device="rtsw1", ms=1500)      # keeps rtsw1's commit in flight
    proc = _start_deploy(twin, "--commit", "--yes", "--confirm-timeout", "8")
    try:
        _wait_for_audit(twin, lambda a: a["device"] == "rtsw1" and a["action"] == "commit")
        out, err = _signal(proc, signal.SIGINT)
    finally:
        proc.kill()
    assert proc.returncode == 1 and GRACE in err, err[-2000:]
    assert "Traceback" not in err
    report = json.loads(out)
    assert report["interrupted"] == "SIGINT" and report["stopped_at"] == "canary"
    states = {d["device"]: d for d in report["devices"]}
    for host in ("rtsw1", "ctsw1"):
        assert states[host]["state"] == "interrupted" and "revert timer" in states[host]["detail"]
    assert all(states[h]["state"] == "untouched" for h in ("ctsw2", "rtsw2", "rtsw3", "rtsw4"))
    saved = json.loads((Path(report["artifacts"]) / "results.json").read_text())
    assert saved["interrupted"] == "SIGINT"
    # every commit line is completed: "awaiting revert", which the next run verifies
    assert {a["device"] for a in unfinished(twin.artifacts, "dc1")} == {"rtsw1", "ctsw1"}
    twin.clear_faults("slow")
    wait_until(lambda: twin.running("rtsw1") == before["rtsw1"] and twin.running("ctsw1") == before["ctsw1"],
               timeout=30)


def test_sigterm_during_dry_run_exits_within_5_s(twin):
    twin.fault("slow", device="rtsw1", ms=4000)
    proc = _start_deploy(twin)
    try:
        # the dry run holds the site lock while it diffs; rtsw1 answers each request after 4 s
        lock = Path(os.environ["NR_RUN_LOCK_DIR"]) / "dc1.lock"
        wait_until(lock.exists, timeout=60, step=0.05)
        time.sleep(2)
        out, err = _signal(proc, signal.SIGTERM)
    finally:
        proc.kill()
    assert GRACE in err, err[-2000:]
    report = json.loads(out)
    assert proc.returncode == 1 and report["interrupted"] == "SIGTERM"
    assert {d["device"]: d["state"] for d in report["devices"]}["rtsw1"] == "interrupted"
    assert not lock.exists()


@pytest.mark.long
def test_killed_deploy_is_reconciled_by_the_next_run(twin, capsys):
    """SIGKILL between commit and confirm: the audit keeps the start lines; the next deploy reads the devices
    back (did they revert?), reports it and closes the lines."""
    before = twin.snapshot()
    twin.fault("slow", device="rtsw1", ms=1500)
    proc = _start_deploy(twin, "--commit", "--yes", "--confirm-timeout", "6")
    try:
        _wait_for_audit(twin, lambda a: a["device"] == "rtsw1" and a["action"] == "commit")
        time.sleep(1)        # ctsw1 commits at once; rtsw1's commit is still in flight
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    left = {a["device"]: a for a in unfinished(twin.artifacts, "dc1")}
    assert set(left) == {"rtsw1", "ctsw1"} and {a["action"] for a in left.values()} == {"commit"}
    twin.clear_faults("slow")
    wait_until(lambda: twin.running("rtsw1") == before["rtsw1"] and twin.running("ctsw1") == before["ctsw1"],
               timeout=30)
    rc, report = run_json(twin, capsys, "deploy")
    assert rc == 2
    assert sorted((r["device"], r["outcome"].split(":")[0]) for r in report["reconciled"]) == [
        ("ctsw1", "reverted"), ("rtsw1", "reverted")]
    assert unfinished(twin.artifacts, "dc1") == []


@pytest.mark.long
def test_ctrl_c_during_check_exits_within_5_s(twin):
    twin.fault("slow", device="ctsw1", ms=4000)
    env = {**os.environ, "NR_RUN_LAB_STATE_DIR": str(twin.state)}
    proc = subprocess.Popen([sys.executable, "-m", "nr_run.cli.main", "check", "--site", "dc1", "--lab",
                             "--artifacts", str(twin.artifacts), *FAST], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: any("collecting state" in ln for ln in _lines(proc)), timeout=60, step=0.05)
        time.sleep(1)
        out, err = _signal(proc, signal.SIGINT)
    finally:
        proc.kill()
    assert proc.returncode == 1 and "Traceback" not in err and GRACE in err
    assert "interrupted (SIGINT)" in out + err


_SEEN: list[str] = []


def _lines(proc: subprocess.Popen) -> list[str]:
    """Lines the process printed so far (read without blocking past one line)."""
    import select

    assert proc.stdout is not None
    while select.select([proc.stdout], [], [], 0)[0]:
        line = proc.stdout.readline()
        if not line:
            break
        _SEEN.append(line)
    return _SEEN
