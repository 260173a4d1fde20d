"""dc1's rendered configs committed into the twin through NAPALM; the EOS fabric answers via eAPI."""

from __future__ import annotations

from tests.twin_site import FABRIC, TwinSite

EOS = sorted(d.name for d in FABRIC.devices.values() if d.platform == "eos")


def _loopback(name: str) -> str:
    return FABRIC.devices[name].loopback.split("/")[0]


def _ping(twin: TwinSite, host: str, cmd: str) -> str:
    return twin.eapi(host).enable([cmd], encoding="text")[0]["result"]["output"]


def _eos_pairs() -> list[tuple[str, str]]:
    return [(d.name, p.address) for d in FABRIC.devices.values() if d.platform == "eos" and d.bgp
            for p in d.bgp.peers if FABRIC.devices[p.peer_device].platform == "eos"]


def test_bgp_between_eos_switches_established(deployed_twin):
    twin = deployed_twin
    pairs = _eos_pairs()
    assert len(pairs) == 8
    for host, peer in pairs:
        drv = twin.driver(host)
        try:
            peers = drv.get_bgp_neighbors()["global"]["peers"]
        finally:
            drv.close()
        assert peers[peer]["is_up"], (host, peer)
        assert peers[peer]["address_family"]["ipv4"]["received_prefixes"] > 0


def test_loopback_ping_and_ecmp(deployed_twin):
    twin = deployed_twin
    out = _ping(twin, "rtsw1", f"ping {_loopback('rtsw2')} source Loopback0 repeat 3")
    assert "3 packets transmitted, 3 received" in out
    out = _ping(twin, "ctsw1", f"ping {_loopback('rtsw1')} source Loopback0")
    assert "5 received" in out
    routes = twin.eapi("rtsw1").enable(["show ip route"])[0]["result"]["vrfs"]["default"]["routes"]
    vias = routes[FABRIC.devices["rtsw2"].loopback]["vias"]
    assert {v["interface"] for v in vias} == {"Ethernet1", "Ethernet2"}     # ECMP over both CTSWs


def test_wrong_remote_as_leaves_session_down(deployed_twin):
    twin = deployed_twin
    peer = FABRIC.devices["rtsw1"].bgp.peers[0]
    twin.push("rtsw1", f"router bgp 65101\n   neighbor {peer.address} remote-as 65999\n")
    try:
        drv = twin.driver("rtsw1")
        try:
            peers = drv.get_bgp_neighbors()["global"]["peers"]
        finally:
            drv.close()
        assert not peers[peer.address]["is_up"]
        assert peers[FABRIC.devices["rtsw1"].bgp.peers[1].address]["is_up"]
    finally:
        twin.push("rtsw1", f"router bgp 65101\n   neighbor {peer.address} remote-as {peer.remote_asn}\n")


def test_mtu_1500_breaks_jumbo_df_ping(deployed_twin):
    twin = deployed_twin
    # rtsw1 Ethernet1 <-> ctsw1 Ethernet1: ping the far end of that /31 directly
    far = FABRIC.devices["rtsw1"].interfaces[0].peer_ip
    cmd = f"ping {far} size 9000 df-bit repeat 2"
    assert "2 received" in _ping(twin, "rtsw1", cmd)
    twin.push("ctsw1", "interface Ethernet1\n   mtu 1500\n")
    try:
        out = _ping(twin, "rtsw1", cmd)
        assert "2 packets transmitted, 0 received" in out
        assert "1 packets transmitted, 1 received" in _ping(twin, "rtsw1", f"ping {far} size 1400 df-bit repeat 1")
    finally:
        twin.push("ctsw1", "interface Ethernet1\n   mtu 9214\n")
    assert "2 received" in _ping(twin, "rtsw1", cmd)


def test_link_down_and_cable_swap(deployed_twin):
    twin = deployed_twin
    twin.fault("link_down", device="ctsw1", port="Ethernet1")
    try:
        drv = twin.driver("rtsw1")
        try:
            assert not drv.get_interfaces()["Ethernet1"]["is_up"]
            assert "Ethernet1" not in drv.get_lldp_neighbors()
        finally:
            drv.close()
        # loopbacks still reachable over the other CTSW
        assert "5 received" in _ping(twin, "rtsw1", f"ping {_loopback('rtsw2')} source Loopback0")
    finally:
        twin.clear_faults("link_down")
    twin.fault("cable_swap", device_a="ctsw1", port_a="Ethernet1", device_b="ctsw1", port_b="Ethernet2")
    try:
        drv = twin.driver("ctsw1")
        try:
            lldp = drv.get_lldp_neighbors()
        finally:
            drv.close()
        assert lldp["Ethernet1"] == [{"hostname": "rtsw2", "port": "Ethernet1"}]
        assert lldp["Ethernet2"] == [{"hostname": "rtsw1", "port": "Ethernet1"}]
        # addresses no longer match across the swapped cables: those sessions drop
        peers = twin.eapi("ctsw1").enable(["show ip bgp summary vrf all"])[0]["result"]["vrfs"]["default"]["peers"]
        assert peers[FABRIC.devices["ctsw1"].bgp.peers[0].address]["peerState"] != "Established"
    finally:
        twin.clear_faults("cable_swap")


def test_pfc_storm_and_ecn_counters(deployed_twin):
    twin = deployed_twin
    node = twin.eapi("rtsw1")
    pfc = node.enable(["show priority-flow-control"])[0]["result"]["interfaces"]["Ethernet1"]
    assert pfc["pfcEnabled"] and pfc["priorities"]["3"]["noDrop"] and pfc["watchdog"]["enabled"]
    before = node.enable(["show priority-flow-control counters"])[0]["result"]["interfaceCounters"]["Ethernet1"]
    assert before["rxFrames"] == 0
    twin.fault("pfc_storm", device="rtsw1", port="Ethernet1", priority=3)
    twin.fault("congestion", device="rtsw1", port="Ethernet1", queue=3)
    try:
        c1 = node.enable(["show priority-flow-control counters"])[0]["result"]["interfaceCounters"]["Ethernet1"]
        c2 = node.enable(["show priority-flow-control counters"])[0]["result"]["interfaceCounters"]["Ethernet1"]
        assert 0 < c1["rxFrames"] <= c2["rxFrames"]
        wd = node.enable(["show priority-flow-control"])[0]["result"]["interfaces"]["Ethernet1"]["watchdog"]
        assert wd["stormDetected"]["3"] is True
        ecn = node.enable(["show qos interfaces ecn counters queue"])[0]["result"]["intfQueueCounters"]["Ethernet1"]
        assert int(ecn["queueCounters"]["3"]) > 0 and ecn["queueCounters"]["0"] == "-"
        peer = twin.eapi("ctsw1").enable(["show priority-flow-control counters"])[0]["result"]
        assert peer["interfaceCounters"]["Ethernet1"]["txFrames"] > 0
    finally:
        twin.clear_faults()
