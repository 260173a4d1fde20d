"""Intent derivation for dc1: addresses, ASNs, peers, RoCE maps, headroom numbers, determinism."""

from __future__ import annotations

import random

import pytest

from nr_run.intent import compile_site
from nr_run.intent.headroom import headroom_bits, headroom_bytes
from tests.conftest import DC1


@pytest.fixture(scope="module")
def dc1():
    return compile_site(DC1)


def test_devices_and_links(dc1):
    assert sorted(dc1.devices) == ["ctsw1", "ctsw2", "gpu1", "gpu2", "gpu3", "gpu4", "rtsw1", "rtsw2", "rtsw3", "rtsw4"]
    fabric = [lk for lk in dc1.links if lk.role == "fabric"]
    host = [lk for lk in dc1.links if lk.role == "host"]
    assert len(fabric) == 8 and len(host) == 8


def test_asn_plan(dc1):
    assert dc1.devices["ctsw1"].asn == dc1.devices["ctsw2"].asn == 65100
    assert [dc1.devices[f"rtsw{i}"].asn for i in range(1, 5)] == [65101, 65102, 65103, 65104]


def test_loopbacks_and_router_ids(dc1):
    assert dc1.devices["ctsw1"].loopback == "10.255.0.1/32"
    assert dc1.devices["ctsw2"].loopback == "10.255.0.2/32"
    assert dc1.devices["rtsw3"].loopback == "10.255.1.3/32"
    assert dc1.devices["rtsw3"].bgp.router_id == "10.255.1.3"


def test_uplink_cabling_and_addresses(dc1):
    rtsw1 = {i.name: i for i in dc1.devices["rtsw1"].interfaces}
    # uplink i of every RTSW -> CTSW i; CTSW port = RTSW ordinal
    assert (rtsw1["Ethernet1"].peer_device, rtsw1["Ethernet1"].peer_port) == ("ctsw1", "Ethernet1")
    assert (rtsw1["Ethernet2"].peer_device, rtsw1["Ethernet2"].peer_port) == ("ctsw2", "Ethernet1")
    # CTSW takes the even address of the /31
    assert rtsw1["Ethernet1"].address == "10.254.0.1/31" and rtsw1["Ethernet1"].peer_ip == "10.254.0.0"
    ctsw2 = {i.name: i for i in dc1.devices["ctsw2"].interfaces}
    assert ctsw2["Ethernet1"].address == "10.254.0.2/31"
    assert ctsw2["Ethernet3"].peer_device == "rtsw3" and ctsw2["Ethernet3"].peer_port == "Ethernet8"


def test_sonic_port_names_slots(dc1):
    rtsw3 = {i.name: i for i in dc1.devices["rtsw3"].interfaces}
    assert sorted(rtsw3) == ["Ethernet0", "Ethernet16", "Ethernet24", "Ethernet8"]
    # the neutral facts the SONiC builder derives lanes from (tests/test_render.py checks the lanes)
    assert rtsw3["Ethernet8"].slot == 1 and dc1.devices["rtsw3"].hardware.lanes_per_port == 4
    assert rtsw3["Ethernet16"].role == "host" and rtsw3["Ethernet16"].peer_device == "gpu3"


def test_rail_optimized_hosts(dc1):
    # NIC i of every server in a unit goes to that unit's RTSW i
    for gpu in ("gpu1", "gpu2", "gpu3", "gpu4"):
        nics = dc1.devices[gpu].nics
        su = dc1.devices[gpu].su
        assert [n.rail for n in nics] == [1, 2]
        for nic in nics:
            leaf = dc1.devices[nic.peer_device]
            assert leaf.su == su and leaf.index == nic.rail
            port = next(i for i in leaf.interfaces if i.name == nic.peer_port)
            assert port.ip == nic.gateway and port.peer_ip == nic.ip
            assert nic.mtu == 9000 and port.mtu == 9214


def test_bgp_peers(dc1):
    rtsw1 = dc1.devices["rtsw1"].bgp
    assert [(p.address, p.remote_asn, p.peer_device) for p in rtsw1.peers] == [
        ("10.254.0.0", 65100, "ctsw1"), ("10.254.0.2", 65100, "ctsw2")]
    ctsw1 = dc1.devices["ctsw1"].bgp
    assert [(p.peer_device, p.remote_asn) for p in ctsw1.peers] == [
        ("rtsw1", 65101), ("rtsw2", 65102), ("rtsw3", 65103), ("rtsw4", 65104)]
    # BFD is wanted site-wide; which peers get it is the platform builders' call (from the peer's platform)
    assert ctsw1.bfd is True
    assert [(p.peer_device, p.peer_platform) for p in ctsw1.peers] == [
        ("rtsw1", "eos"), ("rtsw2", "eos"), ("rtsw3", "sonic"), ("rtsw4", "sonic")]
    assert ctsw1.maximum_paths == ctsw1.ecmp == 64
    # each session is described the same way from both ends
    for name in ("rtsw1", "rtsw2", "rtsw3", "rtsw4"):
        for peer in dc1.devices[name].bgp.peers:
            far = dc1.devices[peer.peer_device].bgp.peers
            back = next(p for p in far if p.address == peer.local_address)
            assert back.remote_asn == dc1.devices[name].asn and back.local_address == peer.address


