"""ANTA, unchanged, against the deployed dc1 twin: every test of a routed RoCE fabric catalog runs, none errors.

The catalog has two parts: anta_catalog.yml (device-independent tests: system, configuration, management,
interface counters, routing model, BGP/BFD health) and per-device tests built here from the compiled intent (the
BGP peers each switch must have, their capabilities, route limits and timers, BFD peers, LLDP neighbors,
interface status, addresses and MTU, the other switches' loopbacks in the routing table, loopback-to-loopback
reachability). ANTA's own runner collects every command over eAPI (HEAD probe, `show version`, then its tests)
and its own test code parses the output, so a command or a field the twin serves wrongly is an ANTA error.

Property: zero errors (a command or field the twin fails to serve), zero failures on the deployed fabric (a
failure would be a fabric finding: none is expected on a clean deploy), and every test of the catalog ran on
every EOS switch. ANTA skips the tests it knows cannot run on cEOSLab (hardware counters); those are listed.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from anta.catalog import AntaCatalog
from anta.device import AsyncEOSDevice
from anta.inventory import AntaInventory
from anta.result_manager import ResultManager
from anta.runner import main as anta_main

from nr_run.intent.models import DeviceIntent
from nr_run.platforms.eos.structured import eos_speed
from nr_run.platforms.sonic.config_db import port_facts
from tests.twin_site import CREDS, FABRIC, TwinSite

CATALOG = Path(__file__).with_name("anta_catalog.yml")
EOS = sorted(n for n, d in FABRIC.devices.items() if d.platform == "eos")


def lldp_port_id(device: str, port: str) -> str:
    """What a neighbor advertises as LLDP port ID: SONiC sends its PORT alias (lldpmgrd), others the port name."""
    peer = FABRIC.devices[device]
    if peer.platform != "sonic":
        return port
    itf = next(i for i in peer.interfaces if i.name == port)
    return port_facts(itf, peer)["alias"]


def _lanes(speed_mbps: int, d: DeviceIntent) -> int:
    """The lanes the rendered `speed <rate>-<lanes>` gives the port (EOS)."""
    return int(eos_speed(speed_mbps, d.hardware).split("-")[1])


def device_tests(d: DeviceIntent) -> dict[str, list[dict[str, Any]]]:
    """The intent-derived part of the catalog for one switch (tagged with its name)."""
    assert d.bgp is not None and d.loopback is not None
    tag = {"filters": {"tags": [d.name]}}
    peers = [{"peer_address": p.address, "vrf": "default"} for p in d.bgp.peers]
    # eBGP loop prevention: the CTSW tier shares one ASN, so a CTSW never learns another CTSW's loopback
    others = [o for o in FABRIC.devices.values() if o.loopback and o.name != d.name and o.platform != "linux"
              and not (o.role == d.role == "ctsw")]
    src = d.loopback.split("/")[0]
    return {
        "anta.tests.routing.bgp": [
            {"VerifyBGPPeerCount": {"address_families": [{"afi": "ipv4", "safi": "unicast", "vrf": "default",
                                                          "num_peers": len(peers)}], **tag}},
            {"VerifyBGPSpecificPeers": {"address_families": [{"afi": "ipv4", "safi": "unicast", "vrf": "default",
                                                              "peers": [p["peer_address"] for p in peers]}], **tag}},
            {"VerifyBGPPeerSession": {"bgp_peers": peers, **tag}},
            {"VerifyBGPPeerMPCaps": {"bgp_peers": [{**p, "capabilities": ["ipv4Unicast"]} for p in peers], **tag}},
            {"VerifyBGPPeerASNCap": {"bgp_peers": peers, **tag}},
            {"VerifyBGPPeerRouteRefreshCap": {"bgp_peers": peers, **tag}},
            {"VerifyBGPPeerDropStats": {"bgp_peers": peers, **tag}},
            {"VerifyBGPPeerUpdateErrors": {"bgp_peers": peers, **tag}},
            {"VerifyBGPPeerRouteLimit": {"bgp_peers": [{**p, "maximum_routes": 0} for p in peers], **tag}},
            {"VerifyBGPPeerGroup": {"bgp_peers": [{**p, "peer_group": d.bgp.peer_group} for p in peers], **tag}},
            *([{"VerifyBGPRouteECMP": {"route_entries": [{"prefix": o.loopback, "vrf": "default",
                                                          "ecmp_count": len(d.bgp.peers)}
                                                         for o in others if o.role == "rtsw"], **tag}}]
              if d.role == "rtsw" else []),      # every other RTSW's loopback over each CTSW
            {"VerifyBGPTimers": {"bgp_peers": [{**p, "hold_time": d.bgp.holdtime, "keep_alive_time": d.bgp.keepalive}
                                               for p in peers], **tag}},
        ],
        "anta.tests.bfd": [
            {"VerifyBFDSpecificPeers": {"bfd_peers": [{"peer_address": p.address, "vrf": "default"}
                                                      for p in d.bgp.peers if p.peer_platform == "eos"], **tag}},
        ],
        "anta.tests.connectivity": [
            {"VerifyLLDPNeighbors": {"neighbors": [{"port": i.name, "neighbor_device": i.peer_device,
                                                    "neighbor_port": lldp_port_id(i.peer_device, i.peer_port)}
                                                   for i in d.interfaces], **tag}},
            {"VerifyReachability": {"hosts": [{"destination": o.loopback.split("/")[0], "source": src, "vrf": "default",
                                               "repeat": 1} for o in others if o.loopback], **tag}},
        ],
        "anta.tests.interfaces": [
            {"VerifyInterfacesStatus": {"interfaces": [{"name": i.name, "status": "up", "line_protocol_status": "up"}
                                                       for i in d.interfaces], **tag}},
            {"VerifyInterfaceIPv4": {"interfaces": [{"name": i.name, "primary_ip": i.address} for i in d.interfaces],
                                     **tag}},
            {"VerifyInterfacesSpeed": {"interfaces": [{"name": i.name, "speed": i.speed_mbps // 1000,
                                                       "lanes": _lanes(i.speed_mbps, d)}
                                                      for i in d.interfaces], **tag}},
            {"VerifyL3MTU": {"mtu": d.interfaces[0].mtu, "ignored_interfaces": ["Management", "Loopback"], **tag}},
        ],
        "anta.tests.routing.generic": [
            {"VerifyIPv4RoutePresencePerVRF": {"route_entries": [{"prefix": o.loopback, "vrf": "default"}
                                                                 for o in others if o.loopback], **tag}},
        ],
    }


def catalog() -> AntaCatalog:
    return AntaCatalog.merge_catalogs([AntaCatalog.parse(CATALOG)]
                                      + [AntaCatalog.from_dict(device_tests(FABRIC.devices[n])) for n in EOS])


def run_anta(site: TwinSite) -> ResultManager:
    inventory = AntaInventory()
    user, password = CREDS["eos"]
    for name in EOS:
        ep = site.addresses[name]
        inventory.add_device(AsyncEOSDevice(host=ep["host"], port=ep["port"], username=user, password=password,
                                            name=name, tags={name}, insecure=True, timeout=30))
    manager = ResultManager()
    asyncio.run(anta_main(manager, inventory, catalog()))
    return manager


def test_catalog_is_valid_anta_input():
    cat = catalog()
    names = {t.test.__name__ for t in cat.tests}
    assert len(names) == 45, sorted(names)
    assert yaml.safe_load(CATALOG.read_text())


@pytest.fixture(scope="module")
def anta_results(dc1_lab: Path, dc1_deployed: str, tmp_path_factory: pytest.TempPathFactory) -> ResultManager:
    from nr_run.lab.twin.lab import lab_reset

    lab_reset(dc1_lab, dc1_deployed)
    return run_anta(TwinSite(dc1_lab, tmp_path_factory.mktemp("anta")))


def test_no_anta_test_errors_on_the_twin(anta_results: ResultManager):
    errors = [(r.name, r.test, r.messages) for r in anta_results.results if r.result == "error"]
    assert errors == []


def test_deployed_fabric_passes_every_applicable_anta_test(anta_results: ResultManager):
    failures = [(r.name, r.test, r.messages) for r in anta_results.results if r.result == "failure"]
    assert failures == [], "\n".join(map(str, failures))
    by_device = Counter(r.name for r in anta_results.results if r.result == "success")
    assert set(by_device) == set(EOS)
    ran = {r.test for r in anta_results.results}
    skipped = sorted({r.test for r in anta_results.results if r.result == "skipped"})
    # ANTA skips only what cannot run on cEOSLab (hardware-only counters); nothing else
    assert all(t in {"VerifyInterfacesPFCCounters", "VerifyInterfacesECNCounters"} for t in skipped), skipped
    assert len(ran) == len({t.test.__name__ for t in catalog().tests})


def summary(results: ResultManager) -> dict[str, dict[str, int]]:
    """Per ANTA test: counts of each status (the closing note's table)."""
    out: dict[str, Counter] = {}
    for r in results.results:
        out.setdefault(r.test, Counter())[str(r.result)] += 1
    return {t: dict(c) for t, c in sorted(out.items())}
