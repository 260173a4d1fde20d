"""The twin serves the containerlab file, not the inventory: hand edits to the file are what the product sees.

The generated dc1 topology is edited the way someone re-cabling a lab would (two server cables on rtsw1 swapped,
server gpu4 removed with its cables); every switch is then deployed from its rendered config and `nr-run check
--lab` must name exactly those two faults and nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nr_run.cli.main import main
from nr_run.lab.twin.lab import lab_down
from tests.conftest import DC1
from tests.twin_site import DEVICES, TwinSite, site_lab_up


def rewire(doc: dict) -> None:
    nodes, links = doc["topology"]["nodes"], doc["topology"]["links"]
    del nodes["gpu4"]
    links[:] = [lk for lk in links if not any(e.startswith("gpu4:") for e in lk["endpoints"])]
    ends = {e: lk for lk in links for e in lk["endpoints"]}
    a, b = ends["rtsw1:eth3"], ends["rtsw1:eth4"]
    a["endpoints"][a["endpoints"].index("rtsw1:eth3")] = "rtsw1:eth4"
    b["endpoints"][b["endpoints"].index("rtsw1:eth4")] = "rtsw1:eth3"


@pytest.fixture(scope="module")
def edited_lab(tmp_path_factory: pytest.TempPathFactory):
    state = tmp_path_factory.mktemp("edited-lab")
    site_lab_up(DC1, state, rewire)
    try:
        TwinSite(state, tmp_path_factory.mktemp("deploy")).deploy(*(d for d in DEVICES if d != "gpu4"))
        yield state
    finally:
        lab_down(state)


def test_edited_file_is_what_the_twin_serves(edited_lab: Path):
    site = TwinSite(edited_lab, edited_lab / "scratch")
    assert "gpu4" not in site.addresses and "gpu1" in site.addresses
    lldp = site.eapi("rtsw1").enable(["show lldp neighbors"])[0]["result"]["lldpNeighbors"]
    seen = {n["port"]: n["neighborDevice"] for n in lldp}
    assert seen["Ethernet3"] == "gpu2" and seen["Ethernet4"] == "gpu1"


def test_check_names_exactly_the_edits(edited_lab: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]):
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(edited_lab))
    capsys.readouterr()
    rc = main(["check", "--site", "dc1", "--lab", "--json", "--artifacts", str(tmp_path),
               "--checks", "cabling,interfaces,bgp,host", "--option", "counters.interval_s=0.2"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1
    failed = [f for f in doc["findings"] if not f["passed"]]
    swapped = [f for f in failed if f["device"] == "rtsw1" and f["port"] in ("Ethernet3", "Ethernet4")]
    missing = [f for f in failed if "gpu4" in (f["device"], f["peer_device"])]
    assert sorted(f["check"] for f in swapped) == ["cabling", "cabling"]
    assert {(f["port"], f["expected"], f["observed"]) for f in swapped} == {
        ("Ethernet3", "gpu1:eth1", "gpu2:eth1"), ("Ethernet4", "gpu2:eth1", "gpu1:eth1")}
    assert {(f["check"], f["device"]) for f in missing} == {
        ("cabling", "rtsw3"), ("cabling", "rtsw4"), ("interfaces", "rtsw3"), ("interfaces", "rtsw4"), ("host", "gpu4")}
    assert len(failed) == len(swapped) + len(missing), [f for f in failed if f not in swapped + missing]
    host = next(f for f in missing if f["check"] == "host")
    assert "not-served-by-the-lab-twin" in host["observed"]         # never its real management address
