"""Device-side deploy markers against the twin, through real clients (pyeapi, SSH): a deploy from another
host (another lock folder, so the host lock does not see it) holds two switches; this deploy refuses exactly
those, names the marker and its age, leaves them as found, and takes them only with --break-lock."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from nr_run.platforms.base import marker_name
from tests.twin_site import SWITCHES, TwinSite, run_json, ssh_run


def _eos_sessions(twin: TwinSite, host: str) -> dict:
    return twin.eapi(host).run_commands(["show configuration sessions"])[0]["sessions"]


def _sonic_checkpoints(twin: TwinSite, host: str) -> list[dict]:
    client = twin.ssh(host, password="YourPaSsWoRd")
    try:
        rc, out = ssh_run(client, "sudo config list-checkpoints --time")
    finally:
        client.close()
    assert rc == 0, out
    return json.loads(out)


def _other_operator(twin: TwinSite, minutes_ago: int) -> str:
    """Mark ctsw1 and rtsw3 as another deploy would: a pending EOS session, a SONiC checkpoint."""
    name = marker_name("dc1", datetime.now(UTC) - timedelta(minutes=minutes_ago))
    twin.eapi("ctsw1").run_commands([f"configure session {name}", "end"])
    client = twin.ssh("rtsw3", password="YourPaSsWoRd")
    try:
        rc, out = ssh_run(client, f"sudo config checkpoint {name}")
    finally:
        client.close()
    assert rc == 0, out
    return name


@pytest.mark.long     # by default: a live marker refused, a dead run's markers released (the last two tests)
def test_devices_held_by_another_deploy_are_refused_and_taken_only_with_break_lock(twin, capsys, tmp_path,
                                                                                  monkeypatch):
    monkeypatch.setenv("NR_RUN_LOCK_DIR", str(tmp_path / "this-host"))
    theirs = _other_operator(twin, minutes_ago=7)
    before = {h: twin.running(h) for h in ("ctsw1", "rtsw3")}

    rc, report = run_json(twin, capsys, "deploy", "--commit", "--yes", "--confirm-timeout", "60")
    assert rc == 1
    by = {d["device"]: d for d in report["devices"]}
    # EOS does not date a session: the age is the one in the marker's name; SONiC dates its checkpoint file
    ages = {"ctsw1": r"placed 7 min ago", "rtsw3": r"placed \d+ s ago"}
    for host in ("ctsw1", "rtsw3"):
        assert by[host]["state"] == "skipped", by[host]
        assert re.match(rf"held by another nr-run deploy: marker {theirs} \({ages[host]}\); not touching it "
                        r"\(--break-lock removes the marker\)$", by[host]["detail"]), by[host]["detail"]
        assert twin.running(host) == before[host]                       # not touched
    assert all(by[h]["state"] == "confirmed" for h in SWITCHES if h not in ("ctsw1", "rtsw3")), by
    assert all("ctsw1" not in s["devices"] and "rtsw3" not in s["devices"] for s in report["stages"])
    # their markers are left as found; ours are gone once the deploy ended
    assert _eos_sessions(twin, "ctsw1")[theirs]["state"] == "pending"
    assert [c["name"] for c in _sonic_checkpoints(twin, "rtsw3") if c["name"].startswith("nr-run-")] == [theirs]
    for host in ("ctsw2", "rtsw1", "rtsw2"):
        assert not [s for s in _eos_sessions(twin, host) if s.startswith("nr-run-")]
    assert not [c for c in _sonic_checkpoints(twin, "rtsw4") if c["name"].startswith("nr-run-")]

    rc, report = run_json(twin, capsys, "deploy", "--commit", "--yes", "--confirm-timeout", "60", "--break-lock")
    by = {d["device"]: d for d in report["devices"]}
    assert rc == 0, report["message"]
    assert by["ctsw1"]["state"] == by["rtsw3"]["state"] == "confirmed"
    assert theirs not in _eos_sessions(twin, "ctsw1")
    assert not [c for c in _sonic_checkpoints(twin, "rtsw3") if c["name"].startswith("nr-run-")]
    log = (twin.artifacts / "runs" / "dc1").glob("*-deploy/run.log")
    assert any(f"removed marker {theirs}" in p.read_text() for p in log)


@pytest.mark.long
def test_the_marker_is_on_the_devices_while_the_deploy_holds_them(twin, capsys, monkeypatch):
    """A stage's post-check sees this run's marker on every device of the rollout (read from the twin by
    another client while the deploy runs), named after the run folder."""
    seen: dict[str, list[str]] = {}
    from nr_run.runbooks import deploy_checks

    original = deploy_checks.StageGate.stage

    def spy(self, nr, names, at_intent):
        seen["ctsw1"] = [s for s, v in _eos_sessions(twin, "ctsw1").items()
                         if s.startswith("nr-run-dc1-") and v["state"] == "pending"]
        seen["rtsw4"] = [c["name"] for c in _sonic_checkpoints(twin, "rtsw4") if c["name"].startswith("nr-run-dc1-")]
        return original(self, nr, names, at_intent)

    monkeypatch.setattr(deploy_checks.StageGate, "stage", spy)
    rc, report = run_json(twin, capsys, "deploy", "--commit", "--yes", "--confirm-timeout", "60")
    assert rc == 0, report["message"]
    stamp = report["artifacts"].rsplit("/", 1)[1].split("-")[0]
    assert seen["ctsw1"] == seen["rtsw4"] == [f"nr-run-dc1-{stamp}"]


@pytest.mark.long
def test_a_marker_left_by_a_dead_run_of_this_artifacts_folder_is_taken_over(twin, capsys):
    """A deploy killed mid-rollout leaves its markers (and its run folder); the next run from the same
    artifacts folder, holding the host's site lock, removes them without --break-lock."""
    stamp = (datetime.now(UTC) - timedelta(minutes=3)).strftime("%Y%m%dT%H%M%S%fZ")
    (twin.artifacts / "runs" / "dc1" / f"{stamp}-deploy").mkdir(parents=True)
    left = f"nr-run-dc1-{stamp}"
    twin.eapi("rtsw1").run_commands([f"configure session {left}", "end"])
    rc, report = run_json(twin, capsys, "deploy", "--commit", "--yes", "--confirm-timeout", "60")
    assert rc == 0, report["message"]
    assert {d["device"]: d["state"] for d in report["devices"]}["rtsw1"] == "confirmed"
    assert left not in _eos_sessions(twin, "rtsw1")
    log = (twin.artifacts / report["artifacts"]).joinpath("run.log").read_text()
    detail = (f"marker {left} (placed 3 min ago) of a dead run (an earlier deploy of this artifacts folder, no "
              "longer running) removed after reading the device back: no commit pending")
    assert f"rtsw1: {detail}" in log
    assert report["markers_released"] == [{"device": "rtsw1", "marker": left, "detail": detail}]


