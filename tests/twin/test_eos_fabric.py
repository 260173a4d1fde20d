"""dc1's rendered EOS configs committed into the twin through NAPALM; the fabric answers via eAPI."""

from __future__ import annotations

import pytest

from nr_run.intent import compile_site
from nr_run.runbooks.render import render_device
from tests.twin.eos_lab import DC1, eapi, napalm_eos, start_dc1

FABRIC = compile_site(str(DC1))
EOS = sorted(d.name for d in FABRIC.devices.values() if d.platform == "eos")


def _loopback(name: str) -> str:
    return FABRIC.devices[name].loopback.split("/")[0]


def _ping(lab, host: str, cmd: str) -> str:
    return eapi(lab, host).enable([cmd], encoding="text")[0]["result"]["output"]


def _commit(lab, host: str, config: str, replace: bool = True) -> None:
    drv = napalm_eos(lab, host)
    try:
        (drv.load_replace_candidate if replace else drv.load_merge_candidate)(config=config)
        drv.commit_config()
    finally:
        drv.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    lab = start_dc1(tmp_path_factory.mktemp("eos-fabric"))
    for host in EOS:
        _commit(lab, host, render_device(FABRIC.devices[host]))
    yield lab
    lab.stop()


def _eos_pairs() -> list[tuple[str, str]]:
    return [(d.name, p.address) for d in FABRIC.devices.values() if d.platform == "eos" and d.bgp
            for p in d.bgp.peers if FABRIC.devices[p.peer_device].platform == "eos"]


def test_bgp_between_eos_switches_established(lab):
    pairs = _eos_pairs()
    assert len(pairs) == 8
    for host, peer in pairs:
        drv = napalm_eos(lab, host)
        try:
            peers = drv.get_bgp_neighbors()["global"]["peers"]
        finally:
            drv.close()
        assert peers[peer]["is_up"], (host, peer)
        assert peers[peer]["address_family"]["ipv4"]["received_prefixes"] > 0


def test_loopback_ping_and_ecmp(lab):
    out = _ping(lab, "rtsw1", f"ping {_loopback('rtsw2')} source Loopback0 repeat 3")
    assert "3 packets transmitted, 3 received" in out
    out = _ping(lab, "ctsw1", f"ping {_loopback('rtsw1')} source Loopback0")
    assert "5 received" in out
    routes = eapi(lab, "rtsw1").enable(["show ip route"])[0]["result"]["vrfs"]["default"]["routes"]
    vias = routes[FABRIC.devices["rtsw2"].loopback]["vias"]
    assert {v["interface"] for v in vias} == {"Ethernet1", "Ethernet2"}     # ECMP over both CTSWs


def test_wrong_remote_as_leaves_session_down(lab):
    peer = FABRIC.devices["rtsw1"].bgp.peers[0]
    _commit(lab, "rtsw1", f"router bgp 65101\n   neighbor {peer.address} remote-as 65999\n", replace=False)
    try:
        drv = napalm_eos(lab, "rtsw1")
        try:
            peers = drv.get_bgp_neighbors()["global"]["peers"]
        finally:
            drv.close()
        assert not peers[peer.address]["is_up"]
        assert peers[FABRIC.devices["rtsw1"].bgp.peers[1].address]["is_up"]
    finally:
        _commit(lab, "rtsw1", f"router bgp 65101\n   neighbor {peer.address} remote-as {peer.remote_asn}\n",
                replace=False)


def test_mtu_1500_breaks_jumbo_df_ping(lab):
    # rtsw1 Ethernet1 <-> ctsw1 Ethernet1: ping the far end of that /31 directly
    far = FABRIC.devices["rtsw1"].interfaces[0].peer_ip
    cmd = f"ping {far} size 9000 df-bit repeat 2"
    assert "2 received" in _ping(lab, "rtsw1", cmd)
    _commit(lab, "ctsw1", "interface Ethernet1\n   mtu 1500\n", replace=False)
    try:
        out = _ping(lab, "rtsw1", cmd)
        assert "2 packets transmitted, 0 received" in out
        assert "1 packets transmitted, 1 received" in _ping(lab, "rtsw1", f"ping {far} size 1400 df-bit repeat 1")
    finally:
        _commit(lab, "ctsw1", "interface Ethernet1\n   mtu 9214\n", replace=False)
    assert "2 received" in _ping(lab, "rtsw1", cmd)


def test_link_down_and_cable_swap(lab):
    lab.fault("link_down", device="ctsw1", port="Ethernet1")
    try:
        drv = napalm_eos(lab, "rtsw1")
        try:
            assert not drv.get_interfaces()["Ethernet1"]["is_up"]
            assert "Ethernet1" not in drv.get_lldp_neighbors()
        finally:
            drv.close()
        # loopbacks still reachable over the other CTSW
        assert "5 received" in _ping(lab, "rtsw1", f"ping {_loopback('rtsw2')} source Loopback0")
    finally:
        lab.clear_faults("link_down")
    lab.fault("cable_swap", device_a="ctsw1", port_a="Ethernet1", device_b="ctsw1", port_b="Ethernet2")
    try:
        drv = napalm_eos(lab, "ctsw1")
        try:
            lldp = drv.get_lldp_neighbors()
        finally:
            drv.close()
        assert lldp["Ethernet1"] == [{"hostname": "rtsw2", "port": "Ethernet1"}]
        assert lldp["Ethernet2"] == [{"hostname": "rtsw1", "port": "Ethernet1"}]
        # addresses no longer match across the swapped cables: those sessions drop
        peers = eapi(lab, "ctsw1").enable(["show ip bgp summary vrf all"])[0]["result"]["vrfs"]["default"]["peers"]
        assert peers[FABRIC.devices["ctsw1"].bgp.peers[0].address]["peerState"] != "Established"
    finally:
        lab.clear_faults("cable_swap")


def test_pfc_storm_and_ecn_counters(lab):
    node = eapi(lab, "rtsw1")
    pfc = node.enable(["show priority-flow-control"])[0]["result"]["interfaces"]["Ethernet1"]
    assert pfc["pfcEnabled"] and pfc["priorities"]["3"]["noDrop"] and pfc["watchdog"]["enabled"]
    before = node.enable(["show priority-flow-control counters"])[0]["result"]["interfaceCounters"]["Ethernet1"]
    assert before["rxFrames"] == 0
    lab.fault("pfc_storm", device="rtsw1", port="Ethernet1", priority=3)
    lab.fault("congestion", device="rtsw1", port="Ethernet1", queue=3)
    try:
        c1 = node.enable(["show priority-flow-control counters"])[0]["result"]["interfaceCounters"]["Ethernet1"]
        c2 = node.enable(["show priority-flow-control counters"])[0]["result"]["interfaceCounters"]["Ethernet1"]
        assert 0 < c1["rxFrames"] <= c2["rxFrames"]
        wd = node.enable(["show priority-flow-control"])[0]["result"]["interfaces"]["Ethernet1"]["watchdog"]
        assert wd["stormDetected"]["3"] is True
        ecn = node.enable(["show qos interfaces ecn counters queue"])[0]["result"]["intfQueueCounters"]["Ethernet1"]
        assert int(ecn["queueCounters"]["3"]) > 0 and ecn["queueCounters"]["0"] == "-"
        peer = eapi(lab, "ctsw1").enable(["show priority-flow-control counters"])[0]["result"]
        assert peer["interfaceCounters"]["Ethernet1"]["txFrames"] > 0
    finally:
        lab.clear_faults()
