"""Every getter NAPALM's eos driver implements, on every EOS switch of the deployed dc1 twin: each answers, and
each one whose data the fabric has returns some (the NTP and MAC tables are empty on this routed fabric with
no NTP server, as on real switches configured the same way)."""

from __future__ import annotations

from pathlib import Path

import pytest
from napalm.base.base import NetworkDriver
from napalm.eos.eos import EOSDriver

from tests.twin_site import FABRIC, TwinSite

EOS_NODES = ["ctsw1", "ctsw2", "rtsw1", "rtsw2"]
GETTERS = sorted(n for n in dir(EOSDriver) if n.startswith("get_")
                 and getattr(EOSDriver, n) is not getattr(NetworkDriver, n, None))
EMPTY_HERE = {"get_ntp_servers", "get_ntp_stats", "get_mac_address_table", "get_optics"}   # no NTP, routed, no optics


@pytest.fixture(scope="module")
def answers(dc1_lab: Path, dc1_deployed: str, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], object]:
    from nr_run.lab.twin.lab import lab_reset

    lab_reset(dc1_lab, dc1_deployed)
    site = TwinSite(dc1_lab, tmp_path_factory.mktemp("getters"))
    out: dict[tuple[str, str], object] = {}
    for node in EOS_NODES:
        drv = site.driver(node)
        try:
            far = FABRIC.devices["rtsw2" if node != "rtsw2" else "rtsw1"].loopback     # a BGP-learned prefix
            for name in GETTERS:
                if name == "get_route_to":
                    out[(node, name)] = drv.get_route_to(destination=far)
                else:
                    out[(node, name)] = getattr(drv, name)()
        finally:
            drv.close()
    return out


def test_the_eos_driver_implements_the_getters_checked():
    assert len(GETTERS) >= 20 and "get_network_instances" in GETTERS


@pytest.mark.parametrize("name", GETTERS)
def test_every_getter_answers_on_every_eos_node(answers: dict[tuple[str, str], object], name: str):
    for node in EOS_NODES:
        data = answers[(node, name)]
        if name not in EMPTY_HERE:
            assert data, f"{node}: {name} returned nothing"


def test_network_instances_include_mgmt(answers: dict[tuple[str, str], object]):
    for node in EOS_NODES:
        mgmt = answers[(node, "get_network_instances")]["MGMT"]   # type: ignore[index]
        assert "Management0" in mgmt["interfaces"]["interface"], node
