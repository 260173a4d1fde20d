"""What people read: line-oriented progress when not on a terminal, full width, a summary before long diffs,
diffs that keep their markers when wrapped, -q/-v, one exit code for an empty selection, large RDMA results
summarised."""

from __future__ import annotations

import re

import pytest

from nr_run.cli.main import main
from nr_run.runbooks.check import CheckReport, print_report
from tests.conftest import DC1

LINE = re.compile(r"^\d\d:\d\d:\d\d (== .+|[\w-]+: .+)$")


def test_dry_run_prints_progress_lines_then_a_summary_not_1000_lines_of_diff(twin, capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    capsys.readouterr()
    assert twin.cli("deploy") == 2
    out = capsys.readouterr().out.splitlines()
    progress = [ln for ln in out if LINE.match(ln)]
    assert any(ln.endswith("rtsw1: diffing") for ln in progress) and any("rtsw1: diffed" in ln for ln in progress)
    assert any("== diffing 10 device(s)" in ln for ln in progress)      # six switches and four servers' NICs
    summary = next(i for i, ln in enumerate(out) if re.search(r"\d+ diff lines on 10 device\(s\): full diffs in", ln))
    assert len(out) < 120 and summary > 0
    assert not any(ln.startswith("+") for ln in out)
    assert max(len(ln) for ln in out) > 80          # not cut to 80 columns when piped


def test_show_diff_wraps_long_lines_keeping_markers(twin, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    capsys.readouterr()
    assert twin.cli("deploy", "--hosts", "rtsw1", "--show-diff", "-q") == 2
    out = capsys.readouterr().out.splitlines()
    start = next(i for i, ln in enumerate(out) if "rtsw1 (eos)" in ln)
    body = [ln for ln in out[start + 1:] if ln.strip()]
    diff = body[:next((i for i, ln in enumerate(body) if ln.startswith(("deploy", "dry run", "┏", "╭", "┃", "artifacts:"))), len(body))]
    assert len(diff) > 20 and all(ln[:1] in "+- @" for ln in diff), [ln for ln in diff if ln[:1] not in "+- @"][:3]
    assert all(len(ln) <= 40 for ln in diff)
    assert any(ln.startswith("+") and len(ln) == 39 for ln in diff)     # a long line wrapped at the width


def test_quiet_prints_only_what_failed(twin, capsys):
    capsys.readouterr()
    twin.cli("check", "--checks", "pfc", "-q")
    quiet = capsys.readouterr().out
    twin.cli("check", "--checks", "pfc")
    normal = capsys.readouterr().out
    twin.cli("check", "--checks", "pfc", "-v")
    verbose = capsys.readouterr().out
    assert len(quiet) < len(normal) < len(verbose)
    assert not LINE.search(quiet.splitlines()[0]) and "checks" not in quiet.split("\n", 1)[1][:200].lower()
    assert "passed" in verbose


def test_quiet_deploy_with_nothing_to_do_is_one_line_not_an_empty_table(deployed_twin, capsys):
    capsys.readouterr()
    assert deployed_twin.cli("deploy", "-q") == 0
    out = capsys.readouterr().out
    assert "10 device(s): no change" in out and "┃ device" not in out


def test_empty_selection_exits_3_in_table_and_json_mode(capsys):
    inv = str(DC1.parent)
    assert main(["render", "--site", "dc1", "--inventory-dir", inv, "--hosts", "rtsw1", "--role", "ctsw"]) == 3
    assert main(["render", "--site", "dc1", "--inventory-dir", inv, "--hosts", "rtsw1", "--role", "ctsw",
                 "--json"]) == 3
    assert "no switch matches" in capsys.readouterr().err


def _rdma_report(n: int, failed: set[tuple[int, int]]) -> CheckReport:
    cells = [{"src": f"gpu{i}:eth1", "dst": f"gpu{j}:eth1", "ping": (i, j) not in failed, "loss_pct": 0.0,
              "gbps": 390.0 + i, "status": "fail" if (i, j) in failed else "pass", "detail": "100% loss"}
             for i in range(n) for j in range(n) if i != j]
    return CheckReport(site="big", checks=["rdma"], findings=[], probe_results={"rdma": {
        "pattern": "all", "sources": sorted({c["src"] for c in cells}),
        "destinations": sorted({c["dst"] for c in cells}), "cells": cells}})


def test_large_rdma_results_are_summarised_with_failures_listed(capsys):
    from rich.console import Console

    console = Console(width=120, force_terminal=False)
    print_report(_rdma_report(64, {(3, 7), (10, 2)}), console)
    out = capsys.readouterr().out
    assert "RDMA (all): 4032 pairs, 4030 passed, 2 failed (2 unreachable)" in out
    assert "gpu3:eth1 -> gpu7:eth1: unreachable" in out and "gpu10:eth1 -> gpu2:eth1: unreachable" in out
    assert len(out.splitlines()) < 20 and "…" not in out
    print_report(_rdma_report(4, set()), console)
    assert "src \\ dst" in capsys.readouterr().out       # a small matrix is still a grid


def test_lab_says_when_it_starts_a_temporary_twin(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(tmp_path / "no-lab-here"))
    capsys.readouterr()
    main(["check", "--site", "dc1", "--lab", "--checks", "bgp", "--artifacts", str(tmp_path / "a")])
    assert "no lab twin running for dc1: starting a temporary one" in capsys.readouterr().out


def test_check_and_compliance_show_progress_and_say_where_reports_went(deployed_twin, capsys, tmp_path):
    capsys.readouterr()
    assert deployed_twin.cli("check", "--checks", "pfc,counters") == 0
    out = capsys.readouterr().out.splitlines()
    assert any(re.match(r"^\d\d:\d\d:\d\d == collecting state from \d+ device\(s\)$", ln) for ln in out)
    assert any(re.match(r"^\d\d:\d\d:\d\d rtsw1: collected$", ln) for ln in out)
    assert any("probe CounterResample(interval_s=0.2)" in ln for ln in out)
    assert any(ln.startswith("results: ") for ln in out)
    assert deployed_twin.cli("compliance", "--format", "html,prom", "--out", str(tmp_path / "r")) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1].startswith("compliance dc1: ok; no drift; checks: PASS dc1: ")
    assert f"reports: {tmp_path / 'r' / 'compliance.html'}, {tmp_path / 'r' / 'nr_run.prom'}" in out
    prom = (tmp_path / "r" / "nr_run.prom").read_text()
    assert 'nr_run_compliance_success{site="dc1"} 1' in prom
    assert 'nr_run_port_pfc_rx_pause_frames_total{site="dc1",device="rtsw1",port="Ethernet1"}' in prom


@pytest.mark.long     # the default run: the same lines in test_deploy_verdict's failed batch (a shorter commit)
def test_commit_prints_a_line_per_stage_and_device_when_not_on_a_terminal(twin, capsys):
    capsys.readouterr()
    assert twin.cli("deploy", "--commit", "--yes", "--confirm-timeout", "60", "--skip-checks") == 0
    out = capsys.readouterr().out.splitlines()
    phases = [ln.split(" == ", 1)[1] for ln in out if LINE.match(ln) and " == " in ln]
    assert "canary: rtsw1, ctsw1" in phases and "batch 1: rtsw3" in phases
    assert phases.index("canary: rtsw1, ctsw1") < phases.index("batch 1: rtsw3")
    confirmed = [ln for ln in out if LINE.match(ln) and ln.endswith(": confirmed")]
    assert len(confirmed) == 10


@pytest.mark.long
def test_compliance_every_prints_when_each_run_happened(deployed_twin, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import REPO
    from tests.twin_site import FAST_CHECKS

    fast = [f"--option={c}.{k}={v}" for c, opts in FAST_CHECKS.items() for k, v in opts.items()]
    env = {**os.environ, "NR_RUN_LAB_STATE_DIR": str(deployed_twin.state)}
    proc = subprocess.Popen([sys.executable, "-m", "nr_run.cli.main", "compliance", "--site", "dc1", "--lab",
                             "--every", "1h", "--format", "prom", "--artifacts", str(tmp_path / "a"), "-q", *fast],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not any("next at" in ln for ln in lines):
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"
    assert any(re.match(rf"^{stamp} compliance run started$", ln) for ln in lines), (lines, err[-2000:])
    assert any(re.match(rf"^{stamp} compliance run exit 0 after \d+ s; next at {stamp}$", ln) for ln in lines), lines