@pytest.mark.long
def test_a_session_only_shaped_like_a_marker_is_another_tools_and_never_removed(twin, capsys):
    """Session names come from the device: 'nr-run-dc1-<month 13>' is no marker of ours. It refuses rtsw1 as any
    other tool's pending session does (no traceback from its stamp), even with --break-lock, and stays."""
    odd = "nr-run-dc1-20261399T999999Z"
    twin.eapi("rtsw1").run_commands([f"configure session {odd}", "end"])
    rc, report = run_json(twin, capsys, "deploy", "--commit", "--yes", "--confirm-timeout", "60", "--break-lock")
    by = {d["device"]: d for d in report["devices"]}
    assert rc == 1 and by["rtsw1"]["state"] == "skipped", by["rtsw1"]
    assert by["rtsw1"]["detail"] == f"another configuration session is pending on the device ({odd}); not touching it"
    assert _eos_sessions(twin, "rtsw1")[odd]["state"] == "pending"


def test_marker_names_are_exact() -> None:
    from nr_run.platforms.base import is_marker, marker_time

    name = marker_name("dc1", datetime(2026, 12, 1, 13, 30, 0, 123456, tzinfo=UTC))
    assert name == "nr-run-dc1-20261201T133000123456Z" and is_marker(name)
    assert marker_time(name) == datetime(2026, 12, 1, 13, 30, 0, 123456, tzinfo=UTC)
    for odd in ("nr-run-dc1-20261399T999999Z", "nr-run-dc1-20261201T133000Z extra", "nr-run--20261201T133000Z",
                "nr-run-dc1-2026-12-01", "other-dc1-20261201T133000Z"):
        assert not is_marker(odd) and marker_time(odd) is None, odd


