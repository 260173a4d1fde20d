"""NAPALM's own getter tests (napalm.base.test.getters.BaseTestGetters, live mode) against a deployed EOS twin.

NAPALM ships the test class its drivers are certified with: every getter's result is checked against NAPALM's
result models (napalm.base.models via helpers.test_model). Run live (NAPALM_TEST_MOCK=0) against the twin's rtsw1
and ctsw1 through the unchanged eos driver, they show that every getter parses what the twin serves into exactly
the model's shape. Getters the eos driver does not implement skip themselves (NotImplementedError -> skip).
Extra cases call getters with this fabric's real prefixes and peers, where the generic tests use placeholders.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import napalm
import pytest
from napalm.base import models
from napalm.base.test import helpers

from tests.twin_site import CREDS, FABRIC, TwinSite


def _live_getters() -> Any:
    """NAPALM's getter test class in live mode (its mode is fixed when its module is imported)."""
    os.environ["NAPALM_TEST_MOCK"] = "0"
    for name in ("napalm.base.test.conftest", "napalm.base.test.getters"):
        if name in sys.modules:
            importlib.reload(sys.modules[name])
    return importlib.import_module("napalm.base.test.getters").BaseTestGetters


pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestReturnNotNoneWarning")   # NAPALM's tests return results
BaseTestGetters = _live_getters()
EosDriver = napalm.get_network_driver("eos")


@pytest.fixture(scope="module")
def eos_twin(dc1_lab: Path, dc1_deployed: str, tmp_path_factory: pytest.TempPathFactory) -> TwinSite:
    from nr_run.lab.twin.lab import lab_reset

    lab_reset(dc1_lab, dc1_deployed)
    return TwinSite(dc1_lab, tmp_path_factory.mktemp("napalm"))


@pytest.fixture(scope="module", params=["rtsw1", "ctsw1"])
def opened(request: pytest.FixtureRequest, eos_twin: TwinSite) -> Iterator[Any]:
    ep = eos_twin.addresses[request.param]
    drv = EosDriver(ep["host"], *CREDS["eos"], timeout=30, optional_args={"port": ep["port"], "transport": "https"})
    drv.open()
    yield drv
    drv.close()


@pytest.fixture
def test_case() -> str:
    return "twin"


class TestEosGettersOnTheTwin(BaseTestGetters):
    driver = EosDriver

    @pytest.fixture(autouse=True)
    def _device(self, opened: Any) -> None:
        type(self).device = opened

    # Generic cases whose data this fabric does not have (the getter itself runs in the fabric cases below or
    # returns a correct empty result): they would fail on a real dc1 as well.
    def test_ping(self, test_case: str) -> None:
        pytest.skip("pings 8.8.8.8, outside the lab; see test_ping_loopback")

    def test_traceroute(self, test_case: str) -> None:
        pytest.skip("traces 8.8.8.8, outside the lab")

    def test_get_route_to(self, test_case: str) -> None:
        pytest.skip("asks for 1.0.4.0/24, not in this fabric; see test_route_to_a_bgp_prefix")

    def test_get_route_to_longer(self, test_case: str) -> None:
        pytest.skip("asks for 1.0.4.0/24, not in this fabric; see test_route_to_a_bgp_prefix")

    def test_get_arp_table_with_vrf(self, test_case: str) -> None:
        pytest.skip("asks for VRF TEST; the fabric has only the default VRF (see test_get_arp_table)")

    def test_get_ntp_servers(self, test_case: str) -> None:
        pytest.skip("the rendered configs configure no NTP server")

    def test_get_ntp_stats(self, test_case: str) -> None:
        assert self.device.get_ntp_stats() == []
        pytest.skip("the rendered configs configure no NTP server: no associations")

    def test_get_mac_address_table(self, test_case: str) -> None:
        pytest.skip("routed ports learn no MAC addresses: the table is empty, as on a real routed fabric")

    def test_get_users(self, test_case: str) -> None:
        users = self.device.get_users()
        assert all(helpers.test_model(models.UsersDict, u) for u in users.values())
        # the deploy (a replace) kept the switch's own users: the inventory never holds them
        assert users["admin"]["level"] == 15


def test_route_to_a_bgp_prefix(opened: Any):
    d = FABRIC.devices["rtsw2"]
    target = d.loopback
    assert target is not None
    for longer in (False, True):
        routes = opened.get_route_to(target, longer=longer)
        assert list(routes) == [target]
        for route in routes[target]:
            assert helpers.test_model(models.RouteDict, route)
            assert route["protocol"] == "eBGP" and route["current_active"]
            assert route["protocol_attributes"]["remote_as"] == d.asn      # the origin AS ends the path


def test_bgp_neighbors_detail_has_every_peer(opened: Any):
    detail = opened.get_bgp_neighbors_detail()
    peers = [p for vrf in detail.values() for asn in vrf.values() for p in asn]
    name = next(n for n, d in FABRIC.devices.items() if d.bgp and d.bgp.router_id == peers[0]["local_address"]
                or any(i.ip == peers[0]["local_address"] for i in d.interfaces))
    bgp = FABRIC.devices[name].bgp
    assert bgp is not None
    assert sorted(p["remote_address"] for p in peers) == sorted(p.address for p in bgp.peers)
    for peer in peers:
        assert helpers.test_model(models.PeerDetailsDict, peer)
        assert peer["connection_state"] == "Established" and peer["up"]


def test_lldp_detail_and_arp_name_the_neighbours(opened: Any):
    lldp = opened.get_lldp_neighbors_detail()
    assert lldp and all(n["remote_system_name"] for ns in lldp.values() for n in ns)
    arp = opened.get_arp_table()
    assert arp and all(helpers.test_model(models.ARPTableDict, e) for e in arp)


def test_ping_loopback(opened: Any):
    # Only loopbacks and host blocks are advertised, so a reply reaches the loopback, not the p2p source
    name = opened.get_facts()["hostname"]
    own = FABRIC.devices[name].loopback.split("/")[0]
    target = FABRIC.devices["rtsw2"].loopback.split("/")[0]
    result = opened.ping(target, source=own, count=2)
    assert result["success"]["packet_loss"] == 0 and result["success"]["probes_sent"] == 2
    if name == "rtsw1":     # two hops away: rtsw2 has no route back to rtsw1's uplink /31
        assert opened.ping(target, count=2)["success"]["packet_loss"] == 2
