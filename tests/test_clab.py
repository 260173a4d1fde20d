"""The generated containerlab topology mirrors the inventory and the cabling."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml

from nr_run.intent import compile_site
from nr_run.runbooks.clab import topology, write_topology


@pytest.fixture(scope="module")
def fabric():
    return compile_site("inventory/dc1")


def test_one_node_per_device_with_kind_and_address(fabric, tmp_path):
    topo = yaml.safe_load(write_topology(fabric, tmp_path / "dc1.clab.yml").read_text())
    nodes = topo["topology"]["nodes"]
    assert set(nodes) == set(fabric.devices)
    kinds = {"eos": "ceos", "sonic": "sonic-vm", "linux": "linux"}
    for name, d in fabric.devices.items():
        assert nodes[name]["kind"] == kinds[d.platform]
        assert nodes[name]["mgmt-ipv4"] == d.mgmt_address
    sonic = json.loads((tmp_path / "startup" / "rtsw3.config_db.json").read_text())
    assert "eth0|172.20.20.23/24" in sonic["MGMT_INTERFACE"]
    eos = (tmp_path / "startup" / "ctsw1.cfg").read_text()
    assert "management api http-commands" in eos and "protocol https" in eos


def test_one_link_per_cabled_pair_with_clab_names(fabric, tmp_path):
    topo = yaml.safe_load(write_topology(fabric, tmp_path / "dc1.clab.yml").read_text())
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
        write_topology(site, tmp_path / "lab" / "dc1.clab.yml")
    assert not (tmp_path / "lab" / "rtsw3.config_db.json").exists()


def test_node_kinds_and_startup_come_from_the_platform_plugins(fabric):
    from nr_run.platforms import registry

    nodes = topology(fabric)["topology"]["nodes"]
    for name, d in fabric.devices.items():
        config = registry.get(d.platform).config
        if config is None:          # GPU servers: plain containers, no startup config
            assert nodes[name]["kind"] == "linux" and "startup-config" not in nodes[name]
        else:
            assert nodes[name]["kind"] == config.clab.kind and nodes[name]["image"] == config.clab.image
            assert nodes[name]["startup-config"] == f"startup/{name}{config.clab.startup_suffix}"


def test_committed_topology_is_up_to_date(fabric, tmp_path):
    fresh = write_topology(fabric, tmp_path / "dc1.clab.yml").read_text()
    with open("lab/dc1.clab.yml") as fh:
        assert fh.read() == fresh, "regenerate with: nr-run lab topology --site dc1"


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
