"""Preflight rules over a compiled fabric: each finding names the file, host and field."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING

from nr_run.intent.addressplan import check_address_plan, check_plan_capacity
from nr_run.intent.errors import Finding
from nr_run.intent.nic import check_nics
from nr_run.intent.power import check_power
from nr_run.intent.shapes import SHAPES, top_tier
from nr_run.intent.source import FABRIC, HOSTS

if TYPE_CHECKING:
    from nr_run.intent.models import DeviceIntent, FabricIntent, Interface
    from nr_run.intent.schema import FabricFile, Hardware
    from nr_run.intent.source import SiteSource

# RoCEv2 with a 4096-byte RDMA MTU: IPv4 20 + UDP 8 + BTH 12 + RETH 16 + ICRC 4 bytes of headers.
ROCE_PATH_MTU = 4096
ROCE_HEADERS = 20 + 8 + 12 + 16 + 4
ROCE_MIN_MTU = ROCE_PATH_MTU + ROCE_HEADERS


def _port_named(switch: DeviceIntent, name: str, index: dict[str, dict[str, Interface]]) -> Interface | None:
    """The switch's first interface called `name` (each switch's names indexed once: every NIC asks)."""
    ports = index.get(switch.name)
    if ports is None:
        ports = index[switch.name] = {}
        for itf in switch.interfaces:
            ports.setdefault(itf.name, itf)
    return ports.get(name)


def check_fabric(intent: FabricIntent, fabric: FabricFile, source: SiteSource) -> list[Finding]:
    ff, hf = source.file(FABRIC), source.file(HOSTS)
    out: list[Finding] = []
    devices = intent.devices

    def dupes(kind: str, rule: str, values: Mapping[str, str | int | None], file: str, field: str) -> None:
        seen: dict[str | int, list[str]] = defaultdict(list)
        for name, value in sorted(values.items()):
            if value is not None:
                seen[value].append(name)
        for value, names in seen.items():
            for name in names[1:]:
                out.append(Finding("error", rule, file, name, field, f"{kind} {value} is also used by {names[0]}"))

    dupes("management address", "duplicate-mgmt", {n: d.mgmt_address for n, d in devices.items()}, hf, "hostname")
    dupes("loopback", "duplicate-loopback", {n: d.loopback for n, d in devices.items()}, ff, "pools.loopback")
    # a CTSW tier (per zone) and the ATSW tier share one ASN each by design; any other reuse is an error
    asns: dict[str, str | int | None] = {n: d.asn for n, d in devices.items() if d.tier == 1}
    for d in devices.values():
        if d.tier >= 2:
            asns[f"{d.role.upper()} tier" + (f" of zone {d.zone}" if d.zone else "")] = d.asn
    dupes("ASN", "duplicate-asn", asns, ff, "asn")

    ctsws = [d for d in devices.values() if d.tier == 2]
    if "ctsw" in SHAPES[fabric.shape].tiers and len(ctsws) < fabric.policy.min_ctsw:
        out.append(Finding("warning", "min-ctsw", ff, "", "policy.min_ctsw",
                           f"{len(ctsws)} CTSW(s), policy recommends at least {fabric.policy.min_ctsw}"))

    for link in intent.links:
        a, b = devices.get(link.a_device), devices.get(link.b_device)
        if a is None or b is None:
            continue
        if a.roce.lossless_priorities != b.roce.lossless_priorities:
            out.append(Finding("error", "lossless-mismatch", ff, link.a_device, "roce_profile",
                               f"{link.a_device}:{link.a_port} lossless priorities {a.roce.lossless_priorities} differ "
                               f"from {link.b_device}:{link.b_port} {b.roce.lossless_priorities}"))

    def mtu_key(name: str, role: str) -> tuple[str, str]:
        """Where the device's MTU comes from: its own `data.mtu` (hosts.yaml, or a group) or its role's."""
        src = source.hosts.get(name)
        if src is not None and src.data.get("mtu") is not None:
            return hf, "data.mtu"
        return ff, f"roles.{role}.mtu"

    # a server's cabled ports come from the links, not from its addressed NICs: a NIC left without an address
    # (an exhausted pool, reported on its own) is still on its rail
    cabled: dict[str, set[str]] = {}
    for lk in intent.links:
        cabled.setdefault(lk.a_device, set()).add(lk.a_port)
        cabled.setdefault(lk.b_device, set()).add(lk.b_port)
    port_index: dict[str, dict[str, Interface]] = {}
    for name, dev in sorted(devices.items()):
        mtus = [(i.name, i.mtu) for i in dev.interfaces] + [(n.name, n.mtu) for n in dev.nics]
        small = [(port_name, mtu) for port_name, mtu in mtus if mtu < ROCE_MIN_MTU]
        if small:
            file, key = mtu_key(name, dev.role)
            ports = ", ".join(p for p, _ in small)
            out.append(Finding("error", "mtu-too-small", file, name, key,
                               f"MTU {small[0][1]} on {ports} < {ROCE_MIN_MTU} (RoCE path MTU {ROCE_PATH_MTU} + "
                               f"{ROCE_HEADERS} bytes of RoCEv2 headers): raise {key}"))
        for nic in dev.nics:
            switch = devices.get(nic.peer_device)
            port = _port_named(switch, nic.peer_port, port_index) if switch else None
            if port and nic.mtu > port.mtu:
                file, key = mtu_key(name, dev.role)
                out.append(Finding("error", "mtu-mismatch", file, name, key,
                                   f"NIC {nic.name} MTU {nic.mtu} > {nic.peer_device}:{port.name} MTU {port.mtu}: "
                                   f"lower {key} or raise the switch's MTU"))
        if dev.tier == 2 and fabric.policy.cross_zone_oversubscription is not None:
            out += _cross_zone(dev, devices, fabric, ff)
        if dev.tier == 1:
            hw = dev.hardware.name
            up = sum(i.speed_mbps for i in dev.interfaces if i.role == "fabric")
            down = sum(i.speed_mbps for i in dev.interfaces if i.role == "host")
            ratio = down / up if up else float("inf")
            # a star's switches have no tier above: every path stays on the switch
            spine_tier = top_tier(fabric.shape) >= 2
            if spine_tier and down and ratio > fabric.policy.max_oversubscription + 1e-9:
                need = "no uplink" if not up else f"raise policy.max_oversubscription to {ratio:.2f}"
                out.append(Finding("error", "oversubscription", ff, name, "policy.max_oversubscription",
                                   f"host {down // 1000}G / uplink {up // 1000}G = {ratio:.2f}:1 exceeds "
                                   f"{fabric.policy.max_oversubscription}:1 ({need}, or add uplinks: "
                                   f"hardware.{hw}.uplinks.count, cabling rule speeds)"))
            uplinks = sum(1 for i in dev.interfaces if i.role == "fabric")
            if dev.bgp and uplinks > dev.bgp.maximum_paths:
                out.append(Finding("error", "ecmp-width", ff, name, "bgp.maximum_paths",
                                   f"{uplinks} equal-cost uplinks but maximum-paths {dev.bgp.maximum_paths}: "
                                   f"raise bgp.maximum_paths to {uplinks} or lower hardware.{hw}.uplinks.count"))
        if dev.tier == 0:
            out += _missing_rails(name, cabled.get(name, set()), fabric, source, hf)

    out += check_address_plan(intent, fabric, ff, hf)
    out += check_nics(intent, fabric.nic, ff, hf)
    out += check_plan_capacity(fabric, intent, ff)
    if fabric.power is not None:
        used = sorted({str(src.data.get("hardware")) for src in source.hosts.values()} & set(fabric.hardware))
        out += check_power(intent, ff, hf, [hw for hw in used if fabric.hardware[hw].power_kw is None])
    for pname, prof in sorted(fabric.roce_profiles.items()):
        where = f"roce_profiles.{pname}"
        mapped = prof.dscp_to_tc.get(prof.cnp.dscp, prof.default_tc)
        if mapped != prof.cnp.tc:
            out.append(Finding("error", "roce-profile", ff, "", f"{where}.cnp",
                               f"CNP DSCP {prof.cnp.dscp} maps to TC{mapped}, not the CNP TC{prof.cnp.tc}"))
        if prof.cnp.tc in prof.lossless_priorities:
            out.append(Finding("error", "roce-profile", ff, "", f"{where}.cnp",
                               f"CNP TC{prof.cnp.tc} must not be lossless"))
        if prof.ecn.enabled and prof.ecn.queue not in prof.lossless_priorities:
            out.append(Finding("error", "roce-profile", ff, "", f"{where}.ecn.queue",
                               f"ECN queue {prof.ecn.queue} is not a lossless queue {prof.lossless_priorities}"))
        strict = {s.queue for s in prof.schedulers if s.type == "strict"}
        if prof.cnp.tc not in strict:
            out.append(Finding("warning", "roce-profile", ff, "", f"{where}.schedulers",
                               f"CNP queue {prof.cnp.tc} is not strict priority"))
        queues = [s.queue for s in prof.schedulers]
        if len(set(queues)) != len(queues):
            out.append(Finding("error", "roce-profile", ff, "", f"{where}.schedulers", "a queue is listed twice"))
    return out


def _cross_zone(dev: DeviceIntent, devices: Mapping[str, DeviceIntent], fabric: FabricFile,
                ff: str) -> list[Finding]:
    """A zone's CTSW carries at most the declared cross-zone oversubscription (down toward its RTSWs / up
    toward the ATSWs); more is an error, as a cross-zone job would get less than the site promises."""
    declared = fabric.policy.cross_zone_oversubscription
    assert declared is not None
    up = sum(i.speed_mbps for i in dev.interfaces if devices[i.peer_device].tier > dev.tier)
    down = sum(i.speed_mbps for i in dev.interfaces if devices[i.peer_device].tier < dev.tier)
    if not down:
        return []
    ratio = down / up if up else float("inf")
    if ratio <= declared + 1e-9:
        return []
    return [Finding("error", "oversubscription", ff, dev.name, "policy.cross_zone_oversubscription",
                    f"toward its RTSWs {down // 1000}G / toward the ATSWs {up // 1000}G = {ratio:.2f}:1 exceeds the "
                    f"declared cross-zone {declared}:1 (raise policy.cross_zone_oversubscription, or add uplinks: "
                    f"hardware.{dev.hardware.name}.uplinks.count)")]


def rail_count(hw: Hardware) -> int:
    """Compute NICs a server of this hardware puts on rails: its downlink block (`from`, `count`, or every
    port after `from`); other ports (storage, management) are not on rails."""
    block = hw.downlinks
    if block is None:
        return hw.ports
    rest = max(0, hw.ports - block.from_)
    return min(block.count, rest) if block.count else rest


def _missing_rails(name: str, cabled: set[str], fabric: FabricFile, source: SiteSource, hf: str) -> list[Finding]:
    """A warning per compute NIC without a rail link (an override removed it, or its RTSW is missing)."""
    src = source.hosts.get(name)
    hw = fabric.hardware.get(str(src.data.get("hardware"))) if src else None
    if hw is None:
        return []
    first = hw.downlinks.from_ if hw.downlinks else 0
    missing = [hw.port(first + k) for k in range(rail_count(hw)) if hw.port(first + k) not in cabled]
    if not missing:
        return []
    return [Finding("warning", "rail-link-missing", hf, name, "cabling",
                    f"compute NIC(s) {', '.join(missing)} have no rail link (removed by an override?): "
                    f"{name} runs with {rail_count(hw) - len(missing)} of {rail_count(hw)} rails")]
