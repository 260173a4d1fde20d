"""Findings grouped by probable cause on dc1's intent (pure: built findings, no devices)."""

from __future__ import annotations

from nr_run.intent import compile_site
from nr_run.validators.base import Finding
from nr_run.validators.correlate import cause_of, correlate
from tests.conftest import DC1

FABRIC = compile_site(DC1)


def _f(check, device, port="", peer="", peer_port="", kind="", observed="bad", severity="error", target=None):
    return Finding(check, device, target or port, "good", observed, False, severity, f"fix {device}", port, peer,
                   peer_port, kind)


def test_a_dead_ctsw_is_one_device_cause_with_its_links_and_the_narrower_ecmp_under_it():
    dead = [_f("interfaces", "ctsw1", target="section:interfaces", kind="not-collected", observed="timeout"),
            _f("bgp", "ctsw1", target="section:bgp", kind="not-collected", observed="timeout")]
    far_ends = [_f("interfaces", f"rtsw{i}", "Ethernet1", "ctsw1", f"Ethernet{i}", observed="oper down")
                for i in (1, 2)] + [_f("cabling", "rtsw3", "Ethernet0", "ctsw1", "Ethernet3", observed="no LLDP")]
    ecmp = [_f("ecmp", f"rtsw{i}", peer=f"rtsw{j}", target=f"to rtsw{j}") for i, j in ((1, 2), (2, 1), (3, 4))]
    other = _f("pfc", "rtsw4", "Ethernet16", "gpu3", "eth2", observed="pfc priorities 4")
    causes = correlate(dead + far_ends + ecmp + [other], FABRIC)
    assert [c.id for c in causes] == ["device:ctsw1", "config:rtsw4:pfc"]
    device = causes[0]
    assert device.layer == "device" and len(device.findings) == len(dead + far_ends + ecmp)
    assert device.summary == "ctsw1 could not be read: timeout"
    assert cause_of(causes)[other.id] == "config:rtsw4:pfc"


def test_two_faults_are_two_causes_physical_first_and_every_finding_in_one():
    link = [_f("interfaces", "rtsw3", "Ethernet16", "gpu3", "eth1", observed="oper down"),
            _f("host", "gpu3", "eth1", "rtsw3", "Ethernet16", observed="down"),
            _f("rdma", "gpu4", "eth1", "gpu3", "eth1", target="eth1 -> gpu3:eth1", observed="100% loss")]
    ecn = [_f("ecn", "rtsw1", f"Ethernet{p}", observed="ecn off") for p in (3, 4)]
    causes = correlate(ecn + link, FABRIC)
    assert [(c.kind, c.layer) for c in causes] == [("link", "physical"), ("config", "config")]
    assert causes[0].id == "link:gpu3:eth1|rtsw3:Ethernet16" and len(causes[0].findings) == 3
    assert causes[1].summary.startswith("rtsw1 ecn: 2 findings, first Ethernet3")
    owners = cause_of(causes)
    assert set(owners) == {f.id for f in ecn + link}
    # a host link's fault never takes the ECMP width of its RTSW (no route goes over a host link)
    ecmp = _f("ecmp", "rtsw3", peer="rtsw1", target="to rtsw1")
    assert cause_of(correlate(link + [ecmp], FABRIC))[ecmp.id] == "config:rtsw3:ecmp"
    assert correlate([f for f in link if False], FABRIC) == []
    # a configuration error on the downed port stays its own cause (it outlives the link's repair)
    wrong = _f("ecn", "rtsw3", "Ethernet16", "gpu3", "eth1", observed="ecn off")
    assert cause_of(correlate(link + [wrong], FABRIC))[wrong.id] == "config:rtsw3:ecn"
