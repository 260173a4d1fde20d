"""The generated containerlab topology mirrors the inventory and the cabling."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from nr_run.intent import compile_site
from nr_run.lab.twin.clab import ClabError, load_clab
from nr_run.runbooks.clab import topology, write_topology


@pytest.fixture(scope="module")
def fabric():
    return compile_site("inventory/dc1")


def test_one_node_per_device_with_kind_and_address(fabric, tmp_path):
    topo = yaml.safe_load(write_topology(fabric, tmp_path).read_text())
    nodes = topo["topology"]["nodes"]
    assert set(nodes) == set(fabric.devices)
    kinds = {"eos": "ceos", "sonic": "sonic-vm", "linux": "linux"}
    for name, d in fabric.devices.items():
        assert nodes[name]["kind"] == kinds[d.platform]
        assert nodes[name]["mgmt-ipv4"] == d.mgmt_address
    sonic = json.loads((tmp_path / "dc1" / "rtsw3.config_db.json").read_text())
    assert "eth0|172.20.20.23/24" in sonic["MGMT_INTERFACE"]
    eos = (tmp_path / "dc1" / "ctsw1.cfg").read_text()
    assert "management api http-commands" in eos and "protocol https" in eos


def test_one_link_per_cabled_pair_with_clab_names(fabric, tmp_path):
    topo = yaml.safe_load(write_topology(fabric, tmp_path).read_text())
    links = [tuple(lk["endpoints"]) for lk in topo["topology"]["links"]]
    assert len(links) == len(fabric.links) == len(set(links))
    # ctsw1 Ethernet3 <-> rtsw3 Ethernet0 (SONiC port step 8: Ethernet0 -> eth1, Ethernet16 -> eth3)
    assert ("ctsw1:eth3", "rtsw3:eth1") in links
    assert ("gpu3:eth1", "rtsw3:eth3") in links
    endpoints = [e for lk in links for e in lk]
    assert len(endpoints) == len(set(endpoints))      # no interface used twice


def test_startup_files_stay_in_their_folder(fabric, tmp_path):
    bad = fabric.devices["rtsw3"].model_copy(update={"name": "../rtsw3"})
    site = fabric.model_copy(update={"devices": {**fabric.devices, "../rtsw3": bad}})
    with pytest.raises(ValueError, match="not a safe file name"):
        write_topology(site, tmp_path / "lab")
    assert not (tmp_path / "rtsw3.config_db.json").exists() and not (tmp_path / "lab").exists()


def test_node_kinds_and_startup_come_from_the_platform_plugins(fabric):
    from nr_run.platforms import registry

    nodes = topology(fabric)["topology"]["nodes"]
    for name, d in fabric.devices.items():
        config = registry.get(d.platform).config
        if config is None or config.startup_config(d) is None:   # GPU servers: plain containers, no startup config
            assert nodes[name]["kind"] == "linux" and "startup-config" not in nodes[name]
        else:
            assert nodes[name]["kind"] == config.clab.kind and nodes[name]["image"] == config.clab.image
            assert nodes[name]["startup-config"] == f"dc1/{name}{config.clab.startup_suffix}"


def test_committed_topology_is_up_to_date(fabric, tmp_path):
    fresh = write_topology(fabric, tmp_path)
    assert Path("lab/dc1.clab.yml").read_text() == fresh.read_text(), \
        "regenerate with: nr-run lab topology --site dc1 --out lab"
    for generated in sorted((tmp_path / "dc1").iterdir()):
        assert (Path("lab/dc1") / generated.name).read_text() == generated.read_text(), generated.name


def test_two_sites_keep_their_own_startup_folders(fabric, tmp_path):
    other = fabric.model_copy(update={"site": "dc2"})
    write_topology(fabric, tmp_path)
    write_topology(other, tmp_path)
    assert (tmp_path / "dc1" / "ctsw1.cfg").is_file() and (tmp_path / "dc2" / "ctsw1.cfg").is_file()
    doc = yaml.safe_load((tmp_path / "dc2.clab.yml").read_text())
    assert doc["topology"]["nodes"]["ctsw1"]["startup-config"] == "dc2/ctsw1.cfg"


def test_the_twin_reads_back_the_intent_cabling_and_host_setup(fabric, tmp_path):
    """Generated file -> the twin's containerlab reader: the same cables in platform port names, each server's
    NIC setup as exec commands, each switch's startup config."""
    topo = load_clab(write_topology(fabric, tmp_path))
    cables = {frozenset({(c.a_dev, c.a_port), (c.b_dev, c.b_port)}) for c in topo.links}
    assert cables == {frozenset({(lk.a_device, lk.a_port), (lk.b_device, lk.b_port)}) for lk in fabric.links}
    for name, d in fabric.devices.items():
        node = topo.nodes[name]
        assert (node.platform, node.mgmt_address) == (d.platform, d.mgmt_address)
        assert node.mgmt_prefix == d.mgmt_prefix
        if d.platform == "linux":
            for nic in d.nics:
                assert f"ip addr add {nic.address} dev {nic.name}" in node.exec
                # the NICs' RoCE settings (MTU, DCB, DCQCN, ToS) stay at the vendor's defaults: deploy sets them
                assert not any(c.startswith(("dcb ", f"ip link set dev {nic.name} mtu")) for c in node.exec)
        else:
            assert node.startup_config and name in node.startup_config


