"""The default RDMA pair set of a big site covers the fabric by construction (every RTSW-CTSW path class of
analysis.paths and every rail), and bandwidth is judged against the slower NIC of a pair (pure: no devices)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from nr_run.analysis.paths import path_classes
from nr_run.intent import compile_site
from nr_run.platforms.state import DeviceState, RdmaProbe
from nr_run.validators.checks.rdma import RdmaCheck
from nr_run.validators.rdma import AUTO_ALL_MAX_PAIRS, coverage, leaf_kind, plan_pairs, resolve_pattern
from tests.conftest import DC1
from tests.sitegen import generate_site


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory):
    """512 NICs: 64 RTSWs (8 units of 8 rails), 8 CTSWs, 64 servers of 8 NICs."""
    site = generate_site(tmp_path_factory.mktemp("cover") / "inv", rtsw=64, ctsw=8, nics=8, site="cover")
    return compile_site(site)


def test_the_default_on_a_500_nic_site_covers_every_path_class_and_rail(big):
    nics = sum(len(s.nics) for s in big.servers())
    assert nics == 512 and nics * nics > AUTO_ALL_MAX_PAIRS
    assert resolve_pattern(big, "auto") == "cover"
    pairs = plan_pairs(big, "auto")
    cov = coverage(big, pairs)
    classes = path_classes(big)
    # same RTSW, and same rail and cross rail through each of the 8 CTSWs
    assert len(classes) == 17 and cov["path_classes_covered"] == 17 and cov["path_classes_missed"] == []
    assert cov["rails"] == 8 and cov["rails_missed"] == []
    # documented size: RTSWs x (1 + max(2, uplinks)), far below every pair
    assert len(pairs) == 64 * (1 + 8) == 576
    leaf = {(s.name, n.name): n.peer_device for s in big.servers() for n in s.nics}
    # every RTSW sends across the CTSWs to as many other RTSWs as it has uplinks, and receives from some
    for rtsw in sorted({v for v in leaf.values()}):
        out = {leaf[(p.dst_device, p.dst_nic)] for p in pairs if leaf[(p.src_device, p.src_nic)] == rtsw}
        across = {d for d in out if d != rtsw}
        assert len(across) == 8, rtsw
        assert {leaf_kind(big, rtsw, d) for d in across} == {"same-rail", "cross-rail"}
        assert any(leaf[(p.dst_device, p.dst_nic)] == rtsw and leaf[(p.src_device, p.src_nic)] != rtsw
                   for p in pairs), rtsw
    assert all(p.src_device != p.dst_device and p.bandwidth for p in pairs)
    assert plan_pairs(big, "auto") == pairs                     # deterministic


def test_the_old_capped_ring_missed_the_spine(big):
    """What the design replaces: a ring cut to 64 pairs never crosses rails, so no pair runs cross-rail."""
    cov = coverage(big, plan_pairs(big, "ring", 64))
    assert cov["path_classes_missed"] and all(name.startswith("cross-rail via ctsw") for name in
                                              cov["path_classes_missed"])


@pytest.fixture(scope="module")
def dc1_200g(tmp_path_factory: pytest.TempPathFactory):
    """dc1 with 200G server NICs (hardware and rail cabling at 200G)."""
    root = tmp_path_factory.mktemp("g200")
    shutil.copytree(DC1, root / "dc1")
    path = root / "dc1" / "fabric.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["hardware"]["gpu-2nic"]["speed"] = "200G"
    for rule in doc["cabling"]["rules"]:
        if rule["type"] == "rail":
            rule["speed"] = "200G"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return compile_site(root / "dc1")


@pytest.mark.parametrize("gbps, passed, said", [
    (195.0, True, ""),
    (150.0, False, "RDMA write below line rate"),
    (390.0, False, "impossible: the NICs run at 200 Gb/s"),
    (-1.0, False, "impossible"),
])
def test_a_200g_pair_is_judged_against_200g(dc1_200g, gbps, passed, said):
    gpu1 = dc1_200g.devices["gpu1"]
    assert {n.speed_mbps for n in gpu1.nics} == {200_000}
    pair = next(p for p in plan_pairs(dc1_200g, "all") if p.src_device == "gpu1" and p.bandwidth)
    state = DeviceState("gpu1", "linux")
    state.sections.add("rdma")
    state.rdma = [RdmaProbe("gpu1", pair.src_nic, pair.dst_device, pair.dst_nic, pair.dst_ip, True, 0.0, "ok",
                            gbps, "")]
    found = [f for f in RdmaCheck().evaluate(gpu1, state, dc1_200g, {"gpu1": state})
             if f.peer_device == pair.dst_device and f.peer_port == pair.dst_nic and f.port == pair.src_nic]
    assert len(found) == 1
    f = found[0]
    assert f.expected == ">= 180 Gb/s (of 200 Gb/s line rate)" and f.passed is passed, f
    assert said in f.hint


def test_a_pair_is_held_to_the_slower_nic(dc1_200g, tmp_path: Path):
    """gpu1 at 400G to gpu3 at 200G: the pair can carry 200G, whatever the sender's NIC runs at."""
    root = tmp_path / "mixed"
    shutil.copytree(DC1, root / "dc1")
    path = root / "dc1" / "fabric.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["hardware"]["gpu-200g"] = {**doc["hardware"]["gpu-2nic"], "speed": "200G"}
    doc["cabling"]["overrides"] += [{"a": f"gpu3:eth{i}", "speed": "200G"} for i in (1, 2)]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    hosts = yaml.safe_load((root / "dc1" / "hosts.yaml").read_text())
    hosts["gpu3"]["data"]["hardware"] = "gpu-200g"
    (root / "dc1" / "hosts.yaml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    fabric = compile_site(root / "dc1")
    speeds = {(s.name, n.name): n.speed_mbps for s in fabric.servers() for n in s.nics}
    pair = next((p for p in plan_pairs(fabric, "mesh", 4096) if p.src_device == "gpu1" and p.dst_device == "gpu3"
                 and speeds[(p.src_device, p.src_nic)] == 400_000 and speeds[(p.dst_device, p.dst_nic)] == 200_000),
                None)
    assert pair is not None
    state = DeviceState("gpu1", "linux")
    state.sections.add("rdma")
    state.rdma = [RdmaProbe("gpu1", pair.src_nic, "gpu3", pair.dst_nic, pair.dst_ip, True, 0.0, "ok", 300.0, "")]
    check = RdmaCheck({"pattern": "mesh", "max_pairs": 4096})
    f = next(f for f in check.evaluate(fabric.devices["gpu1"], state, fabric, {})
             if f.peer_device == "gpu3" and f.peer_port == pair.dst_nic and f.port == pair.src_nic)
    assert not f.passed and "impossible" in f.hint and f.expected == ">= 180 Gb/s (of 200 Gb/s line rate)"
