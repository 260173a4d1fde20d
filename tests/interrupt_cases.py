"""The deploy interrupt matrix's cases, shared by its three files (tests/test_interrupt_matrix*.py, one a change
kind, so pytest-xdist runs them on different workers): a `nr-run deploy --commit` process against the twin is
sent SIGTERM, SIGINT or SIGKILL at a step of a device change, or on a full disk, and afterwards the device is
back on its old config (its revert timer fired) or kept because it was confirmed, traffic is shifted back on
SONiC, and the next run's reconcile says exactly that. Device state is read through the real clients (NAPALM,
SSH).

Change kinds (CHANGES): an EOS session commit, a GCU commit (SONiC) and a drained apply (SONiC: TSA, config
reload, TSB)."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from napalm_sonic import configdb
from nr_run.runbooks.records import read_audit, unfinished
from tests.conftest import REPO, edited_dc1
from tests.twin_site import FAST_CHECKS, TwinSite, run_json, ssh_run, wait_until

FAST = [f"--option={c}.{k}={v}" for c, opts in FAST_CHECKS.items() for k, v in opts.items()]
CONFIRM_S = 12          # the revert timer: long enough for one device's commit and post-checks on the twin
# ... when the device answers slowly from the commit on (a signal during the confirm): from the commit to the
# confirm took 3-4 s on the twin, EOS and SONiC alike, measured with both cores 10x oversubscribed.
# An unconfirmed device waits this long before it reverts; one too short to reach the confirm fails the case
# (the deploy exits, saying its timer expired, before the confirm the case waits for)
SLOW_CONFIRM_S = 24


def _ecn(d: dict) -> None:          # a change GCU takes on SONiC, a session commit on EOS
    d["roce_profiles"]["roce"]["ecn"]["min_kbytes"] = 200


def _headroom(d: dict) -> None:     # a buffer pool change: GCU refuses it, a drained apply on SONiC
    d["cabling"]["rules"][1]["cable_length_m"] = 10


CHANGES: dict[str, tuple[str, Callable[[dict], None]]] = {
    "eos": ("rtsw1", _ecn), "gcu": ("rtsw3", _ecn), "drained": ("rtsw3", _headroom)}


def _start(twin: TwinSite, inv: Path, host: str, confirm_s: int, *extra: str,
           fsize: int | None = None) -> subprocess.Popen:
    env = {**os.environ, "NR_RUN_LAB_STATE_DIR": str(twin.state)}

    def limit() -> None:            # `ulimit -f`: a write past fsize bytes fails (EFBIG)
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.Popen([sys.executable, "-m", "nr_run.cli.main", "deploy", "--site", "dc1", "--lab",
                             "--inventory-dir", str(inv), "--hosts", host, "--artifacts", str(twin.artifacts),
                             "--json", "--commit", "--yes", "--confirm-timeout", str(confirm_s), *FAST, *extra],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=limit)


def _line(twin: TwinSite, host: str, action: str, phase: str, outcome: str | None = None) -> Callable[[], bool]:
    def seen() -> bool:
        return any(a["device"] == host and a["action"] == action and a["phase"] == phase
                   and (outcome is None or a["outcome"] == outcome) for a in read_audit(twin.artifacts))
    return seen


def sonic(twin: TwinSite, host: str, command: str) -> str:
    client = twin.ssh(host, password="YourPaSsWoRd")
    try:
        return ssh_run(client, command)[1]
    finally:
        client.close()


def pending(twin: TwinSite, host: str) -> bool:
    drv = twin.driver(host)
    try:
        return bool(drv.has_pending_commit())
    finally:
        drv.close()


def _hold_at(twin: TwinSite, kind: str, host: str, step: str, before: str) -> None:
    """Keep the deploy at `step` long enough for a signal to land there: the device answers slowly, or (after
    a SONiC apply) its daemons lag CONFIG_DB, so the verify of the apply is in flight."""
    if step == "after apply" and kind != "eos":
        twin.fault("appl_lag", device=host, ms=6000)
    elif step == "before apply":
        twin.fault("slow", device=host, ms=1200)


def _wait_for_step(twin: TwinSite, proc: subprocess.Popen, kind: str, host: str, step: str,
                   before: str) -> None:
    def alive(cond: Callable[[], bool]) -> Callable[[], bool]:
        def check() -> bool:
            assert proc.poll() is None, proc.communicate()[1][-3000:]
            return cond()
        return check

    if step == "before apply":
        wait_until(alive(_line(twin, host, "commit", "start")), timeout=120, step=0.05)
    elif step == "after apply":
        if kind == "eos":         # an EOS session commit applies and arms its timer in one command
            wait_until(alive(_line(twin, host, "commit", "end", "committed")), timeout=120, step=0.05)
        else:
            wait_until(alive(lambda: twin.running(host) != before), timeout=120, step=0.1)
    elif step == "post-checks":
        wait_until(alive(_line(twin, host, "commit", "end", "committed")), timeout=120, step=0.05)
    else:       # slow from the commit on: its post-checks and then its confirm are in flight for seconds
        wait_until(alive(_line(twin, host, "commit", "end", "committed")), timeout=120, step=0.05)
        twin.fault("slow", device=host, ms=1500)
        wait_until(alive(_line(twin, host, "confirm", "start")), timeout=120, step=0.05)


def signal_case(twin: TwinSite, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, step: str,
          sig: signal.Signals) -> None:
    host, edit = CHANGES[kind]
    inv = edited_dc1(tmp_path, edit)
    before = twin.running(host)
    _hold_at(twin, kind, host, step, before)
    confirm_s = SLOW_CONFIRM_S if step == "confirm" else CONFIRM_S
    proc = _start(twin, inv, host, confirm_s)
    try:
        _wait_for_step(twin, proc, kind, host, step, before)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=15)      # SIGTERM/SIGINT: within the 2 s grace, plus start-up
    finally:
        proc.kill()
        proc.wait(timeout=10)
    twin.clear_faults()
    assert "Traceback" not in err, err[-3000:]
    if sig != signal.SIGKILL:
        assert proc.returncode in (0, 1), err[-3000:]
        report = json.loads(out)
        assert report["interrupted"] == sig.name or report["exit_code"] == 0, report
    confirmed = _line(twin, host, "confirm", "end", "confirmed")()
    # the device's own timer decides what was not confirmed: it fires, nothing is left pending
    wait_until(lambda: not pending(twin, host), timeout=confirm_s + 30, step=0.5)
    # a signal during the confirm may land after the switch took it (the client died before it could say
    # so): then the change is kept, saved, and the next run says so; otherwise the timer restored it
    kept = twin.running(host) != before
    assert not kept or step == "confirm" or confirmed, "not confirmed, yet not reverted by its timer"
    if kind != "eos":
        assert sonic(twin, host, "TSC") == "System Mode: Normal\n"      # never left shifted away
        saved = configdb.normalize(json.loads(sonic(twin, host, "cat /etc/sonic/config_db.json")))
        assert saved == configdb.normalize(json.loads(twin.running(host))), "it would boot into another config"
    # the next run (a dry run, any operator of this folder) reads the device back and says what it found
    left = {a["device"] for a in unfinished(twin.artifacts, "dc1")}
    rc, report = run_json(twin, capsys, "deploy", "--inventory-dir", str(inv), "--hosts", host)
    assert rc in (0, 2), report
    by = {r["device"]: r for r in report["reconciled"]}
    if confirmed:
        assert host not in left and host not in by
    else:
        assert host in left and by[host]["state"] == ("kept" if kept else "reverted"), by
        assert {d["device"]: d["state"] for d in report["devices"]}[host] == ("no change" if kept else "diffed")
    assert unfinished(twin.artifacts, "dc1") == []


FULL_DISK = 4 << 20


def full_disk_case(twin: TwinSite, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str,
                    sig: signal.Signals) -> None:
    """The audit log is a few hundred bytes short of the file size limit: the commit's start line is written,
    nothing after it. A signal once the change is on the device: the device ends reverted by its timer or kept
    (confirmed), never pending, shifted back; the next run (no limit) reads it back and says which."""
    host, edit = CHANGES[kind]
    inv = edited_dc1(tmp_path, edit)
    before = twin.running(host)
    twin.artifacts.mkdir(mode=0o700, parents=True, exist_ok=True)
    filler = json.dumps({"note": "x" * 200}) + "\n"          # not audit lines: every reader skips them
    audit = twin.artifacts / "audit.jsonl"
    audit.write_text(filler * ((FULL_DISK - 600) // len(filler)))
    audit.chmod(0o600)
    if kind != "eos":
        twin.fault("appl_lag", device=host, ms=6000)         # the apply's verify keeps the commit in flight
    proc = _start(twin, inv, host, CONFIRM_S, fsize=FULL_DISK)
    try:
        _wait_for_step(twin, proc, kind, host, "after apply", before)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=15)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    twin.clear_faults()
    assert "Traceback" not in err, err[-3000:]
    wait_until(lambda: not pending(twin, host), timeout=CONFIRM_S + 30, step=0.5)
    reverted = twin.running(host) == before
    if kind != "eos":
        assert sonic(twin, host, "TSC") == "System Mode: Normal\n"
    assert [a["device"] for a in unfinished(twin.artifacts, "dc1")] == [host]
    rc, report = run_json(twin, capsys, "deploy", "--inventory-dir", str(inv), "--hosts", host)
    assert [(r["device"], r["state"]) for r in report["reconciled"]] == [(host, "reverted" if reverted else "kept")]
    assert unfinished(twin.artifacts, "dc1") == []


STEPS = ("before apply", "after apply", "post-checks", "confirm")
SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGKILL)
FAST_CASES = {("gcu", "after apply", signal.SIGTERM)}       # the one case of the default run


def matrix(kind: str) -> list:
    """A change kind's (kind, step, signal) cases, every step and signal; all but FAST_CASES are `long`."""
    return [pytest.param(kind, st, sg, id=f"{kind}-{st.replace(' ', '_')}-{sg.name}",
                         marks=() if (kind, st, sg) in FAST_CASES else (pytest.mark.long,))
            for st in STEPS for sg in SIGNALS]


def full_disk_cases(kind: str) -> list:
    """A change kind's (kind, signal) full-disk cases, all long: tests/test_host_faults.py has the fast
    full-disk commit in the default run."""
    return [pytest.param(kind, sg, id=f"{kind}-{sg.name}", marks=pytest.mark.long) for sg in SIGNALS]
