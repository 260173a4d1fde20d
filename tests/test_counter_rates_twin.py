"""Counter rates measured over a short window are the device's rates: a sample is stamped when its counters
are read, not before a long batch of other commands (on SONiC the first sample comes with every section)."""

from __future__ import annotations

import re

import pytest

from nr_run.cli.main import main
from nr_run.lab.twin.faults import PFC_STORM_FRAMES_PER_S
from tests.twin_site import TwinSite


@pytest.mark.parametrize(("device", "port", "node"), [("rtsw3", "Ethernet16", "gpu3"), ("rtsw1", "Ethernet3", "gpu1")])
def test_job_check_reports_the_storm_rate_the_switch_sees(deployed_twin: TwinSite, capsys: pytest.CaptureFixture[str],
                                                        device: str, port: str, node: str) -> None:
    deployed_twin.fault("pfc_storm", device=device, port=port, priority=3)
    capsys.readouterr()
    assert main(["job-check", "--site", "dc1", "--lab", "--nodes", node]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"drain: {device} {port} prio 3 PFC storm ("), out
    rate = float(re.search(r"\(([\d.]+) pause frames/s\)", out).group(1))
    assert rate == pytest.approx(PFC_STORM_FRAMES_PER_S, rel=0.05), out
