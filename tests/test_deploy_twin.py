"""Deploy acceptance against the twin (a background `lab up` process, as a user runs it), via the CLI
and the Python API. Device state is read back through the real NAPALM drivers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyeapi
import pytest

from nr_run.cli.main import main
from nr_run.intent import compile_site
from nr_run.lab.twin.lab import lab_clear, lab_fault
from nr_run.platforms import registry
from tests.conftest import DC1, REPO
from tests.twin_site import DEVICES, FAST_CHECKS, SWITCHES, run_json, wait_until


def _history(twin, capsys) -> dict:
    capsys.readouterr()
    assert main(["report", "--site", "dc1", "--artifacts", str(twin.artifacts), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_dry_run_commit_then_nothing_pending(twin, capsys):
    """The whole site from day 0, once: dry run, commit, check, then nothing left to do; the verdict line of
    each run, and the history, whose baseline and final checks resolve what the day-0 check found."""
    rc, day0 = run_json(twin, capsys, "check", "--checks", "interfaces,bgp,pfc")
    assert rc == 1 and day0["summary"]["failed"] > 20                    # day 0: nothing configured
    opened = len(_history(twin, capsys)["findings"]["open"])
    assert opened > 20

    rc, report = run_json(twin, capsys, "deploy")
    assert rc == 2
    assert {d["device"]: d["state"] for d in report["devices"]} == dict.fromkeys(DEVICES, "diffed")
    assert all(d["added"] > 0 for d in report["devices"])
    assert report["verdict"] == ("dry run dc1: 10 of 10 device(s) would change (ctsw1, ctsw2, gpu1, gpu2, gpu3, "
                                 "gpu4 and 4 more); nothing committed: rerun with --commit to apply")

    rc, report = run_json(twin, capsys, "deploy", "--commit", "--yes", "--confirm-timeout", "60")
    assert rc == 0, report["message"]
    assert report["final_check"]["passed"] and report["final_check"]["summary"]["failed"] == 0
    assert {d["device"]: d["state"] for d in report["devices"]} == dict.fromkeys(DEVICES, "confirmed")
    assert [s["name"] for s in report["stages"]][0] == "canary"
    assert sorted(a["device"] for a in twin.audit() if a["outcome"] == "confirmed") == DEVICES
    assert report["verdict"].startswith("deploy dc1: 10 device(s) confirmed in ") and \
        "; final check PASS (" in report["verdict"], report["verdict"]
    doc = _history(twin, capsys)
    kinds = doc["runs"]["by_kind"]
    assert kinds.get("deploy-baseline") == 1 and kinds.get("deploy-final") == 1, kinds
    assert doc["findings"]["open"] == [], doc["findings"]["open"][:3]
    assert len(doc["findings"]["resolved"]) >= opened

    rc, checks = run_json(twin, capsys, "check")
    assert rc == 0 and checks["passed"], [f for f in checks["findings"] if not f["passed"]][:3]

    rc, report = run_json(twin, capsys, "deploy")
    assert rc == 0
    assert {d["device"]: d["state"] for d in report["devices"]} == dict.fromkeys(DEVICES, "no change")
    rc, report = run_json(twin, capsys, "deploy", "--commit", "--yes", "--confirm-timeout", "60")
    assert rc == 0 and not report["stages"], report["stages"]
    assert report["verdict"] == "deploy dc1: nothing to change, all 10 device(s) already at intent"


@pytest.mark.long
def test_already_broken_fabric_rolls_out_and_reports_old_failures_apart(twin, capsys):
    """A cable down before the deploy is not the deploy's fault: no stage is rolled back for it, and the
    report tells the pre-existing failures from new ones (there are none)."""
    lab_fault(twin.state, "link_down", device="rtsw1", port="Ethernet1")
    rc, report = run_json(twin, capsys, "deploy", "--commit", "--yes", "--confirm-timeout", "60")
    assert {d["device"]: d["state"] for d in report["devices"]} == dict.fromkeys(DEVICES, "confirmed")
    assert report["baseline"]["failed"] > 0 and not report["checks"]
    old = {(f["check"], f["device"], f["port"]) for f in report["preexisting"]}
    assert ("interfaces", "rtsw1", "Ethernet1") in old
    final = report["final_check"]
    assert final["new"] == [] and final["preexisting"] and not final["passed"]
    assert rc == 1 and "nothing new fails" in report["message"] and "pre-existing" in report["message"]


def _api_deployment(twin, revert_in: int, gate, stop=None):
    from nr_run.runbooks.deploy import Deployment
    from nr_run.runbooks.inventory import init_nornir
    from nr_run.runbooks.progress import DeviceProgress
    from nr_run.runbooks.records import RunRecords
    from nr_run.runbooks.render import render_device

    intent = compile_site(DC1)
    configs = {n: render_device(intent.devices[n]) for n in SWITCHES}
    nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=twin.addresses)
    run = Deployment(nr, intent, configs, RunRecords(twin.artifacts, "dc1", "deploy"), DeviceProgress(None, SWITCHES),
                     revert_in=revert_in, gate=gate, stop=stop)
    return nr, run


def test_canary_that_starts_dropping_lossless_traffic_is_rolled_back_alone(twin):
    """Counters are part of the stage gate: drops that start after the canary's commit roll it back."""
    from nr_run.runbooks.deploy_checks import StageGate

    intent = compile_site(DC1)
    before = twin.snapshot()

    class DropsAfterCommit(StageGate):
        def stage(self, nr, stage, at_intent):
            if "rtsw1" in stage:
                lab_fault(twin.state, "lossless_drops", device="rtsw1", port="Ethernet1", queue=3)
            return super().stage(nr, stage, at_intent)

    nr, run = _api_deployment(twin, 60, DropsAfterCommit(intent, FAST_CHECKS))
    run.dry_run()
    run.commit(canary=1, batch="25%")
    nr.close_connections()
    lab_clear(twin.state, "lossless_drops")
    report = run.report
    states = {n: d.state for n, d in report.devices.items()}
    assert states["rtsw1"] == states["ctsw1"] == "rolled back"
    assert all(states[h] == "untouched" for h in ("ctsw2", "rtsw2", "rtsw3", "rtsw4"))
    assert report.stopped_at == "canary"
    assert {(c.check, c.device) for c in report.checks} == {("counters", "rtsw1")}
    assert twin.snapshot() == before   # canary back to its exact previous config; nobody else touched
    audit = twin.audit()
    assert {a["device"] for a in audit} == {"rtsw1", "ctsw1"}
    ends = {(a["device"], a["action"]): a["outcome"] for a in audit if a["phase"] == "end"}
    assert ends[("rtsw1", "commit")] == "committed" and ends[("rtsw1", "rollback")] == "rolled back"
    starts = [a["id"] for a in audit if a["phase"] == "start"]
    assert sorted(starts) == sorted({a["id"] for a in audit if a["phase"] == "end"})   # every line completed