@pytest.mark.long
def test_a_canary_taken_after_the_dry_run_is_replaced_not_dropped(twin, capsys, monkeypatch):
    """Another deploy marks rtsw1, the canary RTSW, after this run's diff and before its claim: the rollout
    picks another canary RTSW instead of sending the first batch out without one."""
    from nr_run.intent import compile_site
    from nr_run.runbooks import deploy
    from nr_run.runbooks.plan import plan_rollout
    from tests.conftest import DC1

    [canary] = [n for n in plan_rollout(compile_site(DC1), list(SWITCHES))[0].devices if n.startswith("rtsw")]
    assert canary == "rtsw1"                       # the canary RTSW of a rollout of every switch
    theirs = marker_name("dc1", datetime.now(UTC) - timedelta(seconds=5))
    real_claim = deploy.claim_device

    def rival_first(task, **kwargs):
        if task.host.name == canary:             # the other operator's marker lands just before our claim
            twin.eapi(canary).run_commands([f"configure session {theirs}", "end"])
        return real_claim(task, **kwargs)

    monkeypatch.setattr(deploy, "claim_device", rival_first)
    rc, report = run_json(twin, capsys, "deploy", "--commit", "--yes", "--confirm-timeout", "60")
    assert rc == 1 and {d["device"]: d["state"] for d in report["devices"]}[canary] == "skipped"
    first = report["stages"][0]
    assert first["name"] == "canary", report["stages"]
    assert len([n for n in first["devices"] if n.startswith("rtsw")]) == 1, report["stages"]
    assert all(canary not in s["devices"] for s in report["stages"])


def test_markers_of_a_dead_run_of_another_operator_here_are_released_by_the_next_run(twin, capsys, tmp_path):
    """A deploy on this host (another operator's artifacts folder) died holding ctsw1 and rtsw3: its process is
    gone, its marker is still listed in the host's lock folder. The next run of anyone here, even a dry run
    that changes nothing on those devices, reads them back and takes the markers off."""
    import os
    import subprocess
    import sys

    twin.deploy("ctsw1")                 # nothing left to change there: released all the same
    name = _other_operator(twin, minutes_ago=7)
    listed = ("import pathlib; from nr_run.runbooks.lock import register_marker; "
              f"register_marker('dc1', {name!r}, pathlib.Path({os.environ['NR_RUN_LOCK_DIR']!r}))")
    assert subprocess.run([sys.executable, "-c", listed], timeout=60).returncode == 0     # then it is dead
    rc, report = run_json(twin, capsys, "deploy")
    assert rc == 2
    assert sorted(r["device"] for r in report["markers_released"]) == ["ctsw1", "rtsw3"]
    assert all("of a dead run (pid " in r["detail"] and "no longer running" in r["detail"]
               for r in report["markers_released"])
    assert {d["device"]: d["state"] for d in report["devices"]}["ctsw1"] == "no change"
    assert name not in _eos_sessions(twin, "ctsw1")
    assert name not in [c["name"] for c in _sonic_checkpoints(twin, "rtsw3")]


def test_a_live_runs_marker_elsewhere_is_still_refused(twin, capsys):
    """A marker with no dead run behind it (another host's deploy, say) still refuses the device."""
    name = _other_operator(twin, minutes_ago=1)
    rc, report = run_json(twin, capsys, "deploy")
    assert report["markers_released"] == []
    by = {d["device"]: d for d in report["devices"]}
    assert by["ctsw1"]["state"] == "skipped" and name in by["ctsw1"]["detail"]
