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
    kinds = {"eos": "arista_ceos", "sonic": "sonic-vm", "linux": "linux"}
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
    # ctsw1 Ethernet3 <-> rtsw3 Ethernet0; sonic-vm's eth1 is Ethernet0, then +4 per interface: Ethernet16 -> eth5
    assert ("ctsw1:eth3", "rtsw3:eth1") in links
    assert ("gpu3:eth1", "rtsw3:eth5") in links
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


SCHEMA = Path(__file__).parent / "vendor" / "containerlab" / "clab.schema.json"


def _clab_port(kind: str, iface: str) -> str:
    """The port containerlab's kind puts behind a container interface, as its docs say (docs/manual/kinds):
    arista_ceos/ceos.md "Interfaces mapping": eth1 is the first data interface Ethernet1, `ethN_M` is EthernetN/M;
    sonic-vm.md: eth1 is Ethernet0 and each next interface the previous port + 4; linux: the name as written."""
    number = iface.removeprefix("eth")
    if kind == "arista_ceos":
        return "Ethernet" + number.replace("_", "/")
    if kind == "sonic-vm":
        return f"Ethernet{4 * (int(number) - 1)}"
    return iface


def _sites(tmp_path):
    from tests.sitegen import SmallSite, write_small_site

    held_out = write_small_site(tmp_path / "inv" / "held", SmallSite(
        rtsw_platforms=("sonic", "eos", "sonic", "sonic"), ctsw_platforms=("eos", "sonic"), rails=2,
        servers_per_unit=3, sonic_lanes=4, host_cable_m=120))
    return [compile_site("inventory/dc1"), compile_site("inventory/dc2"), compile_site(held_out)]


def test_generated_topologies_validate_against_containerlab_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    # the vendored file is unchanged; four of its patterns (zone suffixes of IP addresses) use Unicode classes
    # [\\p{N}\\p{L}] that Python's re lacks: read as [^\\W_] (letters and digits), which is what they mean
    schema = json.loads(SCHEMA.read_text().replace(r"[\\p{N}\\p{L}]", r"[^\\W_]"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    for fabric in _sites(tmp_path):
        doc = yaml.safe_load(write_topology(fabric, tmp_path / fabric.site).read_text())
        validator.validate(doc)
    bad = {**doc, "topology": {**doc["topology"], "nodes": {"x": {"kind": "ceos-typo"}}}}
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(bad)


def test_every_link_lands_on_the_port_containerlab_would_wire(tmp_path):
    """For each kind, the endpoint written for a cabled port is the interface containerlab connects to that
    port; the twin reading the same file sees the same ports (a mapping mistake fails here and in the lab)."""
    for fabric in _sites(tmp_path):
        doc = yaml.safe_load(write_topology(fabric, tmp_path / fabric.site).read_text())
        nodes = doc["topology"]["nodes"]
        wired = set()
        for link in doc["topology"]["links"]:
            ends = [e.split(":", 1) for e in link["endpoints"]]
            wired.add(frozenset((n, _clab_port(nodes[n]["kind"], i)) for n, i in ends))
        intent = {frozenset({(lk.a_device, lk.a_port), (lk.b_device, lk.b_port)}) for lk in fabric.links}
        assert wired == intent, fabric.site
        twin = load_clab(tmp_path / fabric.site / f"{fabric.site}.clab.yml")
        assert {frozenset({(c.a_dev, c.a_port), (c.b_dev, c.b_port)}) for c in twin.links} == intent


def test_sonic_port_off_the_containerlab_grid_is_refused():
    from nr_run.platforms.sonic.config import clab_index

    assert [clab_index(p) for p in ("Ethernet0", "Ethernet4", "Ethernet16", "Ethernet504")] == [1, 2, 5, 127]
    with pytest.raises(ValueError, match="Ethernet2 is none of them"):
        clab_index("Ethernet2")
