"""Compliance report writers produce parseable, deterministic output that carries the failures."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from nr_run.runbooks.report.formats import WRITERS, to_junit, to_markdown, to_prom

PAYLOAD = {
    "site": "dc1",
    "findings": [
        {"check": "pfc", "device": "rtsw1", "target": "Ethernet1", "expected": "[3]", "observed": "[4]",
         "severity": "error", "hint": "set priority-flow-control priority 3 no-drop", "passed": False},
        {"check": "pfc", "device": "rtsw2", "target": "Ethernet1", "expected": "[3]", "observed": "[3]",
         "severity": "info", "hint": "", "passed": True},
        {"check": "bgp", "device": "ctsw1", "target": "10.254.0.1", "expected": "Established", "observed": "Active",
         "severity": "error", "hint": "", "passed": False},
    ],
    "drift": {"rtsw1": "+ mtu 1500\n", "rtsw2": ""},
}


def test_junit_counts_failures_per_check_and_drift():
    root = ET.fromstring(to_junit(PAYLOAD))
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert suites["pfc"].get("tests") == "2" and suites["pfc"].get("failures") == "1"
    assert suites["bgp"].get("failures") == "1"
    assert suites["config-drift"].get("failures") == "1"
    failure = suites["pfc"].find("testcase/failure")
    assert failure.get("message") == "expected [3], observed [4]"


def test_prom_metrics():
    text = to_prom(PAYLOAD)
    assert 'nr_run_check_failures{site="dc1",check="pfc",device="rtsw1"} 1' in text
    assert 'nr_run_check_failures{site="dc1",check="pfc",device="rtsw2"} 0' in text
    assert 'nr_run_config_drift{site="dc1",device="rtsw1"} 1' in text


def test_markdown_lists_failures_and_drift():
    text = to_markdown(PAYLOAD)
    assert "| error | bgp | ctsw1 | 10.254.0.1 | Established | Active |" in text
    assert "## drift on rtsw1" in text and "rtsw2" not in text.split("devices with drift:")[1].splitlines()[0]


def test_every_writer_is_deterministic():
    for _name, (filename, writer) in WRITERS.items():
        assert writer(PAYLOAD) == writer(json.loads(json.dumps(PAYLOAD))), filename


def test_write_reports_writes_named_files_and_refuses_unknown_formats(tmp_path):
    import pytest

    from nr_run.runbooks.report.formats import write_reports

    [path] = write_reports(PAYLOAD, ["prom"], tmp_path)
    assert path.name == "nr_run.prom" and path.read_text() == to_prom(PAYLOAD)
    with pytest.raises(ValueError, match="xlsx"):
        write_reports(PAYLOAD, ["xlsx"], tmp_path)
