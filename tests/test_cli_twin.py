"""The CLI verbs end to end against the session's twin: render, lab status/fault, check, compliance.
(`deploy` end to end: tests/test_deploy_twin.py.)"""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET

from nr_run.cli.main import main
from tests.conftest import DC1
from tests.twin_site import DEVICES, SWITCHES, run_json, watchdog_restore_s


def test_render_writes_one_config_per_device(tmp_path, capsys):
    rc = main(["render", "--site", "dc1", "--inventory-dir", str(DC1.parent), "--out", str(tmp_path), "--json"])
    rows = json.loads(capsys.readouterr().out)["devices"]
    assert rc == 0 and [r["device"] for r in rows] == DEVICES
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "ctsw1.cfg", "ctsw2.cfg", "gpu1.sh", "gpu2.sh", "gpu3.sh", "gpu4.sh", "rtsw1.cfg", "rtsw2.cfg", "rtsw3.json",
        "rtsw4.json"]
    assert all(r["lines"] > 50 for r in rows)
    rc = main(["render", "--site", "dc1", "--role", "ctsw", "--out", str(tmp_path / "c"), "--json"])
    assert rc == 0 and [r["device"] for r in json.loads(capsys.readouterr().out)["devices"]] == ["ctsw1", "ctsw2"]
    assert main(["render", "--site", "dc1", "--hosts", "gpu1", "--out", str(tmp_path / "g")]) == 0
    assert (tmp_path / "g" / "gpu1.sh").read_text().startswith("# RoCE NIC settings")


def test_check_and_compliance_tell_the_truth(deployed_twin, capsys, tmp_path):
    twin = deployed_twin           # every switch holds its rendered config
    capsys.readouterr()
    assert main(["lab", "status", "--site", "dc1", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["running"] and len(status["addresses"]) == 10

    rc, report = run_json(twin, capsys, "check", "--checks", "pfc,counters")
    assert rc == 0 and report["passed"]

    assert main(["lab", "fault", "--site", "dc1", "pfc_storm", "device=rtsw2", "port=Ethernet1", "priority=3"]) == 0
    rc, report = run_json(twin, capsys, "check", "--checks", "pfc")
    failed = [f for f in report["findings"] if not f["passed"]]
    assert rc == 1 and failed and all(f["check"] == "pfc" for f in failed)
    assert any(f["device"] == "rtsw2" and "Ethernet1" in f["target"] for f in failed)

    out = tmp_path / "reports"
    rc = twin.cli("compliance", "--format", "json,junit,md,html,prom", "--out", str(out))
    capsys.readouterr()
    assert rc == 1
    suites = {s.get("name"): s for s in ET.parse(out / "compliance.junit.xml").getroot()}
    assert int(suites["pfc"].get("failures")) == len(failed) and suites["config-drift"].get("failures") == "0"
    assert 'nr_run_check_failures{site="dc1",check="pfc",device="rtsw2"}' in (out / "nr_run.prom").read_text()

    assert main(["lab", "fault", "--site", "dc1", "clear"]) == 0
    time.sleep(watchdog_restore_s())    # the watchdog restores the stormed queue once the pause has stopped
    # drift only (a description edited out of band): exit 2
    assert main(["lab", "fault", "--site", "dc1", "drift", "device=rtsw1",
                 "lines=interface Ethernet4;description hand-edited"]) == 0
    capsys.readouterr()
    rc, payload = run_json(twin, capsys, "compliance", "--format", "md", "--out", str(out))
    assert rc == 2 and payload["passed"], [f for f in payload.get("findings", []) if not f["passed"]][:5]
    assert "hand-edited" in payload["drift"]["rtsw1"]
    assert not any(payload["drift"][h] for h in SWITCHES if h != "rtsw1")
    assert "## drift on rtsw1" in (out / "compliance.md").read_text()
    # drift that breaks the fabric (MTU on a host port): the checks fail too, exit 1
    assert main(["lab", "fault", "--site", "dc1", "drift", "device=rtsw1", "lines=interface Ethernet4;mtu 1500"]) == 0
    capsys.readouterr()
    rc, payload = run_json(twin, capsys, "compliance", "--format", "json", "--out", str(out))
    assert rc == 1 and "-   mtu 1500" in payload["drift"]["rtsw1"]
    assert any(f["check"] == "interfaces" and f["device"] == "rtsw1" and not f["passed"] for f in payload["findings"])