def test_eos_breakout_ports_use_containerlab_names(fabric):
    from nr_run.platforms import registry

    rtsw1 = fabric.devices["rtsw1"]
    port = rtsw1.interfaces[0].model_copy(update={"name": "Ethernet1/1"})
    assert registry.get("eos").config.clab_interface(port, rtsw1) == "eth1_1"


def test_reader_maps_clab_names_and_refuses_bad_files(tmp_path):
    (tmp_path / "s.cfg").write_text("hostname s\n")
    good = {"name": "t", "topology": {"nodes": {"s": {"kind": "arista_ceos", "startup-config": "s.cfg"},
                                                "h": {"kind": "linux"}},
                                      "links": [{"endpoints": ["s:eth1_2", "h:eth1"]}, {"endpoints": ["s:eth3", "h:eth2"]}]}}
    path = tmp_path / "t.clab.yml"
    path.write_text(yaml.safe_dump(good))
    topo = load_clab(path)
    assert topo.nodes["s"].ports == ("Ethernet1/2", "Ethernet3") and topo.nodes["s"].startup_config == "hostname s\n"
    assert (topo.nodes["h"].mgmt_address, topo.nodes["s"].mgmt_address) == ("172.20.20.2", "172.20.20.3")
    bad_cases = [
        ({"nodes": {"s": {"kind": "juniper_crpd"}}}, "not served"),
        ({"nodes": {"s": {"kind": "ceos"}}, "links": [{"endpoints": ["s:eth1", "x:eth1"]}]}, "names no node"),
        ({"nodes": {"s": {"kind": "ceos"}, "h": {"kind": "linux"}},
          "links": [{"endpoints": ["s:eth1", "h:eth1"]}, {"endpoints": ["s:eth1", "h:eth2"]}]}, "already used"),
        ({"nodes": {"s": {"kind": "ceos"}, "h": {"kind": "linux"}}, "links": [{"endpoints": ["s:mgmt0", "h:eth1"]}]},
         "not a data interface"),
        ({"nodes": {"s": {"kind": "ceos", "startup-config": "missing.cfg"}}}, "startup-config"),
    ]
    for topology_section, message in bad_cases:
        path.write_text(yaml.safe_dump({"name": "t", "topology": topology_section}))
        with pytest.raises(ClabError, match=message):
            load_clab(path)


def _clab_running() -> bool:
    if not shutil.which("containerlab"):
        return False
    out = subprocess.run(["containerlab", "inspect", "-t", "lab/dc1.clab.yml"], capture_output=True, text=True)
    return out.returncode == 0 and "running" in out.stdout


@pytest.mark.clab
@pytest.mark.skipif(not _clab_running(), reason="needs the dc1 containerlab lab running "
                    "(containerlab deploy -t lab/dc1.clab.yml); none is up")
def test_sonic_node_answers_napalm_sonic(fabric):
    import napalm
    d = napalm.get_network_driver("sonic")(fabric.devices["rtsw3"].mgmt_address, "admin", "admin",
                                           optional_args={"insecure": True})
    d.open()
    assert d.get_facts()["hostname"] == "rtsw3"
    d.close()
