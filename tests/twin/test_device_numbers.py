"""Numbers a device would produce, read through real clients: RDMA bandwidth within the slowest link's line rate,
interface counters that move with the probes' traffic, BGP message counts and ages that follow the session, one
chassis MAC per device in every view, the MGMT VRF in show vrf and NAPALM, the EOS release of the containerlab
image, and user secrets stored hashed."""

from __future__ import annotations

import re
import time

import pytest

from nr_run.lab.twin.clab import load_clab
from tests.conftest import REPO
from tests.twin_site import FABRIC, TwinSite, ssh_run

TOPOLOGY = load_clab(REPO / "lab" / "dc1.clab.yml")


def _bw(out: str) -> float:
    return float(out.split("BW average[Gb/sec]")[1].split("\n")[1].split()[3])


def test_rdma_bandwidth_stays_within_the_slowest_link(deployed_twin: TwinSite):
    twin = deployed_twin
    rtsw3 = twin.ssh("rtsw3", password="YourPaSsWoRd")
    gpu1, gpu3 = twin.ssh("gpu1"), twin.ssh("gpu3")
    try:
        port = next(c.b_port if c.a_dev == "gpu3" else c.a_port for c in TOPOLOGY.links
                    if "gpu3" in (c.a_dev, c.b_dev) and "rtsw3" in (c.a_dev, c.b_dev))
        assert ssh_run(rtsw3, f"sudo config interface speed {port} 200000")[0] == 0
        dst = FABRIC.devices["gpu3"].nics[0].ip
        ssh_run(gpu3, "ib_write_bw -d mlx5_0 --report_gbits")
        rc, out = ssh_run(gpu1, f"ib_write_bw -d mlx5_0 -x 3 --report_gbits {dst}")
        assert rc == 0 and 0.9 * 200 < _bw(out) <= 200, out
    finally:
        for c in (rtsw3, gpu1, gpu3):
            c.close()


def _counters(twin: TwinSite, host: str, port: str) -> dict:
    result = twin.eapi(host).enable([f"show interfaces {port}"])[0]["result"]
    return result["interfaces"][port]["interfaceCounters"]


def test_interface_counters_move_with_ping_traffic(deployed_twin: TwinSite):
    twin = deployed_twin
    port = next(c.b_port if c.a_dev == "gpu1" else c.a_port for c in TOPOLOGY.links
                if "gpu1" in (c.a_dev, c.b_dev) and "rtsw1" in (c.a_dev, c.b_dev))
    before = _counters(twin, "rtsw1", port)
    gpu1 = twin.ssh("gpu1")
    try:
        dst = FABRIC.devices["gpu3"].nics[0].ip
        rc, out = ssh_run(gpu1, f"ping -c 7 -s 1000 -I eth1 {dst}")
        assert rc == 0, out
    finally:
        gpu1.close()
    after = _counters(twin, "rtsw1", port)
    assert after["inUcastPkts"] - before["inUcastPkts"] == 7          # the requests, in from the host
    assert after["outUcastPkts"] - before["outUcastPkts"] == 7        # the replies, out to it
    assert after["inOctets"] - before["inOctets"] == 7 * (1000 + 28 + 18)


def test_bgp_summary_counts_and_ages_follow_the_session(deployed_twin: TwinSite):
    node = deployed_twin.eapi("ctsw1")
    peers = node.enable(["show ip bgp summary"])[0]["result"]["vrfs"]["default"]["peers"]
    text = node.enable(["show ip bgp summary"], encoding="text")[0]["result"]["output"]
    now = time.time()
    assert peers
    for ip, p in peers.items():
        assert p["peerState"] == "Established"
        assert p["msgReceived"] >= 3 + p["prefixReceived"] and p["msgSent"] >= 3
        row = next(ln for ln in text.splitlines() if f" {ip} " in ln)
        h, m, s = (int(x) for x in re.search(r"(\d\d):(\d\d):(\d\d)", row).groups())   # type: ignore[union-attr]
        assert abs(h * 3600 + m * 60 + s - (now - p["upDownTime"])) < 5, row


