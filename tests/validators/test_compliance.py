"""ComplianceResult: the verdict of drift + checks, and the payload the report writers receive."""

from __future__ import annotations

from nr_run.intent import compile_site
from nr_run.runbooks.check import CheckReport
from nr_run.runbooks.compliance import ComplianceResult
from nr_run.runbooks.report.formats import write_reports
from nr_run.validators.base import evaluate_all, select
from tests.validators.healthy import healthy_states

FABRIC = compile_site("inventory/dc1")


def report(break_mtu: bool = False) -> CheckReport:
    states = healthy_states(FABRIC)
    if break_mtu:
        states["rtsw1"].interfaces["Ethernet1"].mtu = 1500
    checks = select(["stage"])
    return CheckReport("dc1", [c.name for c in checks], evaluate_all(checks, FABRIC, states), devices=10)


def test_outcome_is_failed_over_drift_over_ok():
    at_intent = {"rtsw1": "", "rtsw2": ""}
    assert ComplianceResult(report(), at_intent).outcome == "ok"
    drifted = ComplianceResult(report(), {"rtsw1": "- mtu 9214\n+ mtu 1500\n", "rtsw2": ""})
    assert drifted.outcome == "drift" and drifted.drifted == ["rtsw1"]
    assert ComplianceResult(report(break_mtu=True), at_intent).outcome == "failed"
    assert ComplianceResult(report(), at_intent, {"rtsw3": "ConnectionException"}).outcome == "failed"


def test_payload_is_the_check_report_plus_drift(tmp_path):
    result = ComplianceResult(report(break_mtu=True), {"rtsw2": "", "rtsw1": "+ x\n"}, {})
    d = result.to_dict()
    assert d["schema"] == "nr-run.check/2" and d["passed"] is False
    assert list(d["drift"]) == ["rtsw1", "rtsw2"] and d["drift_errors"] == {}
    [failed] = [f for f in d["findings"] if not f["passed"]]
    assert (failed["device"], failed["port"], failed["peer_device"]) == ("rtsw1", "Ethernet1", "ctsw1")
    files = write_reports(d, ["junit", "md"], tmp_path / "out")
    assert [p.name for p in files] == ["compliance.junit.xml", "compliance.md"]
    assert "rtsw1" in files[1].read_text()
