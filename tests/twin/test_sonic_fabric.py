"""All six dc1 switches configured from their rendered configs (EOS via napalm eos, SONiC via napalm_sonic)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from nr_run.runbooks.render import render_device
from tests.twin_site import FABRIC, SWITCHES, TwinSite, ssh_run


class Fabric:
    """The deployed twin with one open NAPALM driver per switch."""

    def __init__(self, twin: TwinSite) -> None:
        self.twin = twin
        self.drivers = {name: twin.driver(name) for name in SWITCHES}


@pytest.fixture
def lab(deployed_twin: TwinSite) -> Iterator[Fabric]:
    fabric = Fabric(deployed_twin)
    yield fabric
    for drv in fabric.drivers.values():
        drv.close()


def test_every_bgp_session_established(lab):
    for name, drv in sorted(lab.drivers.items()):
        peers = drv.get_bgp_neighbors()["global"]["peers"]
        assert peers, name
        assert all(p["is_up"] for p in peers.values()), (name, peers)


def test_what_one_end_sends_the_other_receives(lab):
    """On a healthy fabric with no inbound filter, each session's prefixes sent by one end (napalm eos and
    napalm_sonic) equal those the other end takes; a spine sends each leaf everything but the leaf's own."""
    owner = {i.ip: d.name for d in FABRIC.devices.values() for i in d.interfaces if i.ip}
    sessions = {}
    for name, drv in sorted(lab.drivers.items()):
        for ip, p in drv.get_bgp_neighbors()["global"]["peers"].items():
            af = p["address_family"]["ipv4"]
            sessions[(name, owner[ip])] = (af["sent_prefixes"], af["received_prefixes"])
    assert len(sessions) == 16
    for (a, b), (sent, _) in sorted(sessions.items()):
        assert sent == sessions[(b, a)][1] > 0, (a, b, sent, sessions[(b, a)])
    leaf_sent = {a: sent for (a, b), (sent, _) in sessions.items() if a.startswith("rtsw")}
    for (a, b), (sent, _) in sessions.items():
        if a.startswith("ctsw"):
            assert sent == 1 + sum(n for leaf, n in leaf_sent.items() if leaf != b), (a, b)


def test_gpu_jumbo_ping_and_rdma_across_the_fabric(lab):
    run = ssh_run
    gpu1, gpu3 = lab.twin.ssh("gpu1"), lab.twin.ssh("gpu3")
    try:
        dst = FABRIC.devices["gpu3"].nics[0].ip          # rail 1: rtsw1 (EOS) -> CTSW -> rtsw3 (SONiC)
        rc, out = run(gpu1, f"ping -c 3 -M do -s 8972 -Q 104 -I eth1 {dst}")
        assert rc == 0 and " 0% packet loss" in out, out
        run(gpu3, "ib_write_bw -d mlx5_0 --report_gbits")
        rc, out = run(gpu1, f"ib_write_bw -d mlx5_0 -x 3 --report_gbits {dst}")
        good = float(out.split("BW average[Gb/sec]")[1].split("\n")[1].split()[3])
        assert rc == 0 and good > 0.95 * 400
        # PFC mismatch on the SONiC RTSW's host port, pushed through napalm_sonic
        drv = lab.drivers["rtsw3"]
        drv.load_merge_candidate(config='{"PORT_QOS_MAP": {"Ethernet16": {"pfc_enable": "4", "pfcwd_sw_enable": "4"}}}')
        drv.commit_config()
        run(gpu3, "ib_write_bw -d mlx5_0 --report_gbits")
        rc, out = run(gpu1, f"ib_write_bw -d mlx5_0 -x 3 --report_gbits {dst}")
        bad = float(out.split("BW average[Gb/sec]")[1].split("\n")[1].split()[3])
        assert bad < 0.5 * good
        drv.rollback()
    finally:
        gpu1.close()
        gpu3.close()


def test_sonic_rtsw_advertises_its_host_block_not_its_host_31s(lab):
    """Like bgpcfgd: Loopback0 plus advertised STATIC_ROUTEs; routed-port /31s stay local."""
    import ipaddress
    import json

    run = ssh_run
    rtsw3 = FABRIC.devices["rtsw3"]
    ctsw1 = lab.drivers["ctsw1"]
    host_31s = [str(ipaddress.ip_interface(i.address).network) for i in rtsw3.interfaces if i.role == "host"]
    routes = ctsw1.cli(["show ip route"])["show ip route"]
    assert rtsw3.host_block in routes
    assert host_31s and not any(p in routes for p in host_31s)
    gpu1 = lab.twin.ssh("gpu1")
    try:
        dst = FABRIC.devices["gpu3"].nics[0].ip
        assert run(gpu1, f"ping -c 1 -W 1 -I eth1 {dst}")[0] == 0
        drv = lab.drivers["rtsw3"]
        without = json.loads(render_device(rtsw3))
        del without["STATIC_ROUTE"]
        drv.load_replace_candidate(config=json.dumps(without))
        drv.commit_config()
        # with the summary gone, nothing advertises gpu3's subnet any more
        assert rtsw3.host_block not in ctsw1.cli(["show ip route"])["show ip route"]
        assert run(gpu1, f"ping -c 1 -W 1 -I eth1 {dst}")[0] != 0
        drv.rollback()
        assert run(gpu1, f"ping -c 1 -W 1 -I eth1 {dst}")[0] == 0
    finally:
        gpu1.close()