def test_one_chassis_mac_per_device_in_every_view(deployed_twin: TwinSite):
    twin = deployed_twin
    node = twin.eapi("ctsw1")
    detail = node.enable(["show lldp neighbors detail"])[0]["result"]["lldpNeighbors"]
    seen = {i["systemName"]: i["chassisId"] for port in detail.values() for i in port["lldpNeighborInfo"]}
    for name in ("rtsw1", "rtsw2"):         # EOS neighbors: their own show version
        mac = twin.eapi(name).enable(["show version"])[0]["result"]["systemMacAddress"]
        assert seen[name] == mac.replace(":", ""), name
    rtsw3 = twin.ssh("rtsw3", password="YourPaSsWoRd")
    try:                                    # a SONiC neighbor: its DEVICE_METADATA mac, as lldpd sends it
        rc, out = ssh_run(rtsw3, 'sonic-db-cli CONFIG_DB HGET "DEVICE_METADATA|localhost" mac')
        rc, lldp = ssh_run(rtsw3, "show lldp neighbors")
    finally:
        rtsw3.close()
    if out.strip():
        assert seen["rtsw3"] == out.strip().replace(":", "")
    assert f"mac {twin.eapi('ctsw1').enable(['show version'])[0]['result']['systemMacAddress']}" in lldp


def test_mgmt_vrf_in_show_vrf_and_napalm(twin: TwinSite):
    drv = twin.driver("ctsw1")
    try:
        instances = drv.get_network_instances()
        facts = drv.get_facts()
    finally:
        drv.close()
    assert instances["MGMT"]["type"] == "L3VRF"
    assert "Management0" in instances["MGMT"]["interfaces"]["interface"]
    assert "default" in instances
    image = next(n.image for n in TOPOLOGY.nodes.values() if n.name == "ctsw1")
    # ceos:4.32.0F runs EOS 4.32.0F (NAPALM reports the internal version, "<release>-<build>")
    assert facts["os_version"].startswith(image.rsplit(":", 1)[1] + "-")
    assert twin.eapi("ctsw1").enable(["show version"])[0]["result"]["version"] == image.rsplit(":", 1)[1]


@pytest.mark.parametrize("command", ["show running-config", "show startup-config"])
def test_user_secrets_are_stored_hashed(twin: TwinSite, command: str):
    text = twin.eapi("ctsw1").enable([command], encoding="text")[0]["result"]["output"]
    users = [ln for ln in text.splitlines() if ln.startswith("username ")]
    assert users and all(re.search(r" secret sha512 \$6\$[./0-9A-Za-z]{16}\$[./0-9A-Za-z]{86}$", u) for u in users)


def test_bgp_timers_are_negotiated_from_both_ends(deployed_twin: TwinSite):
    node = deployed_twin.eapi("ctsw1")
    group = FABRIC.devices["ctsw1"].bgp.peer_group                       # type: ignore[union-attr]
    asn = FABRIC.devices["ctsw1"].asn
    node.config([f"router bgp {asn}", f"neighbor {group} timers 1 30"])
    peers = node.enable(["show ip bgp neighbors"])[0]["result"]["vrfs"]["default"]["peerList"]
    text = node.enable(["show ip bgp neighbors"], encoding="text")[0]["result"]["output"]
    assert peers
    for p in peers:          # the lower hold time (the peers' 9 s), our keepalive (1 s, under a third of it)
        assert (p["holdTime"], p["keepaliveTime"]) == (9, 1), p["peerAddress"]
    assert "Configured hold time is 30, keepalive interval is 1 seconds" in text
    assert "  Hold time is 9, keepalive interval is 1 seconds" in text


def test_interface_status_change_time_follows_the_link(deployed_twin: TwinSite):
    node = deployed_twin.eapi("rtsw1")
    before = node.enable(["show interfaces Ethernet1"])[0]["result"]["interfaces"]["Ethernet1"]
    deployed_twin.fault("link_down", device="rtsw1", port="Ethernet1")
    down = node.enable(["show interfaces Ethernet1"])[0]["result"]["interfaces"]["Ethernet1"]
    deployed_twin.clear_faults("link_down")
    up = node.enable(["show interfaces Ethernet1"])[0]["result"]["interfaces"]["Ethernet1"]
    assert down["lineProtocolStatus"] == "down" and up["lineProtocolStatus"] == "up"
    assert before["lastStatusChangeTimestamp"] < down["lastStatusChangeTimestamp"] <= up["lastStatusChangeTimestamp"]
    text = node.enable(["show interfaces Ethernet1"], encoding="text")[0]["result"]["output"]
    assert re.search(r"^  Up \d+ minutes?, \d+ seconds?$", text, re.M), text