@pytest.mark.long
def test_unreachable_device_in_batch_2(twin):
    """Python API: the device becomes unreachable after its commit; earlier batches stay, its batch is left to
    the device's revert timer, which the run cannot verify while the device is unreachable (it says so)."""
    from nr_run.runbooks.deploy_checks import StageGate

    intent = compile_site(DC1)
    before = twin.snapshot()

    class UnreachableAfterCommit(StageGate):
        def stage(self, nr, stage, at_intent):
            if stage == ["rtsw2", "rtsw4"]:
                lab_fault(twin.state, "unreachable", device="rtsw4")
            return super().stage(nr, stage, at_intent)

    nr, run = _api_deployment(twin, 4, UnreachableAfterCommit(intent, FAST_CHECKS))
    run.dry_run()
    stages = run.plan(canary=1, batch="2")
    # whole rails: rail 1 (rtsw1, rtsw3) minus the canary, then rail 2 (rtsw2, rtsw4)
    assert [s.devices for s in stages] == [("rtsw1", "ctsw1"), ("rtsw3",), ("rtsw2", "rtsw4"), ("ctsw2",)]
    run.commit(canary=1, batch="2")
    nr.close_connections()
    report = run.report
    assert report.stopped_at == "batch 2"
    states = {n: d.state for n, d in report.devices.items()}
    assert [states[h] for h in ("rtsw1", "ctsw1", "rtsw3")] == ["confirmed"] * 3
    assert states["rtsw2"] == "rolled back"
    assert states["rtsw4"] == "failed" and "revert timer" in report.devices["rtsw4"].detail
    assert "NOT verified" in report.devices["rtsw4"].detail
    assert states["ctsw2"] == "untouched"
    lab_clear(twin.state, "unreachable")
    committed = twin.running("rtsw3")
    assert committed != before["rtsw3"] and "Loopback0" in committed
    wait_until(lambda: twin.running("rtsw4") == before["rtsw4"], timeout=10)   # reverted by its own timer
    assert twin.running("ctsw2") == before["ctsw2"] and twin.running("rtsw2") == before["rtsw2"]
    # rtsw3 was committed before rtsw4 with the same timer: it is past its deadline, and stays confirmed
    assert twin.running("rtsw3") == committed
    # the unverified revert is left open in the audit log; the next deploy reads rtsw4 back and closes it
    from nr_run.runbooks.records import unfinished

    assert [a["device"] for a in unfinished(twin.artifacts, "dc1")] == ["rtsw4"]
    nr, again = _api_deployment(twin, 4, None)
    reconciled = again.reconcile()
    nr.close_connections()
    assert [(r["device"], r["outcome"].split(":")[0]) for r in reconciled] == [("rtsw4", "reverted")]
    assert unfinished(twin.artifacts, "dc1") == []


