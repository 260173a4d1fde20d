"""The interrupt matrix of a drained apply (a buffer pool change on SONiC rtsw3, which GCU refuses: TSA, config
reload, TSB): SIGTERM, SIGINT or SIGKILL before the apply, after it, during the stage's post-checks and during
the confirm, and on a full disk (all `long`); and what the next run does with a switch an interrupted drained
apply, or an operator, left shifted away, and a revert timer that fires during a drained apply.

The cases and their assertions are in tests/interrupt_cases.py."""

from __future__ import annotations

import json

import pytest

from nr_run.runbooks.records import unfinished
from tests.interrupt_cases import full_disk_case, full_disk_cases, matrix, pending, signal_case, sonic
from tests.twin_site import run_json


@pytest.mark.parametrize(("kind", "step", "sig"), matrix("drained"))
def test_a_signal_at_any_step_leaves_the_device_reverted_or_confirmed_and_reconciled(
        deployed_twin, tmp_path, capsys, kind, step, sig):
    signal_case(deployed_twin, tmp_path, capsys, kind, step, sig)


@pytest.mark.parametrize(("kind", "sig"), full_disk_cases("drained"))
def test_a_signal_on_a_full_disk_leaves_the_device_reverted_or_kept_and_reconciled(
        deployed_twin, tmp_path, capsys, kind, sig):
    full_disk_case(deployed_twin, tmp_path, capsys, kind, sig)


def test_a_switch_left_shifted_away_is_shifted_back_by_the_next_run(twin, capsys):
    """A drained apply died with rtsw3 in maintenance mode and no timer left to undrain it (say, the switch
    restarted and lost it): the next run reads it back, shifts traffic back (TSB) and says so."""
    from nr_run.runbooks.records import RunRecords

    assert "Maintenance" in sonic(twin, "rtsw3", "sudo TSA")
    before = twin.running("rtsw3")
    dead = RunRecords(twin.artifacts, "dc1", "deploy")
    dead.audit_start("rtsw3", "commit", "+ a buffer pool change", before="not the config it runs",
                     method="drained apply: GCU refuses BUFFER_POOL changes")
    rc, report = run_json(twin, capsys, "deploy", "--hosts", "rtsw3")
    assert rc == 2, report
    [item] = report["reconciled"]
    assert item["device"] == "rtsw3" and item["traffic"] == "restored" and item["state"] == "kept"
    assert item["outcome"].startswith("traffic shifted back (TSB): the interrupted drained apply had left it")
    assert sonic(twin, "rtsw3", "TSC") == "System Mode: Normal\n"
    assert twin.running("rtsw3") == before
    assert unfinished(twin.artifacts, "dc1") == []


def test_a_switch_an_operator_drained_is_left_drained(twin, capsys):
    """Maintenance mode nr-run did not cause (no drained apply in the audit log) is the operator's: kept."""
    from nr_run.runbooks.records import RunRecords

    sonic(twin, "rtsw3", "sudo TSA")
    dead = RunRecords(twin.artifacts, "dc1", "deploy")
    dead.audit_start("rtsw3", "commit", "+ an ECN change", before="x", method="gcu: GCU may patch WRED_PROFILE")
    rc, report = run_json(twin, capsys, "deploy", "--hosts", "rtsw3")
    assert [r["traffic"] for r in report["reconciled"]] == [""]
    assert sonic(twin, "rtsw3", "TSC") == "System Mode: Maintenance\n"
    sonic(twin, "rtsw3", "sudo TSB")


def test_a_timer_that_fires_during_a_drained_apply_ends_the_wait(deployed_twin):
    """A confirm window shorter than the apply: the timer (armed first) restores the switch while the driver
    still waits for APPL_DB; the driver stops waiting at once and says why, instead of its 480 s verify."""
    from napalm.base.exceptions import CommitError

    before = json.loads(deployed_twin.running("rtsw3"))
    candidate = json.loads(json.dumps(before))
    pool = candidate["BUFFER_POOL"]["ingress_lossless_pool"]
    pool["xoff"] = str(int(pool["xoff"]) + 4096)
    deployed_twin.fault("appl_lag", device="rtsw3", ms=60000)
    drv = deployed_twin.driver("rtsw3")
    try:
        drv.load_replace_candidate(config=json.dumps(candidate))
        with pytest.raises(CommitError, match="revert timer fired before the change was in APPL_DB"):
            drv.commit_config(revert_in=2)
        assert drv.last_method[0] == "drained apply"
    finally:
        drv.close()
        deployed_twin.clear_faults()
    assert json.loads(deployed_twin.running("rtsw3")) == before
    assert sonic(deployed_twin, "rtsw3", "TSC") == "System Mode: Normal\n"
    assert not pending(deployed_twin, "rtsw3")
