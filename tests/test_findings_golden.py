"""What `check` finds, by finding id and verdict, through the twin with faults: dc1 and a generated 28-device site
(EOS and SONiC RTSWs, 4 CTSWs, servers on their NIC scripts), each with a link down, two cables swapped and a PFC
storm. The goldens (tests/golden/findings/) were recorded before collection and evaluation were reworked to cost
the same per device at any site size (far ends' port names read once per run, RDMA pairs by source, SONiC QoS per
port, a running config parsed once for its sections); a change in what is read or how it is judged that moves a
verdict shows here. Regenerate with NR_RUN_UPDATE_GOLDEN=1 and review the difference."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nr_run.cli.main import main
from nr_run.intent import compile_site
from nr_run.lab.twin.lab import lab_down, lab_fault, lab_up
from tests.site_twin import FAST_OPTIONS
from tests.sitegen import generate_site
from tests.test_rdma_cover_twin import boot
from tests.twin_site import FABRIC, TwinSite, site_topology

GOLDEN = Path(__file__).parent / "golden" / "findings"


def _verdicts(report: dict) -> str:
    """One `<finding id> <pass|FAIL>` line per finding, in id order (the findings' ids are unique in a run)."""
    ids = [f["id"] for f in report["findings"]]
    assert len(ids) == len(set(ids))
    return "".join(f"{f['id']} {'pass' if f['passed'] else 'FAIL'}\n"
                   for f in sorted(report["findings"], key=lambda f: f["id"]))


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("NR_RUN_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"missing golden {path}; run with NR_RUN_UPDATE_GOLDEN=1 and review it"
    want = path.read_text().splitlines()
    got = text.splitlines()
    assert got == want, (f"{name}: {len(set(got) - set(want))} verdict(s) new or changed, e.g. "
                         f"{sorted(set(got) - set(want))[:5]}; gone: {sorted(set(want) - set(got))[:5]}")


def _host_ports(fabric, device: str) -> list[str]:
    return [i.name for i in fabric.devices[device].interfaces if i.role == "host"]


def _faults(fabric, fault) -> None:
    """A CTSW uplink of the first RTSW down, the first host cables of two other RTSWs swapped, a PFC storm on a
    host port of a fourth: each check family has something to find."""
    rtsws = sorted(d.name for d in fabric.devices.values() if d.role == "rtsw")
    up = next(i.name for i in fabric.devices[rtsws[0]].interfaces if i.role == "fabric")
    fault("link_down", device=rtsws[0], port=up)
    fault("cable_swap", device_a=rtsws[1], port_a=_host_ports(fabric, rtsws[1])[0],
          device_b=rtsws[2], port_b=_host_ports(fabric, rtsws[2])[0])
    prio = fabric.devices[rtsws[3]].roce.lossless_priorities[0]
    fault("pfc_storm", device=rtsws[3], port=_host_ports(fabric, rtsws[3])[0], priority=prio)


@pytest.mark.long           # ~10 s: one full check of dc1 with the RDMA probes
def test_dc1_findings_with_faults_match_the_golden(deployed_twin: TwinSite, capsys) -> None:
    _faults(FABRIC, deployed_twin.fault)
    capsys.readouterr()
    rc = deployed_twin.cli("check", "--json")
    report = json.loads(capsys.readouterr().out)
    assert rc == 1 and not report["collection_errors"]
    _golden("dc1-faults.txt", _verdicts(report))


@pytest.mark.long           # ~60 s: a 28-device site booted, checked healthy and with faults
def test_generated_site_findings_healthy_and_with_faults_match_the_golden(tmp_path, capsys, monkeypatch) -> None:
    inv = generate_site(tmp_path / "inv", rtsw=16, ctsw=4, nics=8, site="gen28")
    intent = compile_site(inv)
    configs = tmp_path / "configs"
    configs.mkdir()
    topo = site_topology(inv, tmp_path / "clab", lambda doc: boot(doc, intent, configs))
    state = tmp_path / "lab"
    lab_up(topo, state, base_port=0, timeout=300)
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(state))

    def check() -> tuple[int, dict]:
        capsys.readouterr()
        rc = main(["check", "--site", "gen28", "--inventory-dir", str(inv.parent), "--lab", "--artifacts",
                   str(tmp_path / "art"), "--json", *FAST_OPTIONS])
        return rc, json.loads(capsys.readouterr().out)

    try:
        rc, healthy = check()
        assert rc == 0 and not healthy["collection_errors"], [f["id"] for f in healthy["findings"] if not f["passed"]]
        _golden("gen28-healthy.txt", _verdicts(healthy))
        _faults(intent, lambda kind, **params: lab_fault(state, kind, **params))
        rc, faulted = check()
        assert rc == 1 and not faulted["collection_errors"]
        _golden("gen28-faults.txt", _verdicts(faulted))
    finally:
        lab_down(state)
