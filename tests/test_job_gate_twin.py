"""`nr-run job-check` fails closed on what it knows, against the dc1 twin through the real CLI process (as a Slurm
prolog runs it): a finding drains whatever else did not answer, a switch past the budget is named, the site's
catalog decides whether "not checked" alone drains, and the job's own cabling (a missing rail link, a swapped rail
cable) is judged. Slowness and faults go in through the twin's control API, as `nr-run lab fault` does; the
budget is the product's own (a switch made slower than it never answers in time)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import DC1
from tests.twin_site import TwinSite

SLOW_MS = 20_000          # far past any budget below: the switch never answers in time


def job_check(inv: Path, nodes: str, *extra: str) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "nr_run.cli.main", "job-check", "--site", "dc1",
                           "--inventory-dir", str(inv), "--lab", "--nodes", nodes,
                           "--option", "counters.interval_s=0.2", *extra],
                          env=dict(os.environ), capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def site_copy(tmp_path: Path, edit_fabric=None, catalog: dict | None = None) -> Path:
    inv = tmp_path / "inv"
    shutil.copytree(DC1, inv / "dc1")
    if edit_fabric is not None:
        path = inv / "dc1" / "fabric.yaml"
        doc = yaml.safe_load(path.read_text())
        edit_fabric(doc)
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
    if catalog is not None:
        (inv / "dc1" / "catalog.yaml").write_text(yaml.safe_dump(catalog))
    return inv


@pytest.mark.long
def test_a_slow_switch_does_not_hide_a_down_job_port(deployed_twin: TwinSite, tmp_path: Path) -> None:
    """gpu1's NIC on rtsw1 Ethernet3 is down and ctsw2 answers far past the budget: the job drains on the port
    that was read, and the line names the switch that was not."""
    deployed_twin.fault("slow", device="ctsw2", ms=SLOW_MS)
    deployed_twin.fault("link_down", device="rtsw1", port="Ethernet3")
    rc, out, err = job_check(DC1.parent, "gpu[1-2]", "--budget", "8", "--json")
    verdict = json.loads(out)
    assert rc == 1 and verdict["verdict"] == "drain", out + err
    assert verdict["line"].startswith("drain: rtsw1 Ethernet3: oper down (expected oper up)"), verdict["line"]
    assert verdict["line"].endswith("; 1 switch(es) not checked (no answer within the 8 s budget): ctsw2")
    assert verdict["timed_out"] and list(verdict["unreadable"]) == ["ctsw2"]
    assert {(f["device"], f["port"]) for f in verdict["findings"]} >= {("rtsw1", "Ethernet3")}


@pytest.mark.long
def test_the_site_decides_whether_not_checked_drains(deployed_twin: TwinSite, tmp_path: Path) -> None:
    """Nothing wrong on the switches that answered, ctsw2 past the budget: by default the line names it and exits
    4 (the prolog lets the job start); a catalog with job_check.unknown=drain drains instead."""
    deployed_twin.fault("slow", device="ctsw2", ms=SLOW_MS)
    rc, out, err = job_check(DC1.parent, "gpu[1-2]", "--budget", "8")
    assert rc == 4, out + err
    assert out == ("unknown: 1 switch(es) not checked (no answer within the 8 s budget): ctsw2; "
                   "nothing to drain on the 3 switch(es) checked\n"), out
    inv = site_copy(tmp_path, catalog={"version": 1, "job_check": {"unknown": "drain", "budget_s": 8}})
    rc, out, err = job_check(inv, "gpu[1-2]")
    assert rc == 1, out + err
    assert out.startswith("drain: 1 switch(es) not checked (no answer within the 8 s budget): ctsw2"), out


def test_a_swapped_rail_cable_inside_the_job_is_named(deployed_twin: TwinSite) -> None:
    """gpu1's and gpu2's first NICs swapped at rtsw1 (both in the job): LLDP on the job's RTSW ports names it."""
    deployed_twin.fault("cable_swap", device_a="rtsw1", port_a="Ethernet3", device_b="rtsw1", port_b="Ethernet4")
    rc, out, err = job_check(DC1.parent, "gpu[1-2]", "--json")
    verdict = json.loads(out)
    assert rc == 1, out + err
    cabling = {(f["device"], f["port"], f["observed"]) for f in verdict["findings"] if f["check"] == "cabling"}
    assert cabling == {("rtsw1", "Ethernet3", "gpu2:eth1"), ("rtsw1", "Ethernet4", "gpu1:eth1")}, verdict
    assert verdict["line"] == "drain: rtsw1 Ethernet3 LLDP sees gpu2:eth1 (planned gpu1:eth1) (+1 more)"


