"""Collection reads the routes a check judges, per prefix, not whole routing tables (dc1 twin, real clients)."""

from __future__ import annotations

from nr_run.runbooks.check import run_checks
from nr_run.runbooks.inventory import init_nornir
from nr_run.validators.base import required_prefixes, select
from nr_run.validators.checks.ecmp import destinations
from tests.conftest import DC1
from tests.twin_site import FABRIC

WHOLE_TABLE = ("show ip route vrf default", "vtysh -c 'show ip route json'")


def _check(twin, checks: list[str]):
    nr = init_nornir("dc1", DC1.parent, workers=8, lab=True, address_map=twin.addresses)
    try:
        return run_checks(nr, FABRIC, checks, keep_states=True)
    finally:
        nr.close_connections()


def test_ecmp_reads_only_the_loopbacks_it_judges(deployed_twin) -> None:
    report = _check(deployed_twin, ["ecmp"])
    assert report.passed, [f.to_dict() for f in report.findings if not f.passed]
    checks = select(["ecmp"])
    for host in ("rtsw1", "rtsw3"):           # EOS over eAPI, SONiC over SSH
        planned = required_prefixes(checks, FABRIC.devices[host], FABRIC)
        assert planned == sorted(str(d.loopback) for d in destinations(FABRIC.devices[host], FABRIC))
        assert sorted(report.states[host].routes) == planned
        sent = deployed_twin.log_commands(host)
        assert not [c for c in sent if c in WHOLE_TABLE]
        assert any(p in c for c in sent for p in planned)
    judged = {f.peer_device for f in report.findings if f.device == "rtsw1"}
    assert judged == {d.name for d in destinations(FABRIC.devices["rtsw1"], FABRIC)}


def test_a_lost_path_toward_a_judged_loopback_fails_ecmp(deployed_twin) -> None:
    """A link down between a CTSW and a destination removes that CTSW's path toward it from every source."""
    dest = destinations(FABRIC.devices["rtsw1"], FABRIC)[0]
    uplink = next(i for i in dest.interfaces if i.role == "fabric")
    deployed_twin.fault("link_down", device=dest.name, port=uplink.name)
    report = _check(deployed_twin, ["ecmp"])
    failed = [f for f in report.findings if not f.passed and f.device == "rtsw1"]
    assert [f.peer_device for f in failed] == [dest.name]
    assert "missing path" in failed[0].hint
