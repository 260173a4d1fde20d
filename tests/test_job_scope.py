"""A job's scope from dc1's compiled intent, and the drain line (pure: no devices)."""

from __future__ import annotations

import pytest

from nr_run.intent import compile_site
from nr_run.runbooks.job import JobVerdict, UnknownNodes, job_scope, scoped_fabric
from nr_run.validators.base import Finding
from tests.conftest import DC1


@pytest.fixture(scope="module")
def dc1():
    return compile_site(DC1)


def test_gpu1_uses_its_rtsw_ports_every_uplink_of_those_rtsws_and_the_ctsw_ends(dc1):
    scope = job_scope(dc1, ["gpu1"])
    assert scope.nics == (("gpu1", "eth1", "rtsw1", "Ethernet3"), ("gpu1", "eth2", "rtsw2", "Ethernet3"))
    assert {d: sorted(p) for d, p in scope.ports.items()} == {
        "ctsw1": ["Ethernet1", "Ethernet2"], "ctsw2": ["Ethernet1", "Ethernet2"],
        "rtsw1": ["Ethernet1", "Ethernet2", "Ethernet3"], "rtsw2": ["Ethernet1", "Ethernet2", "Ethernet3"]}
    # gpu2's ports (Ethernet4) and the SONiC rack are outside the job
    scoped = scoped_fabric(dc1, scope)
    assert sorted(scoped.devices) == ["ctsw1", "ctsw2", "gpu1", "rtsw1", "rtsw2"]     # and the node, for its NICs
    assert [i.name for i in scoped.devices["rtsw1"].interfaces] == ["Ethernet1", "Ethernet2", "Ethernet3"]
    assert all(lk.a_device in scope.ports or lk.b_device in scope.ports for lk in scoped.links)
    assert not any("Ethernet4" in (lk.a_port, lk.b_port) and "rtsw1" in (lk.a_device, lk.b_device)
                   for lk in scoped.links)
    assert dc1.devices["rtsw1"].interfaces[3].name == "Ethernet4"        # the full intent is untouched


def test_nodes_that_are_not_servers_are_refused(dc1):
    with pytest.raises(UnknownNodes, match="not a GPU server of site dc1: rtsw1, gpu9"):
        job_scope(dc1, ["gpu1", "rtsw1", "gpu9"])


def _f(check, device, target, expected, observed, port, severity="error", kind="", index=None, value=None):
    return Finding(check, device, target, expected, observed, False, severity, "", port, kind=kind, index=index,
                   value=value)


def test_the_drain_line_names_the_worst_port_with_its_measured_rate(dc1):
    scope = job_scope(dc1, ["gpu3"])
    # the wording is the checks'; the verdict reads only the structured fields (kind, index, value)
    storm = _f("pfc", "rtsw3", "storm wording", "x", "storm detected (queue stormed)", "Ethernet16",
               kind="pfc-storm", index=3)
    rate = _f("counters", "rtsw3", "rate wording", "pause <= 50/s", "5000.0/s", "Ethernet16", "warning",
              kind="pause-rate-rx", value=5000.0)
    drops = _f("counters", "rtsw4", "drops wording", "0 drops", "200 drops in 1.0 s", "Ethernet16",
               kind="lossless-drops", index=3, value=200)
    verdict = JobVerdict(scope, findings=[storm, drops, rate])
    assert verdict.drain
    assert verdict.line() == "drain: rtsw3 Ethernet16 prio 3 PFC storm (5000.0 pause frames/s) (+1 more)"
    assert JobVerdict(scope, findings=[drops]).line() == (
        "drain: rtsw4 Ethernet16 queue 3 lossless drops (200 drops in 1.0 s)")
    ok = JobVerdict(scope, elapsed_s=1.23)
    assert not ok.drain and ok.line() == "ok: 1 node(s), 2 NIC(s), 4 switch(es) checked in 1.2 s"


def test_a_counters_option_keeps_the_short_counter_window() -> None:
    from nr_run.runbooks.job import DEFAULT_OPTIONS, merge_options

    merged = merge_options({"counters": {"max_pause_pps": 10.0}, "pfc": {"x": 1}})
    assert merged["counters"] == {"interval_s": 1.0, "max_pause_pps": 10.0} and merged["pfc"] == {"x": 1}
    assert merge_options({"counters": {"interval_s": 3.0}})["counters"]["interval_s"] == 3.0
    assert DEFAULT_OPTIONS["counters"] == {"interval_s": 1.0}          # the defaults are not modified


def test_a_finding_drains_whatever_was_not_checked_and_the_site_decides_the_rest(dc1):
    scope = job_scope(dc1, ["gpu1"])
    down = _f("interfaces", "rtsw1", "Ethernet3", "oper up", "oper down", "Ethernet3")
    late = {"ctsw2": "no answer within the 10 s budget"}
    verdict = JobVerdict(scope, findings=[down], unknown=dict(late), budget_s=10.0, timed_out=True)
    assert verdict.drain and verdict.verdict == "drain"
    assert verdict.line() == ("drain: rtsw1 Ethernet3: oper down (expected oper up); "
                              "1 switch(es) not checked (no answer within the 10 s budget): ctsw2")
    quiet = JobVerdict(scope, unknown=dict(late), budget_s=10.0, timed_out=True)
    assert not quiet.drain and quiet.verdict == "unknown"
    assert quiet.line() == ("unknown: 1 switch(es) not checked (no answer within the 10 s budget): ctsw2; "
                            "nothing to drain on the 3 switch(es) checked")
    strict = JobVerdict(scope, unknown={**late, "rtsw2": "pfc: timeout"}, budget_s=10.0, unknown_drains=True)
    assert strict.drain and strict.line().startswith(
        "drain: 2 switch(es) not checked (1 without an answer within the 10 s budget): ctsw2, rtsw2")


def test_a_compute_nic_without_a_rail_link_stays_in_the_jobs_scope(tmp_path):
    import shutil

    import yaml

    from nr_run.runbooks.job import rail_findings

    shutil.copytree(DC1, tmp_path / "dc1")
    path = tmp_path / "dc1" / "fabric.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["cabling"]["overrides"].append({"a": "gpu2:eth2", "remove": True})
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    fabric = compile_site(tmp_path / "dc1")
    scope = job_scope(fabric, ["gpu2"])
    assert scope.uncabled == (("gpu2", "eth2"),) and [n[1] for n in scope.nics] == ["eth1"]
    assert [(f.check, f.device, f.port, f.passed) for f in rail_findings(fabric, scope)] == [
        ("rails", "gpu2", "eth2", False)]
