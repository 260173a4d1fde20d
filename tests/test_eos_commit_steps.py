"""The EOS commit path in few eAPI requests, with every check NAPALM's own calls make, on the twin through
NAPALM and pyeapi: the requests are counted where pyeapi sends them (a pass-through count, the reply is the
twin's). A pending commit of either EOS syntax (4.32's top-level commitTimerSessionName, the earlier
pendingCommitTimer state) refuses the device; a refused line leaves nothing pending; a confirm after the
timer fired is refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pyeapi
import pytest
from napalm.base.exceptions import CommitError, MergeConfigException

from nr_run.intent import compile_site
from nr_run.lab.twin.lab import lab_down
from nr_run.platforms.base import marker_name
from nr_run.platforms.eos.sessions import SessionsUnreadable, parse_sessions
from nr_run.runbooks.deploy import commit_device, confirm_device, device_status, diff_device
from nr_run.runbooks.deploy_marker import claim_device
from nr_run.runbooks.inventory import init_nornir
from nr_run.runbooks.render import render_device
from tests.conftest import DC1, REPO
from tests.twin_site import TwinSite, site_lab_up, wait_until

# `show configuration sessions detail | json` with a commit timer running, as napalm issue #2166 quotes it
BEFORE_432 = {"sessions": {"troubleshooting": {"state": "pendingCommitTimer", "completedTime": 1739832190.84,
                                               "commitBy": 1739835851.83, "commitUser": "adminuser",
                                               "description": "", "instances": {}}},
              "maxSavedSessions": 1, "maxOpenSessions": 5, "mergeOnCommit": False}
FROM_432 = {"sessions": {"troubleshooting": {"state": "committed", "completedTime": 1739832020.18,
                                             "commitUser": "adminuser", "description": "", "instances": {}}},
            "maxSavedSessions": 1, "maxOpenSessions": 5, "mergeOnCommit": False,
            "commitTimerSessionName": "troubleshooting", "commitTimerExpireTime": 1739835681.07}


def test_both_syntaxes_name_the_pending_commit():
    for reply in (BEFORE_432, FROM_432):
        sessions = parse_sessions(reply)
        assert sessions.pending_commit == "troubleshooting" and sessions.open == ("troubleshooting",)
    done = {"sessions": {"old": {"state": "completed"}, "marker": {"state": "pending"}}}
    assert parse_sessions(done).pending_commit is None and parse_sessions(done).open == ("marker",)
    with pytest.raises(SessionsUnreadable, match="sessions detail"):      # never read as "nothing pending"
        parse_sessions({"error": "unexpected"})


class Requests:
    """The runCmds requests pyeapi sends (command lists), counted on the way out."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent: list[list] = []
        plain = pyeapi.eapilib.EapiConnection.send

        def send(conn, data):
            self.sent.append(json.loads(data)["params"]["cmds"])
            return plain(conn, data)

        monkeypatch.setattr(pyeapi.eapilib.EapiConnection, "send", send)

    def take(self) -> list[list]:
        out, self.sent = self.sent, []
        return out


def _nornir(twin: TwinSite, host: str):
    nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=twin.addresses).filter(name=host)
    nr.inventory.hosts[host].get_connection("napalm", nr.config)      # opened (its `show version`) first
    return nr


def _detail(twin: TwinSite, host: str) -> dict:
    return twin.eapi(host).run_commands(["show configuration sessions detail"])[0]


def test_dry_run_commit_and_confirm_in_seven_requests(twin: TwinSite, monkeypatch: pytest.MonkeyPatch):
    config = render_device(compile_site(DC1).devices["ctsw1"])
    before = twin.running("ctsw1")
    nr = _nornir(twin, "ctsw1")
    sent = Requests(monkeypatch)
    try:
        diffed = nr.run(task=diff_device, config=config)["ctsw1"]
        assert not diffed.failed and "\n+router bgp " in diffed[0].diff
        assert len(sent.take()) == 2                        # the session detail; load, diff and abort
        assert twin.running("ctsw1") == before and parse_sessions(_detail(twin, "ctsw1")).open == ()
        sent.take()                                         # the test's own reads

        committed = nr.run(task=commit_device, config=config, revert_in=120)["ctsw1"]
        assert not committed.failed and committed[0].changed
        requests = sent.take()
        assert len(requests) == 3, [r[:2] for r in requests]   # the session detail; load and diff; commit timer
        assert requests[-1][-1].startswith("configure session napalm_") and \
            requests[-1][-1].endswith(" commit timer 00:02:00")
        assert twin.running("ctsw1") != before
        pending = parse_sessions(_detail(twin, "ctsw1")).pending_commit
        assert pending is not None
        status = nr.run(task=device_status)["ctsw1"]
        assert status[0].result["pending"] is True
        sent.take()                                         # the test's own reads

        confirmed = nr.run(task=confirm_device)["ctsw1"]
        assert not confirmed.failed and len(sent.take()) == 2    # the session detail; commit and write memory
        assert parse_sessions(_detail(twin, "ctsw1")).pending_commit is None
        assert nr.run(task=device_status)["ctsw1"][0].result["pending"] is False
    finally:
        nr.close_connections()


