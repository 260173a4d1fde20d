"""GPU servers over SSH (paramiko) with only the SONiC RTSW of rail 1 configured (napalm_sonic, rendered config)
and the two servers behind it (their NICs: MTU, PFC, trust, from the Linux plug-in's rendered script)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest

from tests.twin_site import TwinSite, make_baseline, nic_ip, reset_site
from tests.twin_site import ssh_run as run


@pytest.fixture(scope="module")
def rtsw3_only(dc1_lab: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    return make_baseline(dc1_lab, "rtsw3-only", ["rtsw3", "gpu3", "gpu4"], tmp_path_factory.mktemp("rtsw3-only"))


@pytest.fixture
def lab(dc1_lab: Path, rtsw3_only: str, tmp_path, monkeypatch) -> Iterator[tuple[TwinSite, paramiko.SSHClient,
                                                                                   paramiko.SSHClient]]:
    twin = reset_site(dc1_lab, tmp_path, monkeypatch, rtsw3_only)
    gpu3, gpu4 = twin.ssh("gpu3"), twin.ssh("gpu4")
    yield twin, gpu3, gpu4
    gpu3.close()
    gpu4.close()


def test_ip_json_shows_intent_nics(lab):
    _, gpu3, _ = lab
    rc, out = run(gpu3, "ip -j addr")
    addrs = {i["ifname"]: i for i in json.loads(out)}
    assert rc == 0 and addrs["eth1"]["addr_info"][0]["local"] == nic_ip("gpu3", "eth1") and addrs["eth1"]["mtu"] == 9000
    rc, out = run(gpu3, "dcb -j pfc show dev eth1")
    assert [p["prio"] for p in json.loads(out)["prio_pfc"] if p["enabled"]] == [3]
    assert [26, 3] in json.loads(run(gpu3, "dcb -j app show dev eth1")[1])["dscp_prio"]


def test_jumbo_df_ping_at_roce_dscp_through_sonic_rtsw(lab):
    _, gpu3, _ = lab
    rc, out = run(gpu3, f"ping -c 3 -M do -s 8972 -Q 104 -I eth1 {nic_ip('gpu4', 'eth1')}")
    assert rc == 0 and "3 packets transmitted, 3 received, 0% packet loss" in out
    rc, out = run(gpu3, f"ping -c 2 -M do -s 9100 -Q 104 -I eth1 {nic_ip('gpu4', 'eth1')}")   # above the NIC MTU
    assert rc != 0


def test_rail2_unconfigured_rtsw_is_unreachable(lab):
    _, gpu3, _ = lab   # rtsw4 still has its factory config (ports admin down, no addresses)
    rc, out = run(gpu3, f"ping -c 1 -I eth2 {nic_ip('gpu4', 'eth2')}")
    assert rc != 0
    assert "state DOWN" in run(gpu3, "rdma link show")[1]


def test_ib_write_bw_line_rate_then_degrades_on_pfc_mismatch(lab):
    _, gpu3, gpu4 = lab
    assert run(gpu4, "ib_write_bw -d mlx5_0 --report_gbits")[0] == 0
    rc, out = run(gpu3, f"ib_write_bw -d mlx5_0 -x 3 --report_gbits {nic_ip('gpu4', 'eth1')}")
    assert rc == 0, out
    good = float(out.split("BW average[Gb/sec]")[1].split("\n")[1].split()[3])
    assert good > 0.95 * 400
    run(gpu4, "dcb pfc set dev eth1 prio-pfc 3:off")
    try:
        run(gpu4, "ib_write_bw -d mlx5_0 --report_gbits")
        rc, out = run(gpu3, f"ib_write_bw -d mlx5_0 -x 3 --report_gbits {nic_ip('gpu4', 'eth1')}")
        bad = float(out.split("BW average[Gb/sec]")[1].split("\n")[1].split()[3])
        assert rc == 0 and bad < 0.5 * good
    finally:
        run(gpu4, "dcb pfc set dev eth1 prio-pfc 3:on")


def test_ib_write_bw_without_server_fails(lab):
    _, gpu3, _ = lab
    rc, out = run(gpu3, f"ib_write_bw -d mlx5_0 --report_gbits {nic_ip('gpu4', 'eth1')}")
    assert rc != 0 and "Couldn't connect" in out
