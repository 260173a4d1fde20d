"""A SONiC GCU commit reads nothing twice, on the twin through napalm_sonic: the running config the candidate was
loaded on is the one the patch is computed from, `show version` is read once per connection, the patch is
written, applied and removed in one command, and the revert timer is read with the APPL_DB entries. A patch GCU
refuses still fails the commit with GCU's reason."""

from __future__ import annotations

import json

import pytest
from napalm.base.exceptions import CommitError

from tests.twin_site import TwinSite, ssh_run, wait_until


def _ecn_fragment(drv) -> dict:
    running = json.loads(drv.get_config(retrieve="running")["running"])
    name, profile = sorted(running["WRED_PROFILE"].items())[0]
    return {"WRED_PROFILE": {name: {**profile, "green_min_threshold": "210000"}}}


def test_a_gcu_commit_reads_the_running_config_and_version_once(deployed_twin: TwinSite):
    drv = deployed_twin.driver("rtsw3")
    try:
        fragment = _ecn_fragment(drv)
        before = len(deployed_twin.log_commands("rtsw3"))
        drv.load_merge_candidate(config=json.dumps(fragment))
        assert "+     green_min_threshold: 210000" in drv.compare_config()
        drv.commit_config(revert_in=60)
        assert drv.last_method[0] == "gcu" and drv.has_pending_commit()
        drv.confirm_commit()
        sent = deployed_twin.log_commands("rtsw3")[before:]
        assert not drv.has_pending_commit()
        running = json.loads(drv.get_config(retrieve="running")["running"])
        assert {p["green_min_threshold"] for p in running["WRED_PROFILE"].values()} >= {"210000"}
        assert drv.apply_method(running, running)[0] == "gcu"      # decided again: no second `show version`
        sent_after = deployed_twin.log_commands("rtsw3")[before + len(sent):]
    finally:
        drv.close()
    assert sum(c == "show runningconfiguration all" for c in sent) == 1          # the load's, for the patch too
    assert sum(c == "show version" for c in sent + sent_after) == 1
    applies = [c for c in sent if "config apply-patch" in c]
    assert applies and all(c.startswith("cat > ") and "; rm -f " in c for c in applies)
    assert not any(c.startswith(("cat > ", "rm -f ")) and "apply-patch" not in c for c in sent)
    # the apply's verify reads the timer in its APPL_DB command (here no buffer or port entry changes: the
    # command is the timer's read alone), marked so its status is told apart from the entries
    verify = [c for c in sent if "echo nr-run-revert-timer $?" in c]
    assert verify and all(c.index("systemctl is-active --quiet napalm-sonic-revert.timer") > c.rfind("HGETALL")
                          for c in verify)


def test_a_patch_gcu_refuses_fails_with_its_reason(deployed_twin: TwinSite):
    drv = deployed_twin.driver("rtsw4")
    try:
        before = drv.get_config(retrieve="running")["running"]
        with pytest.raises(CommitError) as refused:
            drv._apply([{"op": "remove", "path": "/NO_SUCH_TABLE/nothing"}], "refused")
        assert str(refused.value) and "exited 0" not in str(refused.value)
        assert drv.get_config(retrieve="running")["running"] == before
    finally:
        drv.close()


def test_the_switch_refuses_a_commit_while_a_timer_waits(deployed_twin: TwinSite):
    """The driver does not read the timer before a commit: the switch refuses the commit's own timer while one
    waits (the unit exists), before anything changes, and the refused commit's checkpoint is removed."""
    drv = deployed_twin.driver("rtsw3")
    try:
        fragment = _ecn_fragment(drv)
        client = deployed_twin.ssh("rtsw3", password="YourPaSsWoRd")
        try:
            assert ssh_run(client, "sudo systemd-run --on-active=300 --unit=napalm-sonic-revert true")[0] == 0
            checkpoints = ssh_run(client, "sudo config list-checkpoints")[1]
            before = drv.get_config(retrieve="running")["running"]
            drv.load_merge_candidate(config=json.dumps(fragment))
            with pytest.raises(CommitError, match="already exists"):
                drv.commit_config(revert_in=60)
            assert drv.get_config(retrieve="running")["running"] == before
            assert ssh_run(client, "sudo config list-checkpoints")[1] == checkpoints
        finally:
            ssh_run(client, "sudo systemctl stop napalm-sonic-revert.timer")
            client.close()
    finally:
        drv.close()


def test_a_confirm_after_the_timer_fired_saves_nothing(deployed_twin: TwinSite):
    drv = deployed_twin.driver("rtsw4")
    try:
        fragment = _ecn_fragment(drv)
        before = drv.get_config(retrieve="running")["running"]
        saved = drv.get_config(retrieve="startup")["startup"]
        drv.load_merge_candidate(config=json.dumps(fragment))
        drv.commit_config(revert_in=1)
        assert drv.get_config(retrieve="running")["running"] != before
        wait_until(lambda: not drv.has_pending_commit(), timeout=15, what="the revert timer")
        with pytest.raises(CommitError, match="no pending commit to confirm"):
            drv.confirm_commit()
        assert drv.get_config(retrieve="running")["running"] == before
        assert drv.get_config(retrieve="startup")["startup"] == saved
    finally:
        drv.close()
