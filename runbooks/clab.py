"""containerlab topology of a site (`nr-run lab topology`): the file containerlab and the lab twin both deploy.

Each switch's kind, image, startup config and interface names come from its platform's config builder. A device
with NICs (GPU servers) runs as a plain containerlab `linux` node; its provisioning (NIC addresses, per-NIC
routing tables) is the server's own and is written as the node's `exec` commands, which containerlab runs once
the node is up; its NICs' RoCE settings are left at the vendor's defaults for `nr-run deploy` to set. The twin reads only this file, so a
wrong compiled intent shows up as a failing check against the twin, and a hand-edited file (a swapped cable, a
missing server) changes what the product observes.

Layout under the output folder: `<site>.clab.yml` and `<site>/<device><startup suffix>`, so two sites' files
never overwrite each other.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import yaml

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms import registry
from nr_run.platforms.base import ClabNode, ConfigBuilder
from nr_run.runbooks.render import safe_filename

# a node without a config builder: containerlab's generic container kind, with the usual network tools
PLAIN_NODE = ClabNode(kind="linux", image="ghcr.io/hellt/network-multitool", startup_suffix="")
RAIL_TABLE_BASE = 100      # NIC of rail r routes through its own table 100 + r


def _builder(device: DeviceIntent) -> ConfigBuilder | None:
    return registry.get(device.platform).config


def clab_port(device: DeviceIntent, port: str) -> str:
    """A device's port as a containerlab link endpoint (eth0 is management); plain nodes keep their names."""
    config = _builder(device)
    if config is None or any(n.name == port for n in device.nics):
        return port
    interface = next((i for i in device.interfaces if i.name == port), None)
    if interface is None:
        raise ValueError(f"{device.name}: port {port} is cabled but not in the intent")
    return config.clab_interface(interface, device)


def startup_file(device: DeviceIntent) -> tuple[str, str] | None:
    """(file name, text) of the node's startup config, or None when its image boots without one."""
    config = _builder(device)
    text = config.startup_config(device) if config is not None else None
    if config is None or text is None:
        return None
    return safe_filename(device.name, config.clab.startup_suffix), text


def host_exec(device: DeviceIntent) -> list[str]:
    """A GPU server's provisioning as shell commands (iproute2 `ip`), in the order a boot script runs them: NIC
    addresses and per-NIC routing tables. The NICs' RoCE settings (MTU, trust, DSCP map, PFC, ECN/DCQCN, RDMA CM
    ToS) are left at the vendor's defaults: `nr-run deploy` sets them."""
    out: list[str] = []
    for nic in device.nics:
        table = RAIL_TABLE_BASE + nic.rail
        out += [f"ip addr add {nic.address} dev {nic.name}", f"ip link set dev {nic.name} up"]
        out += [f"ip route add {prefix} via {nic.gateway} dev {nic.name} table {table}" for prefix in nic.routes]
        if nic.routes:
            out.append(f"ip rule add from {nic.ip} lookup {table}")
    return out


def mgmt_subnet(fabric: FabricIntent) -> str:
    """containerlab's one management network: the devices' management subnet, widened until every management
    address of the site is inside it (a lab puts every node on one bridge)."""
    first = next(iter(fabric.devices.values()))
    if not first.mgmt_prefix:
        return "172.20.20.0/24"
    net = ipaddress.ip_interface(first.mgmt_prefix).network
    addresses = [ipaddress.ip_address(d.mgmt_address) for d in fabric.devices.values()]
    while not all(a in net for a in addresses) and net.prefixlen > 0:
        net = net.supernet()
    return str(net)


def topology(fabric: FabricIntent, startup_dir: str | None = None,
             startup_names: dict[str, str] | None = None) -> dict[str, Any]:
    """The topology document; startup-config paths are relative to the file (default folder: the site name).
    `startup_names` (device -> startup file name), when the caller has rendered them already."""
    folder = startup_dir if startup_dir is not None else safe_filename(fabric.site, "")
    nodes: dict[str, dict[str, Any]] = {}
    for name, d in sorted(fabric.devices.items()):
        config = _builder(d)
        lab = config.clab if config is not None else PLAIN_NODE
        node: dict[str, Any] = {"kind": lab.kind, "image": lab.image, "mgmt-ipv4": d.mgmt_address}
        if startup_names is not None:
            file_name = startup_names.get(name)
        else:
            startup = startup_file(d)
            file_name = startup[0] if startup is not None else None
        if file_name is not None:
            node["startup-config"] = f"{folder}/{file_name}"
        if d.nics:
            node["exec"] = host_exec(d)
        nodes[name] = node
    devs = fabric.devices
    links = [{"endpoints": [f"{lk.a_device}:{clab_port(devs[lk.a_device], lk.a_port)}",
                            f"{lk.b_device}:{clab_port(devs[lk.b_device], lk.b_port)}"]} for lk in fabric.links]
    first = next(iter(fabric.devices.values()))
    gw = first.mgmt_gateway
    net = mgmt_subnet(fabric)
    return {"name": fabric.site, "mgmt": {"network": f"{fabric.site}-mgmt", "ipv4-subnet": net,
                                          **({"ipv4-gw": gw} if gw else {})},
            "topology": {"nodes": nodes, "links": links}}


def write_topology(fabric: FabricIntent, out_dir: Path | str) -> Path:
    """Write <out_dir>/<site>.clab.yml and the startup configs in <out_dir>/<site>/; returns the topology path."""
    out_dir = Path(out_dir)
    folder = safe_filename(fabric.site, "")
    files = {n: found for n, d in sorted(fabric.devices.items()) if (found := startup_file(d)) is not None}
    startup = out_dir / folder
    startup.mkdir(parents=True, exist_ok=True)
    for name, text in files.values():
        (startup / name).write_text(text)
    path = out_dir / f"{folder}.clab.yml"
    header = (f"# Generated by `nr-run lab topology --site {fabric.site}` from its inventory.\n"
              f"# Deploy: containerlab deploy -t {path.name}   Twin: nr-run lab up --site {fabric.site} "
              f"--topology {path.name}\n"
              "# Edits (a swapped cable, a removed node) are what the twin serves: nr-run checks then see them.\n")
    path.write_text(header + yaml.safe_dump(topology(fabric, folder, {n: f[0] for n, f in files.items()}), sort_keys=False, width=120))
    return path
