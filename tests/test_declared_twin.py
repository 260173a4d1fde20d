"""What the inventory declares is a known degradation: reported every run, failing no exit code; what it does not
declare fails as before. dc1 on the twin with gpu2's second rail link removed in the inventory (a NIC awaiting
replacement), through the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from tests.conftest import DC1
from tests.twin_site import TwinSite


def _without_gpu2_eth2(tmp_path: Path) -> Path:
    inv = tmp_path / "inv"
    shutil.copytree(DC1, inv / "dc1")
    path = inv / "dc1" / "fabric.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["cabling"]["overrides"].append({"a": "gpu2:eth2", "remove": True})
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return inv


def test_a_declared_nic_out_of_service_is_known_and_an_undeclared_fault_still_fails(deployed_twin: TwinSite,
                                                                                    tmp_path: Path, capsys) -> None:
    inv = str(_without_gpu2_eth2(tmp_path))
    capsys.readouterr()
    rc = deployed_twin.cli("check", "--checks", "rails,interfaces", "--inventory-dir", inv, "--json")
    report = json.loads(capsys.readouterr().out)
    assert rc == 0 and report["passed"] is True, report["summary"]
    known = [f for f in report["findings"] if f["declared"]]
    assert [(f["check"], f["device"], f["port"], f["passed"]) for f in known] == [("rails", "gpu2", "eth2", False)]
    assert report["summary"]["declared"] == 1 and report["causes"] == []
    # the table says it every run, and the verdict line counts it
    assert deployed_twin.cli("check", "--checks", "rails,interfaces", "--inventory-dir", inv) == 0
    out = capsys.readouterr().out
    assert "known degradations, declared in the inventory (1)" in out
    assert out.splitlines()[-1].endswith("0 failed (0 errors, 0 warnings); 1 known degradation(s) declared in the "
                                         "inventory"), out.splitlines()[-1]
    # a fault the inventory does not declare fails as before, the declared one stays known
    deployed_twin.fault("link_down", device="rtsw1", port="Ethernet3")
    rc = deployed_twin.cli("check", "--checks", "rails,interfaces", "--inventory-dir", inv, "--json")
    report = json.loads(capsys.readouterr().out)
    assert rc == 1 and report["passed"] is False
    undeclared = [f for f in report["findings"] if not f["passed"] and not f["declared"]]
    assert {(f["device"], f["port"]) for f in undeclared} == {("rtsw1", "Ethernet3")}
    assert [f["id"] for f in report["findings"] if f["declared"]] == [known[0]["id"]]