def test_a_nic_without_a_rail_link_is_a_finding_not_a_smaller_job(deployed_twin: TwinSite, tmp_path: Path) -> None:
    """The inventory removes gpu2's second rail link: a job on gpu2 drains naming that NIC, and its other NIC
    is still checked (the verdict counts both of the node's compute NICs' fates, not 1 of 1)."""
    def remove(doc: dict) -> None:
        doc["cabling"]["overrides"].append({"a": "gpu2:eth2", "remove": True})

    inv = site_copy(tmp_path, remove)
    rc, out, err = job_check(inv, "gpu2", "--json")
    verdict = json.loads(out)
    assert rc == 1, out + err
    assert verdict["line"] == ("drain: gpu2 eth2: no rail link in the cabling plan "
                               "(the job would run short of a rail)"), verdict["line"]
    assert [n["nic"] for n in verdict["nics"]] == ["eth1"]
    assert [(f["check"], f["device"], f["port"]) for f in verdict["findings"]] == [("rails", "gpu2", "eth2")]


def test_the_budget_runs_on_the_injected_clock(deployed_twin: TwinSite) -> None:
    """Python API: a clock that says the budget is spent at the first look judges what answered (nothing yet)
    and names every switch, without waiting; the real clock lets them all answer."""
    from nr_run.intent import compile_site
    from nr_run.runbooks.inventory import init_nornir
    from nr_run.runbooks.job import job_scope, run_job_check
    from tests.conftest import REPO

    intent = compile_site(DC1)
    scope = job_scope(intent, ["gpu1", "gpu2"])
    nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=deployed_twin.addresses)
    ticks = iter([0.0] + [100.0] * 1000)
    try:
        spent = run_job_check(nr, intent, scope, 10.0, {"counters": {"interval_s": 0.2}}, clock=lambda: next(ticks))
        assert spent.verdict == "unknown" and spent.timed_out and not spent.findings
        assert sorted(spent.unknown) == ["ctsw1", "ctsw2", "rtsw1", "rtsw2"]
        assert set(spent.unknown.values()) == {"no answer within the 10 s budget"}
    finally:
        nr.close_connections()
    # the abandoned calls still hold the first Nornir's connections: a new run takes its own
    fresh = init_nornir("dc1", REPO / "inventory", lab=True, address_map=deployed_twin.addresses)
    try:
        ok = run_job_check(fresh, intent, scope, 60.0, {"counters": {"interval_s": 0.2}})
        assert ok.verdict == "ok" and not ok.unknown, ok.line()
    finally:
        fresh.close_connections()


def test_a_switch_whose_check_breaks_is_named_and_the_others_still_drain(deployed_twin: TwinSite, monkeypatch) -> None:
    """Python API: reading ctsw2 raises (a broken answer, a bug): ctsw2 is not checked, named with why, and the
    down port on rtsw1 still drains the job."""
    from nr_run.intent import compile_site
    from nr_run.runbooks import job
    from nr_run.runbooks.inventory import init_nornir
    from tests.conftest import REPO

    real = job.check_device

    def breaks_on_ctsw2(nr, fabric, name, checks, sleep):
        if name == "ctsw2":
            raise ValueError("unparsable answer")
        return real(nr, fabric, name, checks, sleep)

    monkeypatch.setattr(job, "check_device", breaks_on_ctsw2)
    deployed_twin.fault("link_down", device="rtsw1", port="Ethernet3")
    intent = compile_site(DC1)
    nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=deployed_twin.addresses)
    try:
        verdict = job.run_job_check(nr, intent, job.job_scope(intent, ["gpu1", "gpu2"]), 60.0,
                                    {"counters": {"interval_s": 0.2}})
    finally:
        nr.close_connections()
    assert verdict.drain and verdict.unknown == {"ctsw2": "check failed: ValueError: unparsable answer"}
    assert verdict.line().startswith("drain: rtsw1 Ethernet3: oper down (expected oper up)")
    assert verdict.line().endswith("; 1 switch(es) not checked (unreadable): ctsw2")
