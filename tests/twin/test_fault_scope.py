"""Faults do what their help says and no more: `unreachable` silences the management plane only, a fault that
does not apply to a node's platform is refused, and faults on a lab never started are one clear error."""

from __future__ import annotations

from pathlib import Path

import paramiko
import pytest

from nr_run.cli.main import main
from tests.twin_site import TwinSite


def test_unreachable_keeps_the_data_plane_up(deployed_twin: TwinSite):
    twin = deployed_twin
    twin.fault("unreachable", device="rtsw3")
    with pytest.raises((paramiko.SSHException, OSError, EOFError)):
        twin.ssh("rtsw3", password="YourPaSsWoRd")
    node = twin.eapi("ctsw1")
    lldp = node.enable(["show lldp neighbors"])[0]["result"]["lldpNeighbors"]
    assert "rtsw3" in {n["neighborDevice"] for n in lldp}
    peers = node.enable(["show ip bgp summary"])[0]["result"]["vrfs"]["default"]["peers"]
    assert peers and all(p["peerState"] == "Established" for p in peers.values()), peers


@pytest.mark.parametrize(("kind", "device", "params"), [("appl_lag", "ctsw1", {"ms": 500}),
                                                        ("appl_lag", "gpu1", {"ms": 500}),
                                                        ("commit_rejected", "gpu1", {})])
def test_a_fault_is_refused_where_it_does_not_apply(twin: TwinSite, kind: str, device: str, params: dict):
    with pytest.raises(ValueError, match=f"{kind}: {device} is a .* node; {kind} applies to"):
        twin.fault(kind, device=device, **params)


def test_appl_lag_applies_to_sonic(twin: TwinSite):
    assert twin.fault("appl_lag", device="rtsw3", ms=100)["kind"] == "appl_lag"


def test_fault_on_a_lab_never_started_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]):
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(tmp_path / "never"))
    rc = main(["lab", "fault", "link_down", "device=rtsw1", "port=Ethernet1", "--site", "dc1"])
    err = capsys.readouterr().err
    assert rc == 3
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "nr-run lab up" in err, err
