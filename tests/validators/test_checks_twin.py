"""Checks against dc1 in the twin: all pass when freshly deployed, each injected fault is named.

Each test starts from the session twin reset to its deployed baseline (every switch configured from its
rendered config through the real NAPALM drivers); faults go through the twin's fault API or as config
pushed with the same drivers / netmiko. Every
case asserts the matching check names device, port/peer, expected and observed, and that the checks
unrelated to the fault still pass. Collection goes through Nornir (napalm + netmiko), as in production.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from nr_run.runbooks.check import CheckReport, run_checks
from nr_run.runbooks.inventory import init_nornir
from nr_run.validators.base import Finding
from tests.conftest import DC1
from tests.twin_site import CREDS, FABRIC, TwinSite

OPTIONS = {"counters": {"interval_s": 0.2}, "rdma": {"server_wait_s": 0.05, "seconds": 1}}
NO_RDMA = ["bgp", "buffers", "cabling", "counters", "ecmp", "ecn", "host", "host-link", "interfaces", "pfc", "rails"]


class Twin:
    """The shared dc1 twin, deployed, seen through a Nornir of its own (as a user's script runs checks)."""

    def __init__(self, site: TwinSite) -> None:
        self.site = site
        user, password = CREDS["linux"]
        self.nr = init_nornir("dc1", DC1.parent, lab=True, address_map=site.addresses,
                              env={"NR_LINUX_USERNAME": user, "NR_LINUX_PASSWORD": password})

    def host_cmd(self, name: str, command: str) -> str:
        """A command on a server over the host's netmiko session (what an operator's script would do)."""
        return str(self.nr.inventory.hosts[name].get_connection("netmiko", self.nr.config).send_command(command))

    def check(self, checks: list[str] | None = None) -> CheckReport:
        return run_checks(self.nr, FABRIC, checks, OPTIONS)


@pytest.fixture
def twin(deployed_twin: TwinSite) -> Iterator[Twin]:
    """Every switch at its rendered config, faults cleared (the session twin reset to its deployed baseline)."""
    t = Twin(deployed_twin)
    yield t
    t.nr.close_connections()


def failed(report: CheckReport, check: str | None = None) -> list[Finding]:
    return [f for f in report.findings if not f.passed and (check is None or f.check == check)]


def show(report: CheckReport) -> str:
    return "\n".join(f"{f.check} {f.device} {f.target}: expected {f.expected}, observed {f.observed}"
                     for f in failed(report))


def test_fresh_deploy_every_check_passes(twin):
    report = twin.check()
    assert report.passed, show(report)
    assert sorted(report.checks) == sorted(NO_RDMA + ["rdma", "zone-summary"])     # zone-summary: judges no dc1 device
    s = report.summary()
    assert all(c["passed"] > 0 for name, c in s["by_check"].items() if name != "zone-summary"), s["by_check"]
    # every NIC pair on different servers is pinged (8 NICs on 4 servers: 48), the ring of 8 also runs bandwidth
    cells = report.probe_results["rdma"]["cells"]
    assert len(cells) == 48 and all(c["ping"] for c in cells)
    measured = [c for c in cells if c["gbps"] is not None]
    assert len(measured) == 8 and all(c["gbps"] > 360 for c in measured)


@dataclass
class Case:
    name: str
    inject: Callable[[Twin], None]
    check: str                                   # the check that must fail
    device: str
    target: str                                  # substring of the finding's target
    expected: str                                # substrings of expected / observed
    observed: str
    unaffected: list[str] = field(default_factory=list)
    checks: list[str] | None = field(default_factory=lambda: list(NO_RDMA))   # None: every check


def fault(kind: str, **params) -> Callable[[Twin], None]:
    return lambda t: t.site.fault(kind, **params)


def push(name: str, config: str) -> Callable[[Twin], None]:
    return lambda t: t.site.push(name, config)


RTSW2_PEER = FABRIC.devices["rtsw2"].bgp.peers[1]

CASES = [
    Case("link_down", fault("link_down", device="rtsw1", port="Ethernet1"),
         "interfaces", "rtsw1", "Ethernet1", "oper up", "oper down", ["pfc", "ecn", "buffers", "host"]),
    Case("cable_swap", fault("cable_swap", device_a="rtsw1", port_a="Ethernet1", device_b="rtsw1", port_b="Ethernet2"),
         "cabling", "rtsw1", "Ethernet1", "ctsw1:Ethernet1", "ctsw2:Ethernet1",
         ["interfaces", "pfc", "ecn", "buffers", "host"]),
    Case("wrong_remote_as", push("rtsw2", f"router bgp {FABRIC.devices['rtsw2'].asn}\n"
                                          f"   neighbor {RTSW2_PEER.address} remote-as 65199\n"),
         "bgp", "rtsw2", RTSW2_PEER.address, "remote-as 65100", "remote-as 65199",
         ["interfaces", "cabling", "pfc", "ecn", "buffers", "host"]),
    Case("mtu_1500", push("rtsw1", "interface Ethernet2\n   mtu 1500\n"),
         "interfaces", "rtsw1", "Ethernet2", "mtu 9214", "mtu 1500", ["cabling", "pfc", "ecn", "buffers", "host"]),
    Case("pfc_priority_4_one_end",
         push("rtsw3", '{"PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "4", "pfcwd_sw_enable": "4"}}}'),
         "pfc", "rtsw3", "Ethernet0", "pfc priorities 3", "pfc priorities 4",
         ["interfaces", "cabling", "bgp", "ecn", "host"]),
    Case("watchdog_off", push("rtsw2", "qos profile roce\n   no priority-flow-control pause watchdog\n"),
         "pfc", "rtsw2", "Ethernet1 watchdog", "on, drop", "off",
         ["interfaces", "cabling", "bgp", "ecn", "buffers", "host"]),
    Case("ecn_thresholds", push("ctsw1", "qos profile roce\n   tx-queue 3\n      random-detect ecn minimum-threshold "
                                         "300 kbytes maximum-threshold 1500 kbytes max-mark-probability 20\n"),
         "ecn", "ctsw1", "Ethernet1 queue 3", "ecn min 150000 B", "ecn min 300000 B",
         ["interfaces", "cabling", "bgp", "pfc", "buffers", "host"]),
    Case("dscp_map", push("rtsw3", '{"DSCP_TO_TC_MAP": {"ROCE": {"26": "1"}}}'),
         "ecn", "rtsw3", "dscp map", "dscp 26->tc 3", "dscp 26->tc 1",
         ["interfaces", "cabling", "bgp", "pfc", "buffers", "host"]),
    Case("pfc_storm", fault("pfc_storm", device="rtsw4", port="Ethernet16", priority=3),
         "pfc", "rtsw4", "Ethernet16 priority 3", "no PFC storm", "storm detected",
         ["interfaces", "cabling", "bgp", "ecn", "buffers", "host"]),
    Case("lossless_drops", fault("lossless_drops", device="rtsw2", port="Ethernet3", queue=3),
         "counters", "rtsw2", "Ethernet3 queue 3 drops", "0 drops", "drops in",
         ["interfaces", "cabling", "bgp", "pfc", "ecn", "host"]),
    Case("host_nic_without_pfc", lambda t: t.host_cmd("gpu2", "dcb pfc set dev eth2 prio-pfc 3:off"),
         "host", "gpu2", "eth2", "pfc 3", "pfc none", ["interfaces", "cabling", "bgp", "ecn", "buffers"]),
    # the server's management plane stops answering; its NICs keep their links, so only gpu3 itself is named
    Case("host_unreachable", fault("unreachable", device="gpu3"),
         "host", "gpu3", "nics", "collected", "failed",
         ["interfaces", "cabling", "bgp", "pfc", "ecn", "buffers"], checks=None),
    Case("ctsw_pause_toward_rtsw", fault("pfc_storm", device="rtsw4", port="Ethernet8", priority=3),
         "counters", "ctsw2", "Ethernet4 pfc tx", "pause <= 50/s", "/s",
         ["interfaces", "cabling", "bgp", "ecn", "buffers", "host"]),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fault_is_named_by_its_check(twin, case: Case):
    case.inject(twin)
    report = twin.check(case.checks)
    hits = [f for f in failed(report, case.check)
            if f.device == case.device and case.target in f.target
            and case.expected in f.expected and case.observed in f.observed]
    assert hits, f"{case.check} did not name the fault:\n{show(report)}"
    for other in case.unaffected:
        assert not failed(report, other), f"{other} failed on an unrelated fault:\n{show(report)}"


def test_cleared_fault_passes_again(twin):
    twin.site.fault("link_down", device="rtsw1", port="Ethernet1")
    assert failed(twin.check(["interfaces"]))
    twin.site.clear_faults()
    report = twin.check(NO_RDMA)
    assert report.passed, show(report)


def test_measurement_window_comes_from_the_options(twin):
    waited: list[float] = []
    report = run_checks(twin.nr, FABRIC, ["counters", "rdma"],
                        {"counters": {"interval_s": "0.3"}, "rdma": {"bandwidth": False}}, sleep=waited.append)
    # one counter resample once the configured window has passed since the first samples (taken during
    # collection, so part of it is already gone); no bandwidth test, so no server wait
    assert len(waited) == 1 and 0 < waited[0] <= 0.3
    assert report.passed, show(report)
    assert all("ping" in f.expected for f in report.findings if f.check == "rdma")
