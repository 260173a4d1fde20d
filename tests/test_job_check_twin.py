"""`nr-run job-check` on a generated site of 256 GPU servers against the twin at 50 ms device latency: the CLI
(a real process, as a Slurm prolog runs it) finishes within its budget, names the faulted port of the job and
ignores faults outside the job. Faults go in through the lab control API, as `nr-run lab fault` does."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from nr_run.intent import compile_site
from nr_run.lab.twin.lab import lab_clear, lab_down, lab_fault
from nr_run.runbooks.render import render_device
from tests.sitegen import generate_site
from tests.twin_site import site_lab_up

pytestmark = pytest.mark.long

BUDGET_S = 10.0


@pytest.fixture(scope="module")
def gen256(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(inventory dir, lab state) of a 256-server site whose switches boot their rendered configs (the
    topology's startup-config files, as containerlab would boot them) and whose servers run their NIC scripts
    at boot (appended to their exec commands), at 50 ms added latency."""
    root = tmp_path_factory.mktemp("gen256")
    site = generate_site(root / "inv", rtsw=64, ctsw=8, nics=2, site="gen256")
    intent = compile_site(site)
    assert len(intent.servers()) == 256
    configs = root / "configs"
    configs.mkdir()

    def boot_rendered(doc: dict) -> None:
        for name, node in doc["topology"]["nodes"].items():
            text = render_device(intent.devices[name], intent)
            if intent.devices[name].role == "gpu":
                node["exec"] = node.get("exec", []) + [ln for ln in text.splitlines() if not ln.startswith("#")]
            else:
                path = configs / name
                path.write_text(text)
                node["startup-config"] = str(path)

    state = root / "lab"
    site_lab_up(site, state, boot_rendered)
    try:
        lab_fault(state, "latency", ms=50)
        yield site.parent, state
    finally:
        lab_down(state)


def _job_check(gen256: tuple[Path, Path], nodes: str, *extra: str) -> tuple[int, str, str]:
    """job-check's exit, stdout, stderr. Whether it kept its budget is the product's own verdict: a check cut
    short by the budget says "incomplete after the N s budget" (JobVerdict.timed_out), a complete one does not."""
    inv, state = gen256
    env = {**os.environ, "NR_RUN_LAB_STATE_DIR": str(state)}
    proc = subprocess.run([sys.executable, "-m", "nr_run.cli.main", "job-check", "--site", "gen256",
                           "--inventory-dir", str(inv), "--lab", "--nodes", nodes, *extra],
                          cwd=inv, env=env, capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def test_healthy_job_passes_within_the_budget(gen256):
    rc, out, err = _job_check(gen256, "gpu[1-4,7],gpu[100-131]")
    # "ok" (not "unknown"): every switch answered within the product's own 10 s budget
    assert rc == 0, out + err
    assert out.startswith("ok: 37 node(s), 74 NIC(s), ") and out.count("\n") == 1, out
    assert "not checked" not in out


def test_a_faulted_port_of_the_job_drains_and_faults_outside_it_are_ignored(gen256):
    _, state = gen256
    # gpu3's NICs end on rtsw1 Ethernet11 and rtsw2 Ethernet80; gpu6 (rtsw1 Ethernet14) and gpu9
    # (rtsw3 Ethernet9) are not in the job
    lab_fault(state, "pfc_storm", device="rtsw2", port="Ethernet80", priority=3)
    lab_fault(state, "lossless_drops", device="rtsw1", port="Ethernet14", queue=3)
    lab_fault(state, "pfc_storm", device="rtsw3", port="Ethernet9", priority=3)
    try:
        rc, out, err = _job_check(gen256, "gpu[1-4,7],gpu[100-131]", "--budget", f"{BUDGET_S:g}")
        assert rc == 1, out + err
        assert out.startswith("drain: rtsw2 Ethernet80 prio 3 PFC storm ("), out
        assert out.count("\n") == 1 and "pause frames/s)" in out
        assert "Ethernet14" not in out and "rtsw3" not in out and "(+" not in out, out
        assert "not checked" not in out                        # every switch answered within the budget
        # a job on the other ports sees the other faults, and not this one
        rc, out, _ = _job_check(gen256, "gpu6")
        assert rc == 1 and out.startswith("drain: rtsw1 Ethernet14 queue 3 lossless drops ("), out
        rc, out, _ = _job_check(gen256, "gpu[5,8]")
        assert rc == 0 and out.startswith("ok: 2 node(s)"), out
    finally:
        lab_clear(state)
        lab_fault(state, "latency", ms=50)


@pytest.mark.parametrize("nodes, said", [
    ("gpu[1-4", "--nodes: '[' is never closed"),
    ("gpu1;reboot", "--nodes: unexpected ';'"),
    ("gpu[1-999]", "--nodes: not a GPU server of site gen256: gpu257, gpu258"),
    ("rtsw1", "--nodes: not a GPU server of site gen256: rtsw1"),
])
def test_a_bad_node_list_exits_3_before_any_device_is_read(gen256, nodes, said):
    rc, out, err = _job_check(gen256, nodes)
    assert rc == 3 and out == "" and said in err, (rc, out, err)


def test_budget_is_range_checked(gen256):
    for bad in ("0", "nan", "-1", "1e9"):
        rc, _, err = _job_check(gen256, "gpu1", "--budget", bad)
        assert rc == 3 and "--budget must be" in err, err


def test_a_switch_too_slow_for_the_budget_is_named_and_does_not_block_the_job(gen256):
    """A management plane slower than the budget: the switch is named as not checked, the others are judged,
    the exit is 4 (the prolog lets the job start: the catalog's default) and the process does not wait for the
    calls still in flight."""
    _, state = gen256
    lab_fault(state, "slow", device="rtsw1", ms=20_000)      # never answers within the budget
    try:
        rc, out, err = _job_check(gen256, "gpu[1-2]", "--budget", "8")
    finally:
        lab_clear(state, "slow")
    assert rc == 4, out + err
    assert out == ("unknown: 1 switch(es) not checked (no answer within the 8 s budget): rtsw1; "
                   "nothing to drain on the 9 switch(es) checked\n"), out


def test_an_uplink_down_drains_and_shows_the_narrower_ecmp(gen256):
    """rtsw1's uplink to ctsw1 down: the job on rtsw1/rtsw2 drains; the JSON shows both link ends down and
    7 of 8 equal-cost paths left between the job's racks."""
    import json

    _, state = gen256
    lab_fault(state, "link_down", device="rtsw1", port="Ethernet1")
    try:
        rc, out, err = _job_check(gen256, "gpu[1-2]", "--json")
    finally:
        lab_clear(state, "link_down")
    verdict = json.loads(out)
    assert rc == 1 and verdict["verdict"] == "drain", err
    assert verdict["line"] == "drain: ctsw1 Ethernet1: oper down (expected oper up) (+3 more)"
    down = {(f["device"], f["port"]) for f in verdict["findings"] if f["check"] == "interfaces"}
    assert down == {("ctsw1", "Ethernet1"), ("rtsw1", "Ethernet1")}
    ecmp = [f for f in verdict["findings"] if f["check"] == "ecmp"]
    assert sorted((f["device"], f["peer_device"]) for f in ecmp) == [("rtsw1", "rtsw2"), ("rtsw2", "rtsw1")]
    assert all(f["expected"].startswith("8 next-hops") and f["observed"].startswith("7 next-hops") for f in ecmp)