@pytest.mark.long
def test_refused_confirm_is_left_to_the_timer_and_the_revert_is_verified(twin):
    """The device refuses the confirm: the run does not claim a revert, it waits for the timer and reads the
    device back; the audit log has the commit, the failed confirm and the verified revert."""
    from nr_run.runbooks.deploy_checks import StageGate

    intent = compile_site(DC1)
    before = twin.snapshot()

    class RejectAfterChecks(StageGate):
        def stage(self, nr, stage, at_intent):
            result = super().stage(nr, stage, at_intent)
            if "rtsw1" in stage:
                lab_fault(twin.state, "commit_rejected", device="rtsw1")
            return result

    nr, run = _api_deployment(twin, 4, RejectAfterChecks(intent, FAST_CHECKS))
    run.dry_run()
    run.commit(canary=1, batch="25%")
    nr.close_connections()
    lab_clear(twin.state, "commit_rejected")
    out = run.report.devices["rtsw1"]
    assert out.state == "reverted" and "confirm failed" in out.detail and "configuration rejected" in out.detail
    assert "verified equal to the backup" in out.detail
    assert run.report.devices["ctsw1"].state == "confirmed" and run.report.stopped_at == "canary"
    assert twin.running("rtsw1") == before["rtsw1"]
    rtsw1 = [(a["action"], a["phase"], a["outcome"]) for a in twin.audit() if a["device"] == "rtsw1"]
    assert [r for r in rtsw1 if r[1] == "end"] == [("commit", "end", "committed"), ("confirm", "end", "failed"),
                                                    ("verify revert", "end", "reverted")]


@pytest.mark.long
def test_device_that_lost_its_timer_is_reported_as_not_reverted(twin):
    """The pending commit disappears before the run confirms it (here: confirmed by someone else; a restarted
    device loses it the same way). The run does not claim a timer revert: it reads the device, sees no commit
    pending and the new config still running, and says so at once instead of waiting out the timer."""
    from nr_run.runbooks.deploy_checks import StageGate

    intent = compile_site(DC1)
    before = twin.snapshot()

    class ForeignConfirm(StageGate):
        def stage(self, nr, stage, at_intent):
            result = super().stage(nr, stage, at_intent)
            if "rtsw1" in stage:
                node = twin.eapi("rtsw1")
                name = node.run_commands(["show configuration sessions detail"])[0]["commitTimerSessionName"]
                node.run_commands([f"configure session {name} commit"])
            return result

    from nr_run.runbooks.interrupt import Stop

    class Waits(Stop):
        """The run's stop, recording every pause the run asks for (the run's own clock, not the wall's)."""

        def __init__(self) -> None:
            super().__init__()
            self.asked: list[float] = []

        def wait(self, timeout: float) -> bool:
            self.asked.append(timeout)
            return super().wait(timeout)

    waits = Waits()
    nr, run = _api_deployment(twin, 120, ForeignConfirm(intent, FAST_CHECKS), stop=waits)
    run.dry_run()
    run.commit(canary=1, batch="25%")
    nr.close_connections()
    out = run.report.devices["rtsw1"]
    assert out.state == "failed" and "NOT reverted" in out.detail and "no commit is pending" in out.detail
    assert sum(waits.asked) < 60          # two reads apart, not the 120 s timer waited out
    assert twin.running("rtsw1") != before["rtsw1"]   # what the report says: the device kept the change
    ends = [a["outcome"] for a in twin.audit() if a["device"] == "rtsw1" and a["phase"] == "end"]
    assert ends[-1] == "not reverted"


