"""`nr-run analyze --lab`: every hop judged by the state collected from the twin (through the real clients the
collectors use), so a device that drifted from its rendered config breaks the proof where the intent cannot."""

from __future__ import annotations

from nr_run.cli.main import main
from tests.twin_site import run_json


def test_lab_analysis_reads_the_devices_and_sees_drift(deployed_twin, capsys):
    rc, doc = run_json(deployed_twin, capsys, "analyze", "--only", "lossless")
    assert rc == 0 and doc["source"] == "lab" and doc["ok"]
    hops = doc["analyses"][0]["tables"][1]
    assert {row[7] for row in hops["rows"]} >= {"rtsw1 collected state", "gpu1 collected state"}

    # out of band, rtsw1 moves RoCE's DSCP to the lossy class: the intent (and an intent-only run) still holds
    assert main(["lab", "fault", "--site", "dc1", "drift", "device=rtsw1",
                 "lines=qos map dscp 26 to traffic-class 0"]) == 0
    capsys.readouterr()
    rc, doc = run_json(deployed_twin, capsys, "analyze", "--only", "lossless")
    failed = [f for f in doc["analyses"][0]["findings"] if not f["passed"]]
    assert rc == 1 and failed
    assert all(f["data"]["device"] == "rtsw1" and f["data"]["check"] == "classification" for f in failed)
    assert all("drift" in f["fix"] for f in failed)
    capsys.readouterr()
    assert main(["analyze", "--site", "dc1", "--only", "lossless", "-q"]) == 0     # the intent is still right
