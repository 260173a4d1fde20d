"""Proof over the whole compiled site that its address plan cannot collide.

Whatever the compiler computed, these rules re-check the result: the pools (and the management networks)
are pairwise disjoint, every address is used once, and every address sits inside the pool (and, for host
links, the RTSW block) it was drawn from. A collision names both users.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from nr_run.intent.errors import Finding

if TYPE_CHECKING:
    from nr_run.intent.models import FabricIntent
    from nr_run.intent.schema import FabricFile

Net = ipaddress.IPv4Network


def _pools(fabric: FabricFile) -> list[tuple[str, Net]]:
    p = fabric.pools
    return [("pools.loopback.ctsw", p.loopback.ctsw), ("pools.loopback.rtsw", p.loopback.rtsw),
            ("pools.fabric_p2p", p.fabric_p2p), ("pools.host_p2p", p.host_p2p)]


def _overlaps(intent: FabricIntent, fabric: FabricFile, ff: str, hf: str) -> list[Finding]:
    out: list[Finding] = []
    pools = _pools(fabric)
    for i, (name_a, net_a) in enumerate(pools):
        for name_b, net_b in pools[i + 1:]:
            if net_a.overlaps(net_b):
                out.append(Finding("error", "pool-overlap", ff, "", name_b,
                                   f"{name_b} {net_b} overlaps {name_a} {net_a}: the pools must be disjoint"))
    mgmt: dict[Net, str] = {}
    for name, dev in sorted(intent.devices.items()):
        net = ipaddress.IPv4Interface(dev.mgmt_prefix).network
        mgmt.setdefault(net, name)
    for net, first in sorted(mgmt.items()):
        for pool_name, pool in pools:
            if net.overlaps(pool):
                out.append(Finding("error", "pool-overlap", hf, first, "hostname",
                                   f"management network {net} (of {first}) overlaps {pool_name} {pool}"))
    gateway = fabric.management.gateway
    if gateway is not None:
        for net, first in sorted(mgmt.items()):
            if gateway not in net:
                out.append(Finding("error", "management", ff, first, "management.gateway",
                                   f"gateway {gateway} is not in {first}'s management network {net}"))
    return out


def _unique(intent: FabricIntent, fabric: FabricFile, ff: str, hf: str) -> list[Finding]:
    """Every address once; pairs of the same kind (management, loopback) have their own duplicate rules."""
    out: list[Finding] = []
    owner: dict[str, tuple[str, str, str]] = {}     # ip -> (kind, device, what)

    def claim(ip: str, kind: str, device: str, what: str, file: str, fld: str) -> None:
        first = owner.get(ip)
        if first is None:
            owner[ip] = (kind, device, what)
            return
        if first[0] == kind and kind in ("mgmt", "loopback"):
            return
        out.append(Finding("error", "duplicate-address", file, device, fld,
                           f"{ip} of {device} {what} is also the address of {first[1]} {first[2]}"))

    if fabric.management.gateway is not None:
        owner[str(fabric.management.gateway)] = ("gateway", "the management gateway", "(management.gateway)")
    for name, dev in sorted(intent.devices.items()):
        claim(dev.mgmt_address, "mgmt", name, "management", hf, "hostname")
        if dev.loopback:
            claim(dev.loopback.split("/")[0], "loopback", name, "loopback", ff, f"pools.loopback.{dev.role}")
    for name, dev in sorted(intent.devices.items()):
        for itf in dev.interfaces:
            pool = "pools.fabric_p2p" if itf.role == "fabric" else "pools.host_p2p"
            claim(itf.ip, "p2p", name, f"port {itf.name}", ff, pool)
        for nic in dev.nics:
            claim(nic.ip, "p2p", name, f"NIC {nic.name}", ff, "pools.host_p2p")
    return out


def _inside(intent: FabricIntent, fabric: FabricFile, ff: str) -> list[Finding]:
    out: list[Finding] = []
    p = fabric.pools

    def need(ip: str, net: Net, device: str, what: str, fld: str) -> None:
        if ipaddress.IPv4Address(ip) not in net:
            out.append(Finding("error", "address-outside-pool", ff, device, fld,
                               f"{device} {what} {ip} is outside {net}"))

    blocks: dict[str, Net] = {}     # host block text -> network: each RTSW's is needed by each of its servers

    def host_block(text: str) -> Net:
        net = blocks.get(text)
        if net is None:
            net = blocks[text] = ipaddress.IPv4Network(text)
        return net

    for name, dev in sorted(intent.devices.items()):
        if dev.loopback:
            pool = p.loopback.ctsw if dev.role == "ctsw" else p.loopback.rtsw
            need(dev.loopback.split("/")[0], pool, name, "loopback", f"pools.loopback.{dev.role}")
        block = host_block(dev.host_block) if dev.host_block else None
        if block is not None and not block.subnet_of(p.host_p2p):
            out.append(Finding("error", "address-outside-pool", ff, name, "pools.host_p2p",
                               f"{name} host block {block} is outside {p.host_p2p}"))
        for itf in dev.interfaces:
            if itf.role == "fabric":
                need(itf.ip, p.fabric_p2p, name, f"port {itf.name}", "pools.fabric_p2p")
            elif block is not None and dev.role == "rtsw":
                need(itf.ip, block, name, f"port {itf.name}", "pools.host_p2p")
        for nic in dev.nics:
            leaf = intent.devices.get(nic.peer_device)
            leaf_block = host_block(leaf.host_block) if leaf and leaf.host_block else p.host_p2p
            need(nic.ip, leaf_block, name, f"NIC {nic.name}", "pools.host_p2p")
    return out


def check_address_plan(intent: FabricIntent, fabric: FabricFile, fabric_file: str,
                       hosts_file: str) -> list[Finding]:
    """Every address-plan finding of the site (errors only; an empty list proves the plan)."""
    return (_overlaps(intent, fabric, fabric_file, hosts_file) + _unique(intent, fabric, fabric_file, hosts_file)
            + _inside(intent, fabric, fabric_file))
