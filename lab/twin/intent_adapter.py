"""The twin's only door into the product: compiled site intent -> twin-native Topology (plain data).

Everything else in lab/ works on Topology, Node, Cable and HostSpec, so the twin stays a separate program
that serves a topology, as containerlab would. Only these intent fields are read: FabricIntent.site/devices/
links, Link.*, DeviceIntent.name/role/platform/mgmt_address/mgmt_prefix/model/nics, Nic.*,
Roce.dscp_overrides.
"""

from __future__ import annotations

from pathlib import Path

from nr_run.intent import compile_site
from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.lab.twin.topology import Cable, HostNic, HostSpec, Node, Topology, port_sort


def load_topology(site_dir: str | Path) -> Topology:
    """Compile the site's inventory and convert it."""
    return topology_from_intent(compile_site(str(site_dir)))


def topology_from_intent(fabric: FabricIntent) -> Topology:
    links = [Cable(lk.a_device, lk.a_port, lk.b_device, lk.b_port, lk.speed_mbps, lk.cable_length_m)
             for lk in fabric.links]
    ports: dict[str, list[str]] = {n: [] for n in fabric.devices}
    for c in links:
        ports[c.a_dev].append(c.a_port)
        ports[c.b_dev].append(c.b_port)
    nodes: dict[str, Node] = {}
    hosts: dict[str, HostSpec] = {}
    for name, d in sorted(fabric.devices.items()):
        nodes[name] = Node(name=name, platform=d.platform, role=d.role, mgmt_address=d.mgmt_address,
                           model=d.model if d.platform != "linux" else "linux",
                           mgmt_prefix=d.mgmt_prefix, ports=tuple(port_sort(ports[name])))
        if d.platform == "linux":
            hosts[name] = _host_spec(d)
    return Topology(nodes=nodes, links=links, hosts=hosts, site=fabric.site)


def _host_spec(d: DeviceIntent) -> HostSpec:
    nics = tuple(HostNic(name=n.name, address=n.address, ip=n.ip, gateway=n.gateway, mtu=n.mtu,
                         speed_mbps=n.speed_mbps, lossless_priorities=tuple(n.lossless_priorities),
                         trust=n.trust, routes=tuple(n.routes)) for n in d.nics)
    return HostSpec(name=d.name, mgmt_address=d.mgmt_address, nics=nics,
                    dscp_to_prio=tuple(sorted(d.roce.dscp_overrides.items())))