def test_roce_profile(dc1):
    roce = dc1.devices["rtsw1"].roce
    assert len(roce.dscp_to_tc) == 64
    assert roce.dscp_to_tc[26] == 3 and roce.dscp_to_tc[48] == 6 and roce.dscp_to_tc[0] == 0
    assert roce.dscp_overrides == {26: 3, 48: 6}
    assert roce.lossless_priorities == [3] and roce.lossless_queues == [3]
    assert roce.cnp_queue == 6
    assert roce.ecn.min_bytes == 150_000 and roce.ecn.max_bytes == 1_500_000 and roce.ecn.max_mark_probability == 20
    assert roce.tc_to_pg == {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 0, 7: 0}
    assert [(s.queue, s.type) for s in roce.schedulers] == [(0, "dwrr"), (3, "dwrr"), (6, "strict")]
    assert (roce.watchdog.detection_ms, roce.watchdog.restoration_ms, roce.watchdog.poll_ms) == (200, 400, 100)


def test_headroom_matches_hand_computed_values():
    # worked example in shared/reference/peers-and-numbers.md §5: 400G, 100 m, a 9216-byte frame (L3 MTU 9194 +
    # 22 bytes of Ethernet header, 802.1Q tag and FCS): 2 x 9236 B x 8 + 672 + 2 x 100 m x 5 ns x 400 Gb/s + 905 x 512
    assert headroom_bits(400_000, 100, 9194) == 73_888 * 2 + 672 + 400_000 + 463_360 == 1_011_808
    assert headroom_bytes(400_000, 100, 9194) == 126_476
    # 400G, 30 m, L3 MTU 9214 (9256 B on the wire): 148,096 + 672 + 120,000 + 463,360 = 732,128 bits = 91,516 B;
    # 254 B cells -> 361 cells
    assert headroom_bytes(400_000, 30, 9214) == 91_516
    assert headroom_bytes(400_000, 30, 9214, cell_bytes=254) == 361 * 254
    # 100G, 3 m, MTU 9214: 148,096 + 672 + 3,000 + 201,728 = 353,496 bits = 44,187 B
    assert headroom_bytes(100_000, 3, 9214) == 44_187
    with pytest.raises(ValueError, match="10G"):
        headroom_bits(10_000, 3, 9214)


def test_headroom_in_intent_follows_cable_length(dc1):
    rtsw1 = {i.name: i for i in dc1.devices["rtsw1"].interfaces}
    # rtsw1:Ethernet1 has a 45 m override, Ethernet2 the rule's 30 m
    assert rtsw1["Ethernet1"].cable_length_m == 45 and rtsw1["Ethernet2"].cable_length_m == 30
    assert rtsw1["Ethernet1"].headroom.xoff_bytes == headroom_bytes(400_000, 45, 9214) > rtsw1["Ethernet2"].headroom.xoff_bytes
    rtsw3 = {i.name: i for i in dc1.devices["rtsw3"].interfaces}
    assert rtsw3["Ethernet0"].headroom.xoff_bytes % 254 == 0
    assert dc1.devices["rtsw3"].buffers.headroom_bytes == sum(i.headroom.xoff_bytes for i in rtsw3.values())
    # hardware without a buffer cell size: nr-run configures no buffers there
    assert dc1.devices["rtsw1"].buffers is None


def test_intent_names_no_platform_detail(dc1):
    rtsw3 = dc1.devices["rtsw3"]
    assert rtsw3.hardware.model_dump() == {"name": "sonic-rtsw", "platform_id": "x86_64-arista_7060x6_64pe",
                                           "asic": "th5", "lanes_per_port": 4, "speed_mbps": 400000, "sku_dir": ""}
    fields = set(type(rtsw3).model_fields) | set(type(rtsw3.interfaces[0]).model_fields)
    assert not fields & {"sonic_platform", "lanes", "alias", "buffers_pools"}


def test_legacy_sonic_platform_key_still_accepted(site):
    """In a format-1 file (the name's last format) it is read as platform_id, with a warning."""
    def edit(d):
        d.pop("format", None)
        hw = d["hardware"]["sonic-rtsw"]
        hw["sonic_platform"] = hw.pop("platform_id")
    site.edit("fabric.yaml", edit)
    assert compile_site(site.path).devices["rtsw3"].hardware.platform_id == "x86_64-arista_7060x6_64pe"


def test_deterministic_regardless_of_host_order(site):
    baseline = compile_site(site.path).model_dump_json()
    for seed in range(3):
        def shuffle(hosts, seed=seed):
            items = list(hosts.items())
            random.Random(seed).shuffle(items)
            hosts.clear()
            hosts.update(items)
        site.edit("hosts.yaml", shuffle)
        assert compile_site(site.path).model_dump_json() == baseline


def test_host_blocks_are_per_rtsw_and_per_port(dc1):
    # 30 downlink slots per RTSW -> a /26 each, indexed by RTSW ordinal; a host /31 sits at its port's slot
    assert [dc1.devices[f"rtsw{i}"].host_block for i in range(1, 5)] == [
        "10.10.0.0/26", "10.10.0.64/26", "10.10.0.128/26", "10.10.0.192/26"]
    rtsw3 = {i.name: i for i in dc1.devices["rtsw3"].interfaces}
    assert rtsw3["Ethernet16"].address == "10.10.0.128/31"     # first downlink slot
    assert rtsw3["Ethernet24"].address == "10.10.0.130/31"
    assert dc1.devices["ctsw1"].host_block is None