def test_a_refused_line_leaves_nothing_pending(twin: TwinSite):
    before = twin.running("rtsw1")
    nr = _nornir(twin, "rtsw1")
    try:
        out = nr.run(task=commit_device, config="interface Ethernet1\n   description ok\n   mtu 99999\n")["rtsw1"]
        assert out.failed and isinstance(out[0].exception, MergeConfigException)
        assert "invalid command" in str(out[0].exception)
        assert parse_sessions(_detail(twin, "rtsw1")).open == () and twin.running("rtsw1") == before
    finally:
        nr.close_connections()


def test_a_confirm_after_the_timer_fired_is_refused(twin: TwinSite):
    before = twin.running("ctsw2")
    nr = _nornir(twin, "ctsw2")
    try:
        out = nr.run(task=commit_device, config="interface Ethernet1\n   description timer\n", revert_in=1)["ctsw2"]
        assert not out.failed
        wait_until(lambda: twin.running("ctsw2") == before, timeout=10, what="the revert timer")
        refused = nr.run(task=confirm_device)["ctsw2"]
        assert refused.failed and isinstance(refused[0].exception, CommitError)
        assert twin.running("ctsw2") == before
    finally:
        nr.close_connections()


def test_the_device_refuses_a_commit_while_anothers_timer_runs(twin: TwinSite):
    """Between the guard and the commit another tool starts a commit timer: the commit is refused on the
    device (the reason the batched commit does not read the sessions a second time), its change never runs."""
    nr = _nornir(twin, "rtsw2")
    other = twin.eapi("rtsw2")
    try:
        from nr_run.platforms import registry

        driver = nr.inventory.hosts["rtsw2"].get_connection("napalm", nr.config)
        steps = registry.get("eos").deploy.steps
        assert steps.guard(driver) == (None, [])
        assert steps.load_diff(driver, "interface Ethernet1\n   description mine\n", replace=False, keep=True)
        other.run_commands(["configure session theirs", "interface Ethernet2", "description theirs", "end",
                            "configure session theirs commit timer 00:05:00"])
        with pytest.raises(pyeapi.eapilib.CommandError, match="pending commit timer"):
            steps.commit(driver, 60)
        running = twin.running("rtsw2")
        assert "description theirs" in running and "description mine" not in running
        assert steps.guard(driver)[0] == "theirs"
        driver.discard_config()
        other.run_commands(["configure session theirs abort"])
    finally:
        nr.close_connections()


def _older_release(doc: dict) -> None:
    doc["topology"]["nodes"]["rtsw1"]["image"] = "ceos:4.31.2F"


def test_a_pending_commit_of_either_release_refuses_the_device(tmp_path: Path):
    """rtsw1 runs 4.31 (the session state says pendingCommitTimer), ctsw1 4.32 (the session says committed; the
    detail form names the pending commit at top level, the plain form not at all): another tool's unconfirmed
    commit makes the dry run skip both, and neither device's config changes."""
    status = site_lab_up(DC1, tmp_path / "lab", _older_release)
    try:
        twin = TwinSite(tmp_path / "lab", tmp_path / "art")
        for host in ("rtsw1", "ctsw1"):
            twin.eapi(host).run_commands(["configure session theirs", "interface Ethernet1", "description theirs",
                                          "end", "configure session theirs commit timer 00:05:00"])
        plain = {h: twin.eapi(h).run_commands(["show configuration sessions"])[0] for h in ("rtsw1", "ctsw1")}
        assert plain["rtsw1"]["sessions"]["theirs"]["state"] == "pendingCommitTimer"
        assert plain["ctsw1"]["sessions"]["theirs"]["state"] == "committed"
        assert "commitTimerSessionName" not in plain["ctsw1"]
        assert _detail(twin, "ctsw1")["commitTimerSessionName"] == "theirs"
        intent = compile_site(DC1)
        marker = marker_name("dc1", datetime.now(UTC))
        nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=status["addresses"])
        try:
            for host in ("rtsw1", "ctsw1"):
                before = twin.running(host)
                out = nr.filter(name=host).run(task=diff_device, config=render_device(intent.devices[host]))[host]
                assert out.failed and "commit-confirm by someone else is pending" in str(out[0].exception)
                # the claim before a commit reads the same sessions: the unconfirmed commit holds the device
                claim = nr.filter(name=host).run(task=claim_device, marker_name=marker, on_failed=True)[host]
                assert claim.failed and "pending on the device (theirs)" in str(claim[0].exception)
                assert twin.running(host) == before and "description theirs" in before
                assert marker not in _detail(twin, host)["sessions"]
        finally:
            nr.close_connections()
    finally:
        lab_down(tmp_path / "lab")
