"""A default `check` of a generated 512-NIC site on the twin (256 servers, 64 RTSWs, 8 CTSWs, switches booted
from their rendered configs, servers from the topology's exec lines as containerlab would) probes the covering
design: every planned pair is pinged and bandwidth-tested, and the pairs probed cover every RTSW-CTSW path class
and every rail."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from nr_run.analysis.paths import path_classes
from nr_run.cli.main import main
from nr_run.intent import compile_site
from nr_run.lab.twin.lab import lab_down
from nr_run.runbooks.render import render_device
from nr_run.validators.rdma import Pair, coverage, plan_pairs
from tests.sitegen import generate_site
from tests.twin_site import site_lab_up


@pytest.fixture(scope="module")
def gen512(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, object]]:
    root = tmp_path_factory.mktemp("gen512")
    site = generate_site(root / "inv", rtsw=64, ctsw=8, nics=2, site="gen512")
    intent = compile_site(site)
    configs = root / "configs"
    configs.mkdir()

    def boot_rendered(doc: dict) -> None:
        for name, node in doc["topology"]["nodes"].items():
            if intent.devices[name].role != "gpu":
                path = configs / name
                path.write_text(render_device(intent.devices[name], intent))
                node["startup-config"] = str(path)

    state = root / "lab"
    site_lab_up(site, state, boot_rendered)
    try:
        yield site.parent, state, intent
    finally:
        lab_down(state)


@pytest.mark.long
def test_the_default_check_probes_every_path_class(gen512, tmp_path: Path, capsys, monkeypatch) -> None:
    inv, state, intent = gen512
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(state))
    assert sum(len(s.nics) for s in intent.servers()) == 512
    capsys.readouterr()
    rc = main(["check", "--site", "gen512", "--inventory-dir", str(inv), "--lab", "--checks", "rdma", "--json",
               "--artifacts", str(tmp_path / "a"), "--option", "rdma.seconds=1", "--option", "rdma.server_wait_s=0.05"])
    report = json.loads(capsys.readouterr().out)
    cells = report["rdma"]["cells"]
    planned = plan_pairs(intent, "auto")
    assert report["rdma"]["pattern"] == "auto" and len(cells) == len(planned) == 576
    assert rc == 0, [c for c in cells if c["status"] != "pass"][:3]
    assert all(c["ping"] and c["gbps"] is not None for c in cells)
    probed = [Pair(*c["src"].split(":"), "", *c["dst"].split(":"), "") for c in cells]
    cov = coverage(intent, probed)
    assert cov["path_classes"] == len(path_classes(intent)) == 17
    assert cov["path_classes_missed"] == [] and cov["rails_missed"] == []


@pytest.mark.long
def test_a_200g_site_is_judged_against_200g_on_the_twin(tmp_path: Path, capsys, monkeypatch) -> None:
    """dc1 with 200G NICs on gpu1 and gpu2 (their EOS rack's host ports at 200G; the SONiC rack's HWSKU has no
    200G buffer row, so gpu3/gpu4 stay 400G): the twin's perftest runs at the pair's slower NIC and the check
    holds every pair with a 200G end to 90% of 200G, the 400G pairs to 90% of 400G."""
    import shutil

    import yaml

    from tests.conftest import DC1

    shutil.copytree(DC1, tmp_path / "inv" / "dc1")
    path = tmp_path / "inv" / "dc1" / "fabric.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["hardware"]["gpu-200g"] = {**doc["hardware"]["gpu-2nic"], "speed": "200G"}
    doc["cabling"]["overrides"] += [{"a": f"gpu{g}:eth{i}", "speed": "200G"} for g in (1, 2) for i in (1, 2)]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    hosts_file = tmp_path / "inv" / "dc1" / "hosts.yaml"
    hosts = yaml.safe_load(hosts_file.read_text())
    for g in ("gpu1", "gpu2"):
        hosts[g]["data"]["hardware"] = "gpu-200g"
    hosts_file.write_text(yaml.safe_dump(hosts, sort_keys=False))
    intent = compile_site(tmp_path / "inv" / "dc1")
    configs = tmp_path / "configs"
    configs.mkdir()

    def boot_rendered(topo: dict) -> None:
        for name, node in topo["topology"]["nodes"].items():
            if intent.devices[name].role != "gpu":
                (configs / name).write_text(render_device(intent.devices[name], intent))
                node["startup-config"] = str(configs / name)

    state = tmp_path / "lab"
    site_lab_up(tmp_path / "inv" / "dc1", state, boot_rendered)
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(state))
    try:
        capsys.readouterr()
        rc = main(["check", "--site", "dc1", "--inventory-dir", str(tmp_path / "inv"), "--lab", "--checks", "rdma",
                   "--json", "--artifacts", str(tmp_path / "a"), "--option", "rdma.seconds=1",
                   "--option", "rdma.server_wait_s=0.05"])
        report = json.loads(capsys.readouterr().out)
    finally:
        lab_down(state)
    bw = [f for f in report["findings"] if f["check"] == "rdma" and f["expected"].startswith(">=")]
    slow = [f for f in bw if {f["device"], f["peer_device"]} & {"gpu1", "gpu2"}]
    fast = [f for f in bw if f not in slow]
    assert slow and fast
    assert {f["expected"] for f in slow} == {">= 180 Gb/s (of 200 Gb/s line rate)"}
    assert {f["expected"] for f in fast} == {">= 360 Gb/s (of 400 Gb/s line rate)"}
    assert rc == 0 and all(f["passed"] for f in bw), [(f["target"], f["observed"], f["expected"]) for f in bw
                                                     if not f["passed"]][:4]
    assert all(180 <= float(f["observed"].split()[0]) <= 200 for f in slow)
