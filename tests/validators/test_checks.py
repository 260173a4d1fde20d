"""evaluate() of every check on a healthy dc1 state built from the intent, then one fault at a time."""

from __future__ import annotations

import pytest

from nr_run.intent import compile_site
from nr_run.platforms.state import BgpPeerState
from nr_run.validators.base import UnknownCheck, evaluate_all, select
from tests.validators.healthy import healthy_states

FABRIC = compile_site("inventory/dc1")
ALL = [c.name for c in select(None)]


@pytest.fixture
def states():
    return healthy_states(FABRIC)


def failures(states, only=None):
    return [f for f in evaluate_all(select(only), FABRIC, states) if not f.passed]


def failed_checks(states):
    return sorted({f.check for f in failures(states)})


def test_registry_select_by_name_and_tag():
    assert ALL == ["bgp", "buffers", "cabling", "counters", "ecmp", "ecn", "host", "host-link", "interfaces", "pfc",
                   "rails", "rdma", "zone-summary"]
    assert [c.name for c in select(["pfc"])] == ["pfc"]
    assert [c.name for c in select(["routing"])] == ["bgp", "ecmp", "zone-summary"]
    assert [c.name for c in select(["host"])] == ["host"]          # a name wins over a tag
    assert [c.name for c in select(["pfc", "ecn"])] == ["ecn", "pfc"]
    with pytest.raises(UnknownCheck):
        select(["nope"])


def test_healthy_fabric_passes_everything(states):
    findings = evaluate_all(select(None), FABRIC, states)
    assert [f for f in findings if not f.passed] == []
    # every check produced evidence, and buffers only on SONiC
    assert {f.check for f in findings} == set(ALL) - {"zone-summary"}     # multi-zone sites only
    assert {f.device for f in findings if f.check == "buffers"} == {"rtsw3", "rtsw4"}


def test_mtu_1500_on_one_link(states):
    states["rtsw1"].interfaces["Ethernet1"].mtu = 1500
    [f] = failures(states)
    assert (f.check, f.device, f.target, f.expected, f.observed) == ("interfaces", "rtsw1", "Ethernet1", "mtu 9214", "mtu 1500")


def test_cable_swap_is_named(states):
    lldp = {n.local_port: n for n in states["rtsw1"].lldp}
    lldp["Ethernet1"].remote_device, lldp["Ethernet2"].remote_device = "ctsw2", "ctsw1"
    fs = failures(states)
    assert failed_checks(states) == ["cabling"]
    f = next(f for f in fs if f.target == "Ethernet1")
    assert f.expected == "ctsw1:Ethernet1" and f.observed == "ctsw2:Ethernet1" and "swapped" in f.hint
    assert "Ethernet2" in f.hint


def test_missing_link_lldp(states):
    states["rtsw3"].lldp = [n for n in states["rtsw3"].lldp if n.local_port != "Ethernet8"]
    [f] = failures(states)
    assert (f.check, f.device, f.target, f.observed) == ("cabling", "rtsw3", "Ethernet8", "no LLDP neighbor")


def test_wrong_remote_as_and_unexpected_peer(states):
    peer = FABRIC.devices["rtsw2"].bgp.peers[0].address
    states["rtsw2"].bgp[peer].remote_asn = 65199
    states["rtsw2"].bgp[peer].state = "Active"
    states["rtsw2"].bgp["10.9.9.9"] = BgpPeerState("10.9.9.9", 65000, "Idle")
    fs = failures(states, ["bgp"])
    got = {(f.target.split()[0], f.expected, f.observed) for f in fs}
    assert (peer, "remote-as 65100", "remote-as 65199") in got
    assert (peer, "Established", "Active") in got
    assert ("10.9.9.9", "no such peer", "AS65000 Idle") in got


def test_ecmp_missing_path(states):
    route = states["rtsw3"].routes["10.255.1.1/32"]
    route.next_hops = route.next_hops[:1]
    [f] = failures(states)
    assert (f.check, f.device) == ("ecmp", "rtsw3") and f.target.startswith("10.255.1.1/32")
    assert f.expected.startswith("2 next-hops") and f.observed.startswith("1 next-hops")


def test_pfc_priority_4_on_one_end(states):
    states["ctsw1"].pfc_priorities["Ethernet1"] = [4]
    fs = failures(states)
    assert failed_checks(states) == ["pfc"]
    own = next(f for f in fs if f.target == "Ethernet1")
    assert (own.device, own.expected, own.observed) == ("ctsw1", "pfc priorities 3", "pfc priorities 4")
    agree = next(f for f in fs if "<->" in f.target)
    assert "ctsw1:Ethernet1=4" in agree.observed and "rtsw1:Ethernet1=3" in agree.observed