@pytest.mark.long
def test_timer_that_expires_during_post_checks_is_reported_as_such(twin):
    """Post-checks slower than the revert timer: the devices revert by themselves; the run says the timer
    expired (not a post-check failure) and verifies that each device is back on its backup."""
    from nr_run.runbooks.deploy_checks import StageGate

    intent = compile_site(DC1)
    before = twin.snapshot()

    class SlowChecks(StageGate):
        given: list[int] = []       # the timers the stages' commits got, in order

        def stage(self, nr, stage, at_intent):
            # slower than the stage's timer: 3 s (--confirm-timeout), or more if the baseline check took long
            # enough for the product to raise it (a loaded machine)
            self.given.append(self.revert_timer(stage))
            time.sleep(self.given[-1] + 1)
            return super().stage(nr, stage, at_intent)

    gate = SlowChecks(intent, FAST_CHECKS)
    nr, run = _api_deployment(twin, 3, gate)
    run.dry_run()
    run.commit(canary=1, batch="25%")
    nr.close_connections()
    report = run.report
    [timer] = gate.given            # the first stage's timer expired: no later stage started
    assert timer >= 3
    for host in ("rtsw1", "ctsw1"):
        assert report.devices[host].state == "reverted", report.devices[host].detail
        assert f"revert timer ({timer} s) expired" in report.devices[host].detail
        assert "verified equal to the backup" in report.devices[host].detail
    assert "expired" in report.message and "finding" not in report.message   # not a post-check failure
    assert twin.snapshot() == before


