"""Proof over the whole compiled site that its address plan cannot collide.

Whatever the compiler computed, these rules re-check the result: the pools (and the management networks)
are pairwise disjoint, every address is used once, and every address sits inside the pool (and, for host
links, the RTSW block) it was drawn from. A collision names both users.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import TYPE_CHECKING

from nr_run.intent.errors import Finding
from nr_run.intent.plan import Slots
from nr_run.intent.schema import MAX_ASN
from nr_run.intent.shapes import SHAPES

if TYPE_CHECKING:
    from nr_run.intent.models import FabricIntent
    from nr_run.intent.schema import FabricFile

Net = ipaddress.IPv4Network


def _pools(fabric: FabricFile) -> list[tuple[str, Net]]:
    p = fabric.pools
    named = [("pools.loopback.ctsw", p.loopback.ctsw), ("pools.loopback.rtsw", p.loopback.rtsw),
             ("pools.loopback.atsw", p.loopback.atsw), ("pools.fabric_p2p", p.fabric_p2p),
             ("pools.host_p2p", p.host_p2p)]
    return [(name, net) for name, net in named if net is not None]


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


def _ip_int(ip: str) -> int:
    """The address as an integer: inet_pton takes the strict dotted quad IPv4Address takes, in C (tens of
    thousands of addresses per site); anything else goes to IPv4Address, which refuses it as before."""
    try:
        return int.from_bytes(socket.inet_pton(socket.AF_INET, ip), "big")
    except OSError:
        return int(ipaddress.IPv4Address(ip))


def _inside(intent: FabricIntent, fabric: FabricFile, ff: str) -> list[Finding]:
    out: list[Finding] = []
    p = fabric.pools

    # id of a network -> (the network, its address, its mask as integers): by id, as a network's hash is
    # computed in Python on every lookup; keeping the network keeps its id from being reused
    bounds: dict[int, tuple[Net, int, int]] = {}

    def need(ip: str, net: Net, device: str, what: str, fld: str) -> None:
        found = bounds.get(id(net))
        if found is None:
            found = bounds[id(net)] = (net, int(net.network_address), int(net.netmask))
        if _ip_int(ip) & found[2] != found[1]:
            out.append(Finding("error", "address-outside-pool", ff, device, fld,
                               f"{device} {what} {ip} is outside {net}"))

    blocks: dict[str, Net] = {}     # host block text -> network: each RTSW's is needed by each of its servers

    def host_block(text: str) -> Net:
        net = blocks.get(text)
        if net is None:
            net = blocks[text] = ipaddress.IPv4Network(text)
        return net

    for name, dev in sorted(intent.devices.items()):
        loopback_pool = getattr(p.loopback, dev.role, None) if dev.tier else None
        if dev.loopback and loopback_pool is not None:
            need(dev.loopback.split("/")[0], loopback_pool, name, "loopback", f"pools.loopback.{dev.role}")
        block = host_block(dev.host_block) if dev.host_block else None
        if block is not None and not block.subnet_of(p.host_p2p):
            out.append(Finding("error", "address-outside-pool", ff, name, "pools.host_p2p",
                               f"{name} host block {block} is outside {p.host_p2p}"))
        for itf in dev.interfaces:
            if itf.role == "fabric" and p.fabric_p2p is not None:
                need(itf.ip, p.fabric_p2p, name, f"port {itf.name}", "pools.fabric_p2p")
            elif block is not None and dev.tier == 1:
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


def check_plan_capacity(fabric: FabricFile, intent: FabricIntent, ff: str) -> list[Finding]:
    """With a plan, the pools and ASN ranges must hold every device the plan's capacities allow, not only the
    ones that exist: then no growth inside the plan can exhaust a pool or collide, and nothing is renumbered."""
    plan = fabric.plan
    if plan is None:
        return []
    slots = Slots(plan)
    spec = SHAPES[fabric.shape]
    out: list[Finding] = []
    leaves = slots.leaf_capacity()
    spines = plan.zones * plan.ctsw_per_zone if "ctsw" in spec.tiers else 0
    aggs = plan.atsw if "atsw" in spec.tiers else 0
    p = fabric.pools

    def room(pool: Net | None, key: str, count: int, what: str) -> None:
        if count and pool is not None and count + 1 >= pool.num_addresses:
            out.append(Finding("error", "plan-capacity", ff, "", key,
                               f"{key} {pool} holds {max(0, pool.num_addresses - 2)} loopbacks; the plan allows "
                               f"{count} {what}: widen the pool or lower the plan"))

    room(p.loopback.rtsw, "pools.loopback.rtsw", leaves, "RTSW slots (plan.zones x a power of two of "
         "plan.units_per_zone x plan.rtsw_per_unit)")
    room(p.loopback.ctsw, "pools.loopback.ctsw", spines, "CTSWs (plan.zones x plan.ctsw_per_zone)")
    room(p.loopback.atsw, "pools.loopback.atsw", aggs, "ATSWs (plan.atsw)")
    if spines and p.fabric_p2p is not None:
        links = slots.fabric_p2p_capacity()
        if 2 * links > p.fabric_p2p.num_addresses:
            out.append(Finding("error", "plan-capacity", ff, "", "pools.fabric_p2p",
                               f"pools.fabric_p2p {p.fabric_p2p} holds {p.fabric_p2p.num_addresses // 2} /31s; the "
                               f"plan's switch links need {links}: widen the pool or lower the plan"))
    block = next((d.host_block for d in intent.devices.values() if d.host_block), None)
    if block is not None:
        size = ipaddress.IPv4Network(block).num_addresses
        if leaves * size > p.host_p2p.num_addresses:
            out.append(Finding("error", "plan-capacity", ff, "", "pools.host_p2p",
                               f"pools.host_p2p {p.host_p2p} holds {p.host_p2p.num_addresses // size} host blocks of "
                               f"/{ipaddress.IPv4Network(block).prefixlen}; the plan has {leaves} RTSW slots"))
    asn = fabric.asn
    ranges: list[tuple[str, int, int]] = [("asn.rtsw_base", asn.rtsw_base, asn.rtsw_base + leaves - 1)]
    if spines and asn.ctsw is not None:
        ranges.append(("asn.ctsw", asn.ctsw, asn.ctsw + plan.zones - 1))
    if aggs and asn.atsw is not None:
        ranges.append(("asn.atsw", asn.atsw, asn.atsw))
    for key, lo, hi in ranges:
        if hi > MAX_ASN:
            out.append(Finding("error", "plan-capacity", ff, "", key,
                               f"{key}: the plan's ASNs {lo}-{hi} go past {MAX_ASN}"))
    for i, (key_a, lo_a, hi_a) in enumerate(ranges):
        for key_b, lo_b, hi_b in ranges[i + 1:]:
            if lo_a <= hi_b and lo_b <= hi_a:
                out.append(Finding("error", "plan-capacity", ff, "", key_b,
                                   f"{key_b} ASNs {lo_b}-{hi_b} overlap {key_a} ASNs {lo_a}-{hi_a} of the plan"))
    return out