def test_watchdog_off_and_storm(states):
    states["rtsw4"].watchdog["Ethernet0"].enabled = False
    states["rtsw4"].storms[0].stormed = True
    fs = failures(states)
    assert {(f.check, f.device, f.target, f.observed) for f in fs} == {
        ("pfc", "rtsw4", "Ethernet0 watchdog", "off"),
        ("pfc", "rtsw4", "Ethernet0 priority 3", "storm detected (queue stormed)")}


def test_ecn_thresholds_and_dscp_map(states):
    states["ctsw2"].ecn[("Ethernet2", 3)].min_bytes = 300_000
    states["rtsw3"].qos["Ethernet16"].dscp_to_tc[26] = 1
    states["rtsw1"].qos["Ethernet1"].schedulers[6] = "dwrr"
    fs = failures(states)
    assert failed_checks(states) == ["ecn"]
    got = {(f.device, f.target): (f.expected, f.observed) for f in fs}
    assert got[("ctsw2", "Ethernet2 queue 3")][1].startswith("ecn min 300000 B")
    assert got[("rtsw3", "Ethernet16 dscp map")] == ("dscp 26->tc 3", "dscp 26->tc 1")
    assert got[("rtsw1", "Ethernet1 queue 6")] == ("cnp queue strict", "cnp queue dwrr")


def test_buffers_headroom_below_intent(states):
    pg = states["rtsw4"].buffer_pgs["Ethernet0"][0]
    pg.xoff_bytes -= 1
    states["rtsw4"].buffer_pgs["Ethernet8"] = []
    fs = failures(states)
    assert {(f.check, f.device, f.target) for f in fs} == {("buffers", "rtsw4", "Ethernet0 pg 3"),
                                                           ("buffers", "rtsw4", "Ethernet8 pg 3")}


def test_lossless_drops_and_pause_from_ctsw(states):
    states["rtsw2"].counters_second.ports["Ethernet3"].queue_drops[3] = 40
    states["ctsw1"].counters_second.ports["Ethernet2"].pfc_tx_total = 10_000
    fs = failures(states)
    assert failed_checks(states) == ["counters"]
    drops = next(f for f in fs if f.device == "rtsw2")
    assert drops.target == "Ethernet3 queue 3 drops" and drops.observed.startswith("40 drops")
    pause = next(f for f in fs if f.device == "ctsw1")
    assert pause.target == "Ethernet2 pfc tx" and pause.severity == "error" and "toward rtsw2" in pause.hint


def test_ecn_marks_reported_as_info(states):
    marks = [f for f in evaluate_all(select(["counters"]), FABRIC, states) if f.target.endswith("ecn marks")]
    assert marks and all(f.passed and f.severity == "info" and "4 ECN marks" in f.observed for f in marks)


def test_host_nic_without_pfc(states):
    states["gpu2"].nics["eth2"].pfc_priorities = []
    fs = failures(states)
    assert failed_checks(states) == ["host", "pfc"]
    host = next(f for f in fs if f.check == "host")
    assert (host.device, host.target, host.expected, host.observed) == ("gpu2", "eth2 pfc", "pfc 3", "pfc none")
    assert (host.port, host.kind) == ("eth2", "nic-pfc")
    [agree] = [f for f in fs if f.check == "pfc"]    # reported once, from the switch end of the link
    assert agree.device == "rtsw2" and agree.target == "Ethernet4 <-> gpu2:eth2" and "gpu2:eth2=none" in agree.observed


def test_host_unreachable(states):
    for s in states.values():
        for p in s.rdma:
            if p.dst_device == "gpu3":
                p.ping_ok, p.ping_detail, p.bw_gbps = False, "3 packets transmitted, 0 received, 100% packet loss", None
    fs = failures(states)
    assert failed_checks(states) == ["rdma"]
    assert all("gpu3" in f.target and "0 received" in f.observed for f in fs) and fs


def test_missing_section_is_an_error(states):
    s = states["rtsw1"]
    s.sections.discard("bgp")
    s.errors["bgp"] = "CommandError: timeout"
    [f] = failures(states, ["bgp"])
    assert (f.device, f.target, f.observed) == ("rtsw1", "section:bgp", "CommandError: timeout")
