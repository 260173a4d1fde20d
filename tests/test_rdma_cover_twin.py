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
