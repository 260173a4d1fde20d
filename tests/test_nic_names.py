"""GPU servers' RoCE NICs named as Linux names them: a pattern (ens{n}np0) or, where the names come from PCI
addresses and follow no formula, one explicit name per port."""

from __future__ import annotations

import pytest

from nr_run.lab.twin.clab import load_clab
from nr_run.platforms.site import load_site
from nr_run.runbooks.clab import write_topology

PCI_NAMES = ["enp65s0f0np0", "enp129s0f0np0"]


def _nics(fabric, host):
    return [n.name for n in fabric.devices[host].nics]


def test_linux_predictable_names_by_pattern(site, tmp_path):
    site.edit("fabric.yaml", lambda d: d["hardware"]["gpu-2nic"].update(port_name="ens{n}np0"))
    fabric, findings = load_site(site.path)
    assert fabric is not None, [f.message for f in findings if f.severity == "error"]
    assert _nics(fabric, "gpu1") == ["ens1np0", "ens2np0"]
    topo = load_clab(write_topology(fabric, tmp_path))
    assert {c.b_port for c in topo.links if c.b_dev == "gpu1"} | {c.a_port for c in topo.links if c.a_dev == "gpu1"} \
        == {"ens1np0", "ens2np0"}


def test_an_explicit_nic_list_where_names_are_irregular(site, tmp_path):
    def edit(d):
        gpu = d["hardware"]["gpu-2nic"]
        del gpu["port_name"]
        gpu["port_names"] = PCI_NAMES
    site.edit("fabric.yaml", edit)
    fabric, findings = load_site(site.path)
    assert fabric is not None, [f.message for f in findings if f.severity == "error"]
    assert _nics(fabric, "gpu1") == PCI_NAMES
    peers = {(n.peer_device, n.peer_port) for n in fabric.devices["gpu1"].nics}
    assert len(peers) == 2                                                   # each NIC on its own rail
    exec_lines = load_clab(write_topology(fabric, tmp_path)).nodes["gpu1"].exec
    assert "ip addr add" in " ".join(exec_lines) and f"dev {PCI_NAMES[1]}" in " ".join(exec_lines)


@pytest.mark.parametrize(("hw", "message"), [
    ({"port_names": ["enp65s0f0np0"]}, "port_names has 1 names for 2 ports"),
    ({"port_names": ["enp65s0f0np0", "enp65s0f0np0"]}, "repeats a name"),
    ({"port_names": ["enp65s0f0np0", "bad name"]}, "port_names"),
    ({"port_name": "eth{n}0"}, "port_name"),                   # a digit after {n} would make the number ambiguous
])
def test_bad_nic_names_are_refused_naming_the_key(site, hw, message):
    def edit(d):
        gpu = d["hardware"]["gpu-2nic"]
        if "port_names" in hw:
            del gpu["port_name"]
        gpu.update(hw)
    site.edit("fabric.yaml", edit)
    _, findings = load_site(site.path)
    bad = [f for f in findings if f.severity == "error"]
    assert bad and any(message in (f.message + f.field) for f in bad), [(f.field, f.message) for f in bad]
    assert all("gpu-2nic" in f.field or f.field.startswith("hardware") for f in bad if f.rule == "schema")
