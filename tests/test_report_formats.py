"""Compliance report writers produce parseable, deterministic output that carries the failures."""

from __future__ import annotations

import json
import re
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


PROM_LINE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_]\w*="(?:[^"\\]|\\.)*",?)*\})? -?[0-9.e+]+$')


def test_prom_follows_the_textfile_collector_conventions():
    payload = {**PAYLOAD, "time": "2026-12-01T02:13:07+00:00", "duration_s": 3.5, "outcome": "failed",
               "port_counters": {"rtsw1": {"Ethernet1": {"pfc_rx_frames": 10, "pfc_tx_frames": 0,
                                                         "ecn_marked_packets": 7, "queue_drops": 2}}}}
    text = to_prom(payload)
    families: dict[str, str] = {}
    helped: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helped.add(line.split()[2])
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            assert name in helped and name not in families, name     # HELP then TYPE, once per family
            families[name] = kind
        else:
            assert PROM_LINE.match(line), line                       # no sample timestamps
            name = line.split("{")[0].split()[0]
            assert name in families, f"sample before its TYPE: {line}"
    assert all(n.endswith("_total") for n, k in families.items() if k == "counter")
    assert 'nr_run_compliance_last_run_timestamp_seconds{site="dc1"} 1796091187.000' in text
    assert 'nr_run_compliance_success{site="dc1"} 0' in text
    assert 'nr_run_check_findings{site="dc1",check="pfc",severity="error"} 1' in text
    assert 'nr_run_port_pfc_rx_pause_frames_total{site="dc1",device="rtsw1",port="Ethernet1"} 10' in text
    assert 'nr_run_port_ecn_marked_packets_total{site="dc1",device="rtsw1",port="Ethernet1"} 7' in text
    ok = to_prom({**PAYLOAD, "findings": PAYLOAD["findings"][1:2], "drift": {}})
    assert 'nr_run_compliance_success{site="dc1"} 1' in ok


def test_junit_is_what_ci_test_reporters_read():
    root = ET.fromstring(to_junit({**PAYLOAD, "time": "2026-12-01T02:13:07+00:00"}))
    assert root.tag == "testsuites" and root.get("tests") == "5" and root.get("failures") == "3"
    for suite in root.findall("testsuite"):
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
        assert all(c.get("classname") and c.get("name") and c.get("time") is not None for c in cases)
    failure = root.find("testsuite[@name='pfc']/testcase/failure")
    assert failure.get("type") == "error" and "hint: set priority-flow-control" in failure.text


def test_reports_in_the_artifacts_are_private_and_shared_ones_readable(tmp_path):
    from nr_run.runbooks.report.formats import write_reports

    private = write_reports(PAYLOAD, ["html", "prom"], tmp_path / "run")
    assert {oct(p.stat().st_mode & 0o777) for p in private} == {"0o600"}
    assert (tmp_path / "run").stat().st_mode & 0o777 == 0o700
    import os

    old = os.umask(0o022)
    try:
        shared = write_reports(PAYLOAD, ["prom"], tmp_path / "textfile", private=False)
    finally:
        os.umask(old)
    assert shared[0].stat().st_mode & 0o044 == 0o044          # node_exporter runs as another user
    assert not [p for p in (tmp_path / "textfile").iterdir() if p.name.startswith(".")]   # no temp file left


CAUSED = {
    "site": "dc1",
    "findings": [
        {"id": "interfaces/rtsw1/Ethernet1", "check": "interfaces", "device": "rtsw1", "target": "Ethernet1",
         "expected": "oper up", "observed": "oper down", "severity": "error", "hint": "check optics", "passed": False,
         "cause": "link:a"},
        {"id": "bgp/rtsw1/Ethernet1", "check": "bgp", "device": "rtsw1", "target": "10.254.0.0", "expected":
         "Established", "observed": "Active", "severity": "error", "hint": "", "passed": False, "cause": "link:a"},
    ],
    "causes": [{"id": "link:a", "kind": "link", "layer": "physical", "summary": "link rtsw1:Ethernet1 <-> ctsw1:Ethernet1: "
                "oper down on rtsw1:Ethernet1", "root": "interfaces/rtsw1/Ethernet1", "hint": "check optics",
                "devices": ["rtsw1"], "findings": ["interfaces/rtsw1/Ethernet1", "bgp/rtsw1/Ethernet1"]}],
    "drift": {},
}


def test_junit_and_html_show_the_cause_with_its_consequences_under_it():
    root = ET.fromstring(to_junit(CAUSED))
    (case,) = root.findall("testsuite[@name='causes']/testcase")
    assert case.get("name") == "1. link rtsw1:Ethernet1 <-> ctsw1:Ethernet1: oper down on rtsw1:Ethernet1"
    assert "consequences:\n  bgp rtsw1 10.254.0.0: Active (expected Established)" in case.find("failure").text
    bgp = root.find("testsuite[@name='bgp']/testcase/failure")
    assert bgp.text.endswith("cause: link rtsw1:Ethernet1 <-> ctsw1:Ethernet1: oper down on rtsw1:Ethernet1")
    from nr_run.runbooks.report.formats import to_html

    page = to_html(CAUSED)
    assert "by probable cause (1)" in page and page.count('class="cause row-error"') == 1
    assert page.index("1. link rtsw1:Ethernet1") < page.index('<tr class="consequence"><td></td><td>bgp</td>')
    assert "(1 consequence(s))" in page
    md = to_markdown(CAUSED).splitlines()
    row = md.index("| **1** | **cause** | | **link rtsw1:Ethernet1 <-> ctsw1:Ethernet1: oper down on rtsw1:Ethernet1** | "
                   "| physical | check optics |")
    assert md[row + 1].startswith("| error | interfaces | rtsw1 |") and md[row + 2].startswith("| error | bgp | rtsw1 |")
