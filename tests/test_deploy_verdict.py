"""A deploy ends with one line saying what happened, and the dry run explains how each SONiC switch takes its
change: pure tests of the summary on built reports, and the CLI's last lines on the dc1 twin."""

from __future__ import annotations

import re

import pytest

from nr_run.intent import compile_site
from nr_run.runbooks.deploy import DeployReport, DeviceOutcome
from nr_run.runbooks.deploy_summary import apply_paths, prompt_note, verdict
from nr_run.runbooks.plan import Stage
from tests.conftest import DC1

LINE = re.compile(r"^\d\d:\d\d:\d\d (== .+|[\w-]+: .+)$")      # a progress line, off a terminal

FABRIC = compile_site(DC1)
SWITCHES = ["ctsw1", "ctsw2", "rtsw1", "rtsw2", "rtsw3", "rtsw4"]


def _report(states: dict[str, str], **kw) -> DeployReport:
    devices = {n: DeviceOutcome(n, FABRIC.devices[n].platform, FABRIC.devices[n].role, state=s)
               for n, s in states.items()}
    return DeployReport("dc1", True, devices, **kw)


def test_a_stopped_rollout_says_what_is_left_partly_deployed_and_how_to_finish_or_undo():
    report = _report({"rtsw1": "confirmed", "ctsw1": "confirmed", "rtsw3": "rolled back", "rtsw2": "untouched",
                      "ctsw2": "untouched", "rtsw4": "untouched"},
                     stages=[Stage("canary", ("rtsw1", "ctsw1")), Stage("batch 1", ("rtsw3",))],
                     stopped_at="batch 1", message="batch 1 failed (new findings); rolled back rtsw3")
    line = verdict(report, commit=True)
    assert line.startswith("deploy dc1: stopped at batch 1; 2 confirmed (ctsw1, rtsw1); 1 rolled back (rtsw3); "
                           "3 not deployed (ctsw2, rtsw2, rtsw4): the site is partly deployed. Finish: "), line
    assert "undo: deploy --commit the previous inventory revision" in line and "\n" not in line


def test_a_device_that_could_not_be_diffed_stops_the_deploy_before_any_commit():
    report = _report({"rtsw3": "failed", **{n: "diffed" for n in SWITCHES if n != "rtsw3"}})
    assert verdict(report, commit=True) == (
        "deploy dc1: stopped before the first commit; 1 failed or unfinished (rtsw3); 5 not deployed (ctsw1, ctsw2, "
        "rtsw1, rtsw2, rtsw4): nothing committed; fix what failed (the table above) and rerun")


def test_a_commit_with_nothing_to_change_is_not_a_dry_run_and_success_states_the_final_check():
    assert verdict(_report(dict.fromkeys(SWITCHES, "no change")), commit=True) == (
        "deploy dc1: nothing to change, all 6 device(s) already at intent")
    ok = _report(dict.fromkeys(SWITCHES, "confirmed"), stages=[Stage("canary", ("rtsw1",))],
                 final_check={"passed": True, "summary": {"passed": 428, "failed": 0}, "new": [], "preexisting": []})
    assert verdict(ok, commit=True) == "deploy dc1: 6 device(s) confirmed in 1 stage(s); final check PASS (428 passed, 0 failed)"
    dry = _report({**dict.fromkeys(SWITCHES, "no change"), "rtsw3": "diffed"})
    assert verdict(dry, commit=False) == ("dry run dc1: 1 of 6 device(s) would change (rtsw3); nothing committed: "
                                          "rerun with --commit to apply")


def test_a_drained_apply_is_explained_with_its_traffic_and_time():
    report = _report({"rtsw3": "diffed", "rtsw4": "diffed", "rtsw1": "diffed"})
    report.devices["rtsw3"].method = "drained apply: BUFFER_POOL changes (GCU refuses them on th5)"
    report.devices["rtsw4"].method = "gcu: every change is GCU-patchable"
    paths = {p.device: p for p in apply_paths(report, FABRIC)}
    assert set(paths) == {"rtsw3", "rtsw4"}                     # EOS says nothing: its commit is one path
    drained = paths["rtsw3"]
    assert drained.why == "BUFFER_POOL changes (GCU refuses them on th5)"
    assert "traffic shifted away (TSA), config reload" in drained.traffic and "shifted back (TSB)" in drained.traffic
    assert "its 2 server NIC(s) on this rail lose the fabric meanwhile" in drained.traffic
    assert drained.duration.startswith("about 2-5 min; at most reload + 480 s")
    assert paths["rtsw4"].duration == "seconds" and "traffic keeps flowing" in paths["rtsw4"].traffic
    assert prompt_note(list(paths.values())).startswith("1 switch(es) take a drained apply (rtsw3): ")


@pytest.mark.long         # the default run: the same verdicts in test_deploy_twin, the CLI's printing below
def test_the_cli_ends_every_deploy_with_its_verdict(twin, capsys):
    capsys.readouterr()
    assert twin.cli("deploy") == 2
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == ("dry run dc1: 10 of 10 device(s) would change (ctsw1, ctsw2, gpu1, gpu2, gpu3, gpu4 and 4 more); "
                       "nothing committed: rerun with --commit to apply"), out[-1]
    paths = [ln for ln in out if ln.startswith("  rtsw3: ") or ln.startswith("  rtsw4: ")]
    assert "how each change is applied:" in out and len(paths) == 2, out
    assert twin.cli("deploy", "--commit", "--yes", "--confirm-timeout", "60") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith("deploy dc1: 10 device(s) confirmed in ") and "; final check PASS (" in out[-1], out[-1]
    assert twin.cli("deploy", "--commit", "--yes", "--confirm-timeout", "60") == 0
    out = capsys.readouterr().out
    assert "deploy dc1: commit" in out and "dry run" not in out
    assert out.splitlines()[-1] == "deploy dc1: nothing to change, all 10 device(s) already at intent"


def test_a_failed_batch_says_once_why_and_ends_with_what_is_left(twin, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")              # table cells on one line each: the reason is counted once
    twin.fault("commit_rejected", device="rtsw3")
    capsys.readouterr()
    assert twin.cli("deploy", "--commit", "--yes", "--confirm-timeout", "60") == 1
    out = capsys.readouterr().out
    # the live progress log says it as it happens; the summary after it says it once (the device's table row)
    summary = "\n".join(ln for ln in out.splitlines() if not re.match(r"^\d\d:\d\d:\d\d ", ln))
    assert summary.count("configuration rejected by the system") == 1, summary
    # off a terminal: a line per stage as it starts, in plan order, and one per device as it ends
    lines = out.splitlines()
    phases = [ln.split(" == ", 1)[1] for ln in lines if LINE.match(ln) and " == " in ln]
    assert phases.index("canary: rtsw1, ctsw1") < phases.index("batch 1: rtsw3"), phases
    assert sorted(ln.split()[1] for ln in lines if LINE.match(ln) and ln.endswith(": confirmed")) == \
        ["ctsw1:", "rtsw1:"]
    paths = [ln for ln in lines if ln.startswith(("  rtsw3: ", "  rtsw4: "))]
    assert "how each change is applied:" in lines and len(paths) == 2, lines
    last = out.splitlines()[-1]
    assert last.startswith("deploy dc1: stopped at batch 1; 2 confirmed (ctsw1, rtsw1); 1 failed or unfinished "
                           "(rtsw3); 7 not deployed (ctsw2, gpu1, gpu2, gpu3, gpu4, rtsw2 and 1 more): the site is partly deployed. "
                           "Finish: "), last
