"""Read a containerlab topology file (*.clab.yml) into a Topology, as containerlab would deploy it.

What the twin takes from the file: node names, kinds (-> platform), `mgmt-ipv4` and the management subnet,
links by containerlab endpoint names, each node's `startup-config` file and, for Linux nodes, `exec`
commands. `topology.defaults`, `topology.kinds.<kind>` and `topology.groups.<group>` are inherited the way
containerlab merges them (node > group > kind > defaults).

Each kind's personality (lab.twin.personality) names its endpoints, orders its ports and reports its model,
following containerlab's conventions for that kind.
"""

from __future__ import annotations

import ipaddress
import itertools
from pathlib import Path
from typing import Any

import yaml

from nr_run.lab.twin.personality import kind_platforms, personality
from nr_run.lab.twin.topology import Cable, Node, Topology, port_sort

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)     # libyaml when present: large labs load fast
DEFAULT_SUBNET = "172.20.20.0/24"          # containerlab's default management network


class ClabError(ValueError):
    """The topology file is not one the twin (or containerlab) can deploy."""


def load_clab(path: str | Path) -> Topology:
    path = Path(path)
    try:
        doc = yaml.load(path.read_text(), Loader=_LOADER)
    except OSError as exc:
        raise ClabError(f"{path}: cannot read the topology file ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise ClabError(f"{path}: not YAML ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("topology"), dict):
        raise ClabError(f"{path}: no `topology` section")
    topo = doc["topology"]
    raw_nodes = topo.get("nodes") or {}
    if not isinstance(raw_nodes, dict) or not raw_nodes:
        raise ClabError(f"{path}: topology.nodes is empty")
    subnet = ipaddress.ip_network(str((doc.get("mgmt") or {}).get("ipv4-subnet") or DEFAULT_SUBNET), strict=False)
    specs = {str(name): _merged(topo, name, spec or {}, path) for name, spec in raw_nodes.items()}
    addresses = _mgmt_addresses(specs, subnet, path)
    endpoints: list[tuple[tuple[str, str], tuple[str, str]]] = []
    for i, link in enumerate(topo.get("links") or []):
        eps = link.get("endpoints") if isinstance(link, dict) else None
        if not isinstance(eps, list) or len(eps) != 2:
            raise ClabError(f"{path}: links[{i}] needs exactly two endpoints")
        pair = tuple(_endpoint(str(e), specs, path, i) for e in eps)
        endpoints.append((pair[0], pair[1]))
    startup = {name: _startup_text(spec, path, name) for name, spec in specs.items()}
    kinds = kind_platforms()
    faces = {name: personality(kinds[spec["kind"]]) for name, spec in specs.items()}
    port_maps = {name: faces[name].port_map(startup[name]) for name in specs}
    cables: list[Cable] = []
    used: dict[tuple[str, str], int] = {}
    for i, ((a, ai), (b, bi)) in enumerate(endpoints):
        ends = []
        for dev, raw in ((a, ai), (b, bi)):
            port = faces[dev].port_name(raw, port_maps[dev])
            if port is None:
                raise ClabError(f"{path}: links[{i}]: {dev}:{raw} is not a data interface of kind "
                                f"{specs[dev]['kind']}")
            if (dev, port) in used:
                raise ClabError(f"{path}: links[{i}]: {dev}:{raw} is already used by links[{used[(dev, port)]}]")
            used[(dev, port)] = i
            ends.append(port)
        cables.append(Cable(a, ends[0], b, ends[1]))
    ports: dict[str, list[str]] = {n: [] for n in specs}
    for c in cables:
        ports[c.a_dev].append(c.a_port)
        ports[c.b_dev].append(c.b_port)
    nodes = {}
    for name, spec in sorted(specs.items()):
        kind = spec["kind"]
        nodes[name] = Node(name=name, platform=faces[name].platform, kind=kind, mgmt_address=addresses[name],
                           mgmt_prefix=f"{addresses[name]}/{subnet.prefixlen}",
                           model=faces[name].model(startup[name]), ports=tuple(port_sort(ports[name])),
                           startup_config=startup[name], exec=tuple(str(c) for c in spec.get("exec") or ()),
                           image=str(spec.get("image") or ""),
                           labels=tuple(sorted((str(k), str(v)) for k, v in (spec.get("labels") or {}).items())))
    return Topology(nodes=nodes, links=cables, site=str(doc.get("name") or path.name.split(".")[0]))


def _merged(topo: dict, name: object, spec: dict, path: Path) -> dict[str, Any]:
    if not isinstance(spec, dict):
        raise ClabError(f"{path}: node {name}: a mapping expected")
    group = (topo.get("groups") or {}).get(spec.get("group"), {}) if spec.get("group") else {}
    kind = spec.get("kind") or group.get("kind") or (topo.get("defaults") or {}).get("kind")
    kinds = kind_platforms()
    if kind not in kinds:
        raise ClabError(f"{path}: node {name}: kind {kind!r} is not served by the twin "
                        f"(one of {', '.join(sorted(kinds))})")
    merged: dict[str, Any] = {}
    for layer in (topo.get("defaults") or {}, (topo.get("kinds") or {}).get(kind) or {}, group, spec):
        merged.update(layer)
    merged["kind"] = kind
    return merged


def _mgmt_addresses(specs: dict[str, dict], subnet: ipaddress.IPv4Network | ipaddress.IPv6Network,
                    path: Path) -> dict[str, str]:
    """mgmt-ipv4 where given; the others get the subnet's free addresses in node-name order, as clab's IPAM."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for name, spec in sorted(specs.items()):
        if spec.get("mgmt-ipv4"):
            try:
                addr = ipaddress.ip_address(str(spec["mgmt-ipv4"]))
            except ValueError:
                raise ClabError(f"{path}: node {name}: mgmt-ipv4 {spec['mgmt-ipv4']!r} is not an address") from None
            if addr not in subnet:
                raise ClabError(f"{path}: node {name}: mgmt-ipv4 {addr} is outside the management subnet {subnet}")
            if str(addr) in used:
                raise ClabError(f"{path}: node {name}: mgmt-ipv4 {addr} is used twice")
            out[name] = str(addr)
            used.add(str(addr))
    if len(out) < len(specs):       # the subnet's hosts are walked only when some node needs one
        free = (str(h) for h in itertools.islice(subnet.hosts(), 1, None) if str(h) not in used)  # .1: the gateway
        for name in sorted(specs):
            out.setdefault(name, next(free))
    return out


def _endpoint(text: str, specs: dict[str, dict], path: Path, i: int) -> tuple[str, str]:
    node, sep, iface = text.partition(":")
    if not sep or not iface:
        raise ClabError(f"{path}: links[{i}]: endpoint {text!r} is not node:interface")
    if node not in specs:
        raise ClabError(f"{path}: links[{i}]: endpoint {text!r} names no node of the topology")
    if iface == "eth0":
        raise ClabError(f"{path}: links[{i}]: {text} is the management interface")
    return node, iface


def _startup_text(spec: dict, path: Path, name: str) -> str | None:
    ref = spec.get("startup-config")
    if not ref:
        return None
    file = (path.parent / str(ref)) if not Path(str(ref)).is_absolute() else Path(str(ref))
    try:
        return file.read_text()
    except OSError as exc:
        raise ClabError(f"{path}: node {name}: startup-config {ref}: {exc.strerror}") from None
