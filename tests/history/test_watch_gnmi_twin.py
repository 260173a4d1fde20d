"""`watch --source gnmi` against the dc1 twin: counters arrive over gNMI between the polled checks, and the
history sees a storm's pause frames rise from them."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from nr_run.cli.main import main
from tests.twin_site import TwinSite


def _report(twin: TwinSite, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["report", "--site", "dc1", "--artifacts", str(twin.artifacts), "--json", "--since", "1h"]) == 0
    return json.loads(capsys.readouterr().out)


def test_gnmi_watch_records_counters_between_polled_checks(deployed_twin: TwinSite,
                                                           capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from nr_run.platforms import telemetry

    def no_fallback(task: Any) -> Any:
        raise RuntimeError("polled: gNMI was not used")

    # a switch whose gNMI failed would be polled for its counters and the run would look the same: forbid that
    monkeypatch.setattr(telemetry, "_poll", no_fallback)
    w = deployed_twin
    w.fault("pfc_storm", device="rtsw3", port="Ethernet16", priority=3)
    try:
        # tick 1 polls the light checks, ticks 2 and 3 read the switches' counters over gNMI
        capsys.readouterr()
        assert w.cli("watch", "--every", "1s", "--count", "3", "--source", "gnmi", "--json",
                     "--option", "counters.interval_s=0.2") == 0
        ticks = [json.loads(line) for line in capsys.readouterr().out.splitlines()]   # stdout: JSON lines only
        time.sleep(0.1)
    finally:
        w.clear_faults()
    assert [t["index"] for t in ticks] == [1, 2, 3]
    assert [t["collection_errors"] for t in ticks[1:]] == [{}, {}] and all(t["devices"] >= 4 for t in ticks[1:])
    doc = _report(w, capsys)
    runs = doc["runs"]
    assert runs["by_kind"] == {"watch": 3} and runs["by_source"] == {"poll": 1, "gnmi": 2}
    rates = [r for r in doc["rates"] if (r["device"], r["port"], r["index"]) == ("rtsw3", "Ethernet16", 3)
             and r["counter"] == "pfc_rx_frames"]
    # the twin's storm sends ~5,000 pause frames/s; the last two samples came over gNMI
    assert rates and rates[0]["per_second"] > 1000
