"""One downed link is one cause: on the dc1 twin, rtsw1's uplink to ctsw1 taken down gives one physical-layer
cause with every consequence (both ends down and without LLDP, the BGP session over it, the ECMP width of
every RTSW that routed over it) folded under it, in the table and the JSON (`cause` on each finding, `causes`).
Goldens: tests/golden/causes/ (regenerate with NR_RUN_UPDATE_GOLDEN=1 and review)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from tests.twin_site import TwinSite

GOLDEN = Path(__file__).parent / "golden" / "causes"


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("NR_RUN_UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"missing golden {path}; run with NR_RUN_UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text(), f"{name} differs from its golden"


def test_one_downed_link_is_one_cause_in_table_and_json(deployed_twin: TwinSite, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "150")
    deployed_twin.fault("link_down", device="rtsw1", port="Ethernet1")
    capsys.readouterr()
    rc = deployed_twin.cli("check", "--checks", "fabric", "--json")
    report = json.loads(capsys.readouterr().out)
    assert rc == 1
    failed = [f for f in report["findings"] if not f["passed"]]
    assert len(failed) >= 10
    (cause,) = report["causes"]
    assert cause["id"] == "link:ctsw1:Ethernet1|rtsw1:Ethernet1" and cause["layer"] == "physical"
    assert cause["root"] == "interfaces/ctsw1/Ethernet1/rtsw1:Ethernet1//"
    assert {f["cause"] for f in failed} == {cause["id"]} and sorted(cause["findings"]) == sorted(f["id"] for f in failed)
    assert {f["check"] for f in failed} == {"bgp", "cabling", "ecmp", "interfaces"}
    _golden("link-down.json", json.dumps(report["causes"], indent=2, sort_keys=True) + "\n")
    # the table: one row, the first consequences folded under it, the rest counted
    capsys.readouterr()
    assert deployed_twin.cli("check", "--checks", "fabric") == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.strip() == "causes (1)")
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("└"))
    _golden("link-down.txt", "\n".join(ln.rstrip() for ln in lines[start:end + 1]) + "\n")
    assert re.search(r"^FAIL dc1: \d+ checks on 10 devices, \d+ passed, \d+ failed \(\d+ errors, 0 warnings\) "
                     r"from 1 probable cause\(s\)$", out.splitlines()[-1]), out.splitlines()[-1]