@pytest.mark.long
def test_process_killed_before_confirm_reverts_by_itself(twin):
    before = twin.running("rtsw2")
    script = textwrap.dedent(f"""
        import json, os, signal
        from nr_run.runbooks.deploy import commit_device
        from nr_run.intent import compile_site
        from nr_run.runbooks.inventory import init_nornir
        from nr_run.runbooks.render import render_device
        intent = compile_site({str(DC1)!r})
        nr = init_nornir("dc1", {str(REPO / "inventory")!r}, lab=True, address_map=json.loads({json.dumps(json.dumps(twin.addresses))}))
        nr = nr.filter(name="rtsw2")
        result = nr.run(task=commit_device, config=render_device(intent.devices["rtsw2"]), revert_in=3)
        assert not result.failed, result["rtsw2"].exception
        print("committed", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9 and "committed" in proc.stdout, proc.stderr[-2000:]
    assert twin.running("rtsw2") != before          # the commit is live, waiting for a confirm that never comes
    wait_until(lambda: twin.running("rtsw2") == before, timeout=10)


@pytest.mark.long
def test_second_deploy_refused_while_one_runs(twin, capsys, tmp_path):
    """The lock is the host's, not the artifacts folder's: an operator with another --artifacts is refused."""
    lab_fault(twin.state, "slow", device="rtsw1", ms=600)     # keeps the first deploy busy for a few seconds
    env = {**os.environ, "NR_RUN_LAB_STATE_DIR": str(twin.state)}
    first = subprocess.Popen([sys.executable, "-m", "nr_run.cli.main", "deploy", "--site", "dc1", "--lab",
                              "--artifacts", str(tmp_path / "first-operator"), "--json"], cwd=REPO, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lock = Path(os.environ["NR_RUN_LOCK_DIR"]) / "dc1.lock"
    deadline = time.time() + 30
    while not lock.exists() and time.time() < deadline:
        time.sleep(0.05)
    assert lock.exists()
    rc, report = run_json(twin, capsys, "deploy")
    assert rc == 1 and "is locked by" in report["message"] and f"pid {first.pid}" in report["message"]
    assert not (twin.artifacts / "runs").exists()          # refused before writing anything
    out, _ = first.communicate(timeout=120)
    assert first.returncode == 2 and json.loads(out)["exit_code"] == 2
    assert not lock.exists()


def test_foreign_pending_session_is_reported_and_skipped(twin, capsys, monkeypatch):
    # NAPALM's eos driver retries a locked session for 10 s before it gives up; 1 s shows the same refusal
    from napalm.eos.eos import EOSDriver

    obtain = EOSDriver._obtain_lock
    monkeypatch.setattr(EOSDriver, "_obtain_lock", lambda self, wait_time=10: obtain(self, wait_time=1))
    ep = twin.addresses["ctsw2"]
    node = pyeapi.client.Node(pyeapi.client.connect(transport="https", host="127.0.0.1", username="admin",
                                                    password="admin", port=ep["port"], timeout=20))
    node.run_commands(["configure session someone_else", "interface Ethernet9", "description in progress", "end"])
    rc, report = run_json(twin, capsys, "deploy")
    assert rc == 1
    by = {d["device"]: d for d in report["devices"]}
    assert by["ctsw2"]["state"] == "skipped" and "pending" in by["ctsw2"]["detail"]
    assert all(by[h]["state"] == "diffed" for h in DEVICES if h != "ctsw2")
    sessions = node.run_commands(["show configuration sessions"])[0]["sessions"]
    assert sessions["someone_else"]["state"] == "pending"     # left exactly as found


def test_replace_keeps_local_users_and_commits(twin, capsys):
    """A replace carries the switch's own users over (the inventory never holds them): it diffs and commits
    without deleting `username admin`, and the admin still logs in afterwards."""
    rc, report = run_json(twin, capsys, "deploy", "--replace")
    assert rc == 2
    by = {d["device"]: d for d in report["devices"]}
    assert all(by[h]["state"] == "diffed" for h in DEVICES), {h: by[h]["detail"] for h in DEVICES}
    saved = (Path(report["artifacts"]) / "diffs" / "rtsw1.diff").read_text()
    assert "username" not in saved and "secret admin" not in saved
    assert "+router bgp" in saved
    rc, report = run_json(twin, capsys, "deploy", "--replace", "--hosts", "rtsw1", "--commit", "--yes",
                          "--skip-checks")
    assert rc == 0, report["devices"]
    running = twin.running("rtsw1")                     # through pyeapi, logging in as admin/admin
    assert "username admin privilege 15 role network-admin" in running
    assert "router bgp" in running


def test_replace_that_would_remove_management_access_is_refused(twin, capsys):
    # a management route the inventory does not have: a replace would delete it and cut the way in
    twin.fault("drift", device="rtsw1", lines="ip route vrf MGMT 10.99.0.0/16 172.20.20.1")
    rc, report = run_json(twin, capsys, "deploy", "--replace", "--hosts", "rtsw1,rtsw2")
    by = {d["device"]: d for d in report["devices"]}
    assert rc == 1 and by["rtsw1"]["state"] == "skipped" and "management access" in by["rtsw1"]["detail"]
    assert "ip route vrf MGMT 10.99.0.0/16" in by["rtsw1"]["detail"]
    assert by["rtsw2"]["state"] == "diffed"


def test_reconcile_tells_a_kept_change_from_a_revert(twin):
    """Unfinished audit lines of a run that died: one device back on the backup taken before its change, one
    running something else. Each is read back and reported for what it is, then the lines are closed."""
    from nr_run.runbooks.records import RunRecords, unfinished

    dead = RunRecords(twin.artifacts, "dc1", "deploy")
    drv = twin.driver("rtsw1")
    try:                                    # backups are taken with secrets masked (the driver's, the policy's)
        backup = registry.get("eos").deploy.redact(str(drv.get_config(retrieve="running", sanitized=True)["running"]))
    finally:
        drv.close()
    dead.write("backup/rtsw1.running", backup)                              # it is still on its backup
    dead.write("backup/rtsw2.running", "! a config rtsw2 no longer runs\n")  # it runs something else now
    for host in ("rtsw1", "rtsw2"):
        dead.audit_start(host, "commit", f"+ change on {host}")
    nr, run = _api_deployment(twin, 60, None)
    reconciled = {r["device"]: r["outcome"] for r in run.reconcile()}
    nr.close_connections()
    assert reconciled["rtsw1"].startswith("reverted: the running config equals the one recorded before")
    assert reconciled["rtsw2"].startswith("kept, not reverted: no commit is pending and the running config differs")
    assert unfinished(twin.artifacts, "dc1") == []
    closing = [a for a in twin.audit() if a["phase"] == "end"]
    assert {a["device"]: a["outcome"].split(":")[0] for a in closing} == {"rtsw1": "reconciled",
                                                                         "rtsw2": "reconciled"}
