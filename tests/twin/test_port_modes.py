"""Ports as the running config sets them, read through real clients: EOS `speed <rate>-<lanes>` in show interfaces
(pyeapi, NAPALM), and SONiC's containerlab endpoints mapped to the SKU's port rows when two 400G ports share an
800G cage's index (pyeapi on the EOS end reads who is cabled where from LLDP)."""

from __future__ import annotations

import json
from pathlib import Path

import pyeapi
import pytest

from nr_run.lab.twin.lab import Lab
from tests.twin_site import TwinSite


@pytest.mark.parametrize(("speed", "bandwidth", "lanes"), [("800g-8", 800_000_000_000, 8),
                                                          ("100g-1", 100_000_000_000, 1),
                                                          ("400g-4", 400_000_000_000, 4),
                                                          ("100gfull", 100_000_000_000, 4)])
def test_eos_reports_the_configured_speed_and_lanes(twin: TwinSite, speed: str, bandwidth: int, lanes: int):
    node = twin.eapi("ctsw1")
    node.config(["interface Ethernet1", f"speed {speed}"])
    entry = node.enable(["show interfaces Ethernet1"])[0]["result"]["interfaces"]["Ethernet1"]
    assert (entry["bandwidth"], entry["lanes"]) == (bandwidth, lanes)
    status = node.enable(["show interfaces status"])[0]["result"]["interfaceStatuses"]["Ethernet1"]
    assert status["bandwidth"] == bandwidth
    drv = twin.driver("ctsw1")
    try:
        assert drv.get_interfaces()["Ethernet1"]["speed"] == bandwidth / 1e6
    finally:
        drv.close()


def test_eos_without_speed_runs_the_native_400g_8(twin: TwinSite):
    entry = twin.eapi("ctsw2").enable(["show interfaces Ethernet1"])[0]["result"]["interfaces"]["Ethernet1"]
    assert (entry["bandwidth"], entry["lanes"]) == (400_000_000_000, 8)


# Arista-7060X6-64PE-O128S2 port_config.ini rows (sonic-buildimage, see nr_run/platforms/sonic/hwsku/): each
# 800G OSFP cage is two 400G ports of four lanes that share the cage's index
TH5_ROWS = {"Ethernet0": ("17,18,19,20", "Ethernet1/1", "1"), "Ethernet4": ("21,22,23,24", "Ethernet1/5", "1"),
            "Ethernet8": ("1,2,3,4", "Ethernet2/1", "2"), "Ethernet12": ("5,6,7,8", "Ethernet2/5", "2")}


def _cage_site(tmp_path: Path) -> Path:
    ports = {name: {"lanes": lanes, "alias": alias, "index": index, "speed": "400000", "mtu": "9100",
                    "admin_status": "up"} for name, (lanes, alias, index) in TH5_ROWS.items()}
    db = {"DEVICE_METADATA": {"localhost": {"hostname": "rtsw1", "hwsku": "Arista-7060X6-64PE-O128S2"}},
          "PORT": ports}
    (tmp_path / "rtsw1.json").write_text(json.dumps(db))
    links = "".join(f"    - endpoints: [rtsw1:eth{k}, ctsw1:eth{k}]\n" for k in range(1, 5))
    topo = tmp_path / "cage.clab.yml"
    topo.write_text("name: cage\ntopology:\n  nodes:\n"
                    "    rtsw1: {kind: sonic-vs, startup-config: rtsw1.json}\n"
                    "    ctsw1: {kind: ceos}\n"
                    f"  links:\n{links}")
    return topo


def test_sonic_ports_sharing_a_cage_index_keep_their_order(tmp_path: Path):
    with Lab(_cage_site(tmp_path), tmp_path / "state", base_port=0) as lab:
        ep = lab.addresses["ctsw1"]
        conn = pyeapi.client.connect(transport="https", host="127.0.0.1", username="admin", password="admin",
                                     port=ep["port"], timeout=20)
        node = pyeapi.client.Node(conn)
        node.config([f"interface Ethernet{k}\n   no shutdown" for k in range(1, 5)])
        nbrs = node.enable(["show lldp neighbors"])[0]["result"]["lldpNeighbors"]
    seen = {n["port"]: n["neighborPort"] for n in nbrs}
    # containerlab's eth3/eth4 are the third and fourth rows: Ethernet8 (alias 2/1), then Ethernet12 (2/5)
    assert seen == {"Ethernet1": "Ethernet1/1", "Ethernet2": "Ethernet1/5", "Ethernet3": "Ethernet2/1",
                    "Ethernet4": "Ethernet2/5"}


def test_eos_breakout_ports_run_their_own_speed(tmp_path: Path):
    """cEOS breakout endpoints (eth1_1 is Ethernet1/1): each subport reports its own `speed <rate>-<lanes>`."""
    topo = tmp_path / "breakout.clab.yml"
    topo.write_text("name: breakout\ntopology:\n  nodes:\n    a: {kind: ceos}\n    b: {kind: ceos}\n  links:\n"
                    "    - endpoints: [a:eth1_1, b:eth1_1]\n    - endpoints: [a:eth1_5, b:eth1_5]\n")
    with Lab(topo, tmp_path / "state", base_port=0) as lab:
        nodes = {}
        for name in ("a", "b"):
            ep = lab.addresses[name]
            nodes[name] = pyeapi.client.Node(pyeapi.client.connect(
                transport="https", host="127.0.0.1", username="admin", password="admin", port=ep["port"], timeout=20))
            nodes[name].config(["interface Ethernet1/1", "no shutdown", "speed 400g-4",
                                "interface Ethernet1/5", "no shutdown", "speed 200g-2"])
        got = nodes["a"].enable(["show interfaces Ethernet1/1", "show interfaces Ethernet1/5", "show lldp neighbors"])
    one = got[0]["result"]["interfaces"]["Ethernet1/1"]
    five = got[1]["result"]["interfaces"]["Ethernet1/5"]
    assert (one["bandwidth"], one["lanes"]) == (400_000_000_000, 4)
    assert (five["bandwidth"], five["lanes"]) == (200_000_000_000, 2)
    assert {(n["port"], n["neighborPort"]) for n in got[2]["result"]["lldpNeighbors"]} == {
        ("Ethernet1/1", "Ethernet1/1"), ("Ethernet1/5", "Ethernet1/5")}
