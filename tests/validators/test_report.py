"""CheckReport schema, summary, RDMA matrix and rendering from evaluated healthy/faulty states."""

from __future__ import annotations

import io
import json

from rich.console import Console

from nr_run.intent import compile_site
from nr_run.runbooks.check import SCHEMA, CheckReport, print_report
from nr_run.validators.base import evaluate_all, select
from nr_run.validators.probes import RdmaPairs
from tests.validators.healthy import healthy_states

FABRIC = compile_site("inventory/dc1")


def report_for(states) -> CheckReport:
    checks = select(None)
    findings = evaluate_all(checks, FABRIC, states)
    return CheckReport("dc1", [c.name for c in checks], findings, {},
                       {"rdma": RdmaPairs("ring").summary(states, findings)}, 10)


def test_report_schema_and_determinism():
    a = report_for(healthy_states(FABRIC)).to_dict()
    b = report_for(healthy_states(FABRIC)).to_dict()
    assert json.dumps(a, sort_keys=False) == json.dumps(b, sort_keys=False)
    assert a["schema"] == SCHEMA and a["passed"] is True
    assert list(a) == ["schema", "site", "passed", "checks", "summary", "findings", "causes", "collection_errors",
                       "port_counters", "rdma"]
    assert a["summary"]["failed"] == 0 and a["summary"]["passed"] == a["summary"]["findings"] > 100
    assert set(a["findings"][0]) == {"id", "check", "device", "target", "expected", "observed", "passed", "severity",
                                     "hint", "port", "peer_device", "peer_port", "kind", "index", "value", "cause",
                                     "declared"}
    assert a["causes"] == [] and all(f["cause"] is None for f in a["findings"])
    # every pair of 8 NICs on 4 servers: 48 cells, each NIC a source
    assert len(a["rdma"]["cells"]) == 48 and len(a["rdma"]["sources"]) == 8


def test_failed_report_sorts_failures_first_and_renders_matrix():
    states = healthy_states(FABRIC)
    states["rtsw1"].interfaces["Ethernet3"].oper_up = False
    for s in states.values():
        for p in s.rdma:
            if p.dst_device == "gpu2":
                p.ping_ok, p.ping_detail = False, "100% packet loss"
    rep = report_for(states)
    d = rep.to_dict()
    assert d["passed"] is False
    assert [f["check"] for f in d["findings"][:3]] == ["interfaces", "rdma", "rdma"]
    assert {c["status"] for c in d["rdma"]["cells"] if c["dst"].startswith("gpu2")} == {"fail"}
    buf = io.StringIO()
    print_report(rep, Console(file=buf, width=200, color_system=None))
    text = buf.getvalue()
    assert text.splitlines()[-1].startswith("FAIL dc1: 13 checks on 10 devices")
    assert "oper down" in text and "unreach" in text and "RDMA (ring)" in text


def test_results_json_written_finding_by_finding_is_the_whole_dict_dumped():
    from tests.validators.healthy import healthy_states as fresh

    states = fresh(FABRIC)
    states["rtsw1"].interfaces[next(iter(states["rtsw1"].interfaces))].oper_up = False
    states["rtsw2"].sections.discard("pfc")
    report = report_for(states)
    assert not report.passed and report.causes()
    extra = {"drift": {"rtsw1": "- mtu 9214"}, "outcome": "failed"}
    whole = json.dumps({**report.to_dict(), **extra}, indent=2, sort_keys=True) + "\n"
    assert "".join(report.json_chunks(extra)) == whole
    assert "".join(report.json_chunks()) == json.dumps(report.to_dict(), indent=2, sort_keys=True) + "\n"
