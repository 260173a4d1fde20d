"""Acceptance against the dc1 twin through the CLI: a fault injected then cleared is a new then a resolved
finding with the right times, in the site report and the job report of the job whose port it is on."""

from __future__ import annotations

import json
import math
import re
import time
from datetime import datetime
from typing import Any

import pytest

from nr_run.cli.main import main
from tests.twin_site import TwinSite

FAST = ["--option", "counters.interval_s=0.2"]


def report(twin: TwinSite, capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["report", "--site", "dc1", "--artifacts", str(twin.artifacts), "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def ts(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def within(text: str | None, low: float, high: float) -> bool:
    """An ISO time (to the second) inside [low, high]."""
    return text is not None and math.floor(low) <= ts(text) <= high


def test_watch_storm_is_new_then_resolved_and_in_the_job_report(deployed_twin: TwinSite,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    w = deployed_twin
    assert w.cli("watch", "--every", "1s", "--count", "1", *FAST) == 0          # the healthy baseline
    t_fault = time.time()
    w.fault("pfc_storm", device="rtsw3", port="Ethernet16", priority=3)        # gpu3's port
    w.fault("lossless_drops", device="rtsw1", port="Ethernet1", queue=3)      # gpu1's port: not the job's
    assert w.cli("watch", "--every", "1s", "--count", "2", *FAST) == 0
    t_seen = time.time()
    t_clear = time.time()
    w.clear_faults()
    # two collections after the clear: the first still sees the counts that grew until the clear, the
    # second sees them steady (counters keep their counts when a storm ends, as on a switch)
    assert w.cli("watch", "--every", "1s", "--count", "2", *FAST) == 0
    t_end = time.time()

    doc = report(w, capsys, "--since", "1h")
    assert doc["schema"] == "nr-run.report/1" and doc["runs"]["by_kind"] == {"watch": 5}
    new = doc["findings"]["new"]
    storm = [f for f in new if (f["device"], f["port"]) == ("rtsw3", "Ethernet16")]
    drops = [f for f in new if (f["device"], f["port"]) == ("rtsw1", "Ethernet1")]
    assert {f["check"] for f in storm} >= {"pfc", "counters"} and {f["check"] for f in drops} == {"counters"}
    assert len(storm) + len(drops) == len(new)                  # nothing else became new
    for f in new:
        assert within(f["first_seen"], t_fault, t_seen), f
        assert within(f["resolved"], t_clear, t_end), f
    assert doc["findings"]["open"] == []
    texts = [i["text"] for i in doc["timeline"]]
    began = [t for t in texts if t.startswith("PFC storm on rtsw3 Ethernet16 prio 3 began")]
    ended = [t for t in texts if t.startswith("PFC storm on rtsw3 Ethernet16 prio 3 ended")]
    assert len(began) == len(ended) == 1 and texts.index(began[0]) < texts.index(ended[0])
    # the counters themselves: rising while the faults last, steady once cleared
    for what in ("PFC pause frames received on rtsw3 Ethernet16 prio 3", "queue drops on rtsw1 Ethernet1 queue 3"):
        rising = [i for i in doc["timeline"] if i["text"].startswith(f"{what} began rising")]
        steady = [i for i in doc["timeline"] if i["text"] == f"{what} stopped rising"]
        assert len(rising) == len(steady) == 1, what
        assert within(rising[0]["time"], t_fault, t_seen) and within(steady[0]["time"], t_clear, t_end)
    top = doc["top_pause"]
    # rtsw3 (SONiC) reports pause duration (PAUSE_DURATION_US), so pause time is ranked, not frames
    assert top["measure"] == "pause_time_us"
    assert (top["ports"][0]["device"], top["ports"][0]["port"], top["ports"][0]["priority"]) == \
        ("rtsw3", "Ethernet16", 3)
    grew = {(r["counter"], r["device"], r["port"], r["index"]) for r in doc["rates"]}
    assert ("queue_dropped_packets", "rtsw1", "Ethernet1", 3) in grew

    capsys.readouterr()         # the human report: tables and the timeline, wide lines off a terminal
    assert main(["report", "--site", "dc1", "--artifacts", str(w.artifacts), "--since", "1h"]) == 0
    text = capsys.readouterr().out
    assert "collections (watch 5)" in text and "most pause (pause time us)" in text
    assert re.search(r"\[fabric\] PFC storm on rtsw3 Ethernet16 prio 3 began", text)

    job = report(w, capsys, "--job", "4242", "--nodes", "gpu[3]", "--from",
                 datetime.fromtimestamp(t_fault - 1).astimezone().isoformat(),
                 "--to", datetime.fromtimestamp(t_end + 1).astimezone().isoformat())
    assert job["job"]["nodes_expanded"] == ["gpu3"]
    assert {(f["device"], f["port"]) for f in job["findings"]["new"]} == {("rtsw3", "Ethernet16")}
    assert any(t.startswith("PFC storm on rtsw3 Ethernet16 prio 3 began") for t in
               (i["text"] for i in job["timeline"]))
    assert not any(r["device"] == "rtsw1" for r in job["rates"])


def test_check_and_compliance_runs_are_recorded(deployed_twin: TwinSite,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    w = deployed_twin
    t_fault = time.time()
    w.fault("lossless_drops", device="rtsw1", port="Ethernet1", queue=3)
    assert w.cli("check", "--checks", "counters") == 1
    t_seen = time.time()
    w.clear_faults()
    t_clear = time.time()
    assert w.cli("check", "--checks", "counters") == 0
    assert w.cli("compliance", "--format", "json") == 0
    t_end = time.time()
    doc = report(w, capsys, "--since", "10m")
    assert doc["runs"]["by_kind"] == {"check": 2, "compliance": 1}
    [f] = doc["findings"]["new"]
    assert (f["check"], f["device"], f["target"]) == ("counters", "rtsw1", "Ethernet1 queue 3 drops")
    assert within(f["first_seen"], t_fault, t_seen) and within(f["resolved"], t_clear, t_end)
    assert doc["findings"]["resolved"] == [f]
