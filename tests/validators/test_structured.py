"""Findings say where they are (port, peer device, peer port) and stage gating decides on those fields."""

from __future__ import annotations

import pytest

from nr_run.intent import compile_site
from nr_run.runbooks.deploy_checks import relevant
from nr_run.validators.base import evaluate_all, select
from tests.validators.healthy import healthy_states

FABRIC = compile_site("inventory/dc1")


@pytest.fixture
def states():
    return healthy_states(FABRIC)


def failures(states, only=None):
    return [f for f in evaluate_all(select(only), FABRIC, states) if not f.passed]


def where(f):
    return (f.device, f.port, f.peer_device, f.peer_port)


def test_port_findings_name_the_intended_far_end(states):
    states["rtsw1"].interfaces["Ethernet1"].mtu = 1500
    states["rtsw3"].qos["Ethernet16"].dscp_to_tc[26] = 1
    fs = failures(states)
    mtu = next(f for f in fs if f.check == "interfaces")
    assert where(mtu) == ("rtsw1", "Ethernet1", "ctsw1", "Ethernet1")
    dscp = next(f for f in fs if f.check == "ecn")
    assert dscp.device == "rtsw3" and dscp.port == "Ethernet16"
    assert (dscp.peer_device, dscp.peer_port) == next(
        (i.peer_device, i.peer_port) for i in FABRIC.devices["rtsw3"].interfaces if i.name == "Ethernet16")


def test_pfc_link_agreement_names_both_ends(states):
    states["gpu2"].nics["eth2"].pfc_priorities = []
    agree = next(f for f in failures(states, ["pfc"]) if f.port)
    assert where(agree) == ("rtsw2", "Ethernet4", "gpu2", "eth2")
    [host] = failures(states, ["host"])
    assert where(host) == ("gpu2", "eth2", "rtsw2", "Ethernet4")


def test_bgp_session_names_its_link(states):
    peer = FABRIC.devices["rtsw2"].bgp.peers[0]
    states["rtsw2"].bgp[peer.address].state = "Active"
    [f] = failures(states, ["bgp"])
    far = next(i.peer_port for i in FABRIC.devices["rtsw2"].interfaces if i.name == peer.local_port)
    assert where(f) == ("rtsw2", peer.local_port, peer.peer_device, far)
    # a session nobody planned has no intended peer
    states["rtsw2"].bgp[peer.address].state = "Established"
    from nr_run.platforms.state import BgpPeerState
    states["rtsw2"].bgp["10.9.9.9"] = BgpPeerState("10.9.9.9", 65000, "Idle")
    [extra] = failures(states, ["bgp"])
    assert where(extra) == ("rtsw2", "", "", "")


def test_rdma_and_ecmp_name_the_far_device(states):
    for s in states.values():
        for p in s.rdma:
            if p.dst_device == "gpu3":
                p.ping_ok, p.ping_detail = False, "100% packet loss"
    fs = failures(states, ["rdma"])
    assert fs and all(f.peer_device == "gpu3" and f.port.startswith("eth") and f.peer_port.startswith("eth")
                      for f in fs)
    route = states["rtsw3"].routes["10.255.1.1/32"]
    route.next_hops = route.next_hops[:1]
    [ecmp] = failures(states, ["ecmp"])
    assert where(ecmp) == ("rtsw3", "", "rtsw1", "")


def test_missing_section_is_on_the_device_only(states):
    states["rtsw1"].sections.discard("bgp")
    [f] = failures(states, ["bgp"])
    assert where(f) == ("rtsw1", "", "", "")


# ------------------------------------------------------------------ stage gating

def test_stage_excludes_findings_toward_a_peer_not_at_intent(states):
    # stage = rtsw1; ctsw1 is not yet at intent, the servers always count as at intent
    stage, at_intent = {"rtsw1"}, {"rtsw1", "gpu1", "gpu2"}
    states["rtsw1"].interfaces["Ethernet1"].oper_up = False        # toward ctsw1 (not at intent)
    states["rtsw1"].interfaces["Ethernet3"].mtu = 1500             # toward gpu1 (at intent)
    states["rtsw1"].sections.discard("pfc")                        # the stage device itself
    fs = failures(states, ["stage"])
    kept = {(f.check, f.device, f.port) for f in fs if relevant(f, stage, at_intent)}
    assert ("interfaces", "rtsw1", "Ethernet3") in kept
    assert ("pfc", "rtsw1", "") in kept
    assert ("interfaces", "rtsw1", "Ethernet1") not in kept
    # once ctsw1 is at intent the link counts, from either end
    assert any(f.port == "Ethernet1" for f in fs if relevant(f, stage, at_intent | {"ctsw1"}))


def test_stage_counts_the_far_end_of_its_links_but_not_strangers(states):
    states["ctsw1"].interfaces["Ethernet1"].mtu = 1500      # ctsw1 side of the rtsw1 link
    states["ctsw1"].interfaces["Ethernet2"].mtu = 1500      # ctsw1 toward rtsw2 (not in the stage)
    fs = failures(states, ["interfaces"])
    stage, at_intent = {"rtsw1"}, {"rtsw1", "ctsw1", "rtsw2"}
    kept = {(f.device, f.peer_device) for f in fs if relevant(f, stage, at_intent)}
    assert kept == {("ctsw1", "rtsw1")}


def test_stage_tag_selects_the_post_commit_checks():
    assert [c.name for c in select(["stage"])] == ["bgp", "buffers", "cabling", "ecn", "interfaces", "pfc"]
