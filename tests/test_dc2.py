"""dc2, a site written from docs/inventory-format.md alone: SONiC CTSWs, EOS and SONiC RTSWs with different
port layouts (uplinks first / last), 100G host links, 4-byte ASNs, lossless priority 4, a removed uplink, a
per-host MTU and servers with a storage NIC beside their compute NICs. It renders YANG-valid SONiC configs,
deploys with exit 0 and checks with exit 0 against its twin."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest

from nr_run.cli.main import main
from nr_run.intent import compile_site
from nr_run.platforms.site import load_site
from nr_run.runbooks.render import render_site
from tests.conftest import REPO, unexpected
from tests.render_property import assert_lines_come_from_templates
from tests.site_twin import FAST_OPTIONS, site_twin
from tests.test_sonic_yang import validate_text

DC2 = REPO / "inventory" / "dc2"


@pytest.fixture(scope="module")
def dc2():
    return compile_site(DC2)


def test_dc2_is_valid_without_findings():
    intent, findings = load_site(DC2)
    assert intent is not None and unexpected(findings) == []


def test_four_byte_asns_and_lossless_priority_4(dc2):
    assert {dc2.devices[f"ctsw{i}"].asn for i in (1, 2)} == {4200000000}
    assert [dc2.devices[f"rtsw{i}"].asn for i in range(1, 5)] == [4200000101 + i for i in range(4)]
    assert {tuple(d.roce.lossless_priorities) for d in dc2.devices.values()} == {(4,)}
    rendered = render_site(dc2)
    assert "router bgp 4200000102" in rendered["rtsw2"]
    assert "priority-flow-control priority 4 no-drop" in rendered["rtsw1"]
    assert json.loads(rendered["ctsw1"])["DEVICE_METADATA"]["localhost"]["bgp_asn"] == "4200000000"


def test_removed_uplink_and_uplinks_last(dc2):
    rtsw2 = {i.name: i for i in dc2.devices["rtsw2"].interfaces if i.role == "fabric"}
    assert list(rtsw2) == ["Ethernet1"]                         # Ethernet2 -> ctsw2 was removed
    assert [p.peer_device for p in dc2.devices["rtsw2"].bgp.peers] == ["ctsw1"]
    rtsw3 = {i.name: i for i in dc2.devices["rtsw3"].interfaces}
    assert (rtsw3["Ethernet240"].peer_device, rtsw3["Ethernet248"].peer_device) == ("ctsw1", "ctsw2")
    assert rtsw3["Ethernet240"].cable_length_m == 60             # the override changed it
    assert rtsw3["Ethernet0"].role == "host" and rtsw3["Ethernet0"].speed_mbps == 100_000


def test_host_blocks_share_one_size_across_port_layouts(dc2):
    """EOS RTSWs have 14 host slots, SONiC RTSWs 30: every block is a /26, none overlaps."""
    blocks = [ipaddress.IPv4Network(dc2.devices[f"rtsw{i}"].host_block) for i in range(1, 5)]
    assert [b.prefixlen for b in blocks] == [26] * 4
    assert all(not a.overlaps(b) for i, a in enumerate(blocks) for b in blocks[i + 1:])


def test_storage_nic_is_not_on_a_rail_and_per_host_mtu(dc2):
    gpu1 = dc2.devices["gpu1"]
    assert gpu1.rails == ["eth1", "eth2"] and [n.name for n in gpu1.nics] == ["eth1", "eth2"]
    assert {n.mtu for n in gpu1.nics} == {9000} and {n.mtu for n in dc2.devices["gpu2"].nics} == {9100}


@pytest.mark.parametrize("name", ["ctsw1", "ctsw2", "rtsw3", "rtsw4"])
def test_sonic_configs_pass_yang(dc2, name):
    assert validate_text(render_site(dc2, [name])[name]).errors == []


@pytest.fixture(scope="module")
def dc2_twin(tmp_path_factory: pytest.TempPathFactory):
    with site_twin(DC2, tmp_path_factory.mktemp("dc2-lab")) as state:
        yield state


def _cli(monkeypatch, state: Path, artifacts: Path, *argv: str) -> int:
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(state))
    return main([*argv, "--site", "dc2", "--inventory-dir", str(DC2.parent), "--lab",
                 "--artifacts", str(artifacts), *FAST_OPTIONS])


@pytest.mark.long
def test_deploy_commit_then_check_and_compliance_exit_0(dc2_twin, tmp_path, monkeypatch, capsys):
    assert _cli(monkeypatch, dc2_twin, tmp_path, "deploy", "--commit", "--yes", "--json") == 0
    deployed = json.loads(capsys.readouterr().out)
    assert deployed["final_check"]["passed"] is True, deployed["final_check"]
    assert _cli(monkeypatch, dc2_twin, tmp_path, "check", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and report["summary"]["by_check"]["ecmp"]["passed"] == 12
    cells = report["rdma"]["cells"]
    assert len(cells) == 48 and all(c["ping"] for c in cells)        # every NIC pair, per-host MTU 9000 too
    assert _cli(monkeypatch, dc2_twin, tmp_path, "compliance", "--json") == 0
    assert _cli(monkeypatch, dc2_twin, tmp_path, "deploy", "--json") == 0     # nothing pending after the commit


@pytest.mark.parametrize("site", ["dc1", "dc2"])
def test_every_rendered_line_comes_from_a_template_line(site):
    assert assert_lines_come_from_templates(compile_site(REPO / "inventory" / site)) > 1000
