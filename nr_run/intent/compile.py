"""Compile a site inventory into a FabricIntent: addresses, ASNs, cabling, BGP, RoCE, headroom.

Pure and deterministic: only the inventory files are read, every collection is sorted, and the
result does not depend on the order of hosts in hosts.yaml.
"""

from __future__ import annotations

import difflib
import ipaddress
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from nr_run.intent import headroom as hr
from nr_run.intent.errors import Finding, InventoryError
from nr_run.intent.formats import upgrade
from nr_run.intent.models import (
    Bgp,
    BgpPeer,
    Buffers,
    DeviceIntent,
    Ecn,
    FabricIntent,
    HardwareFacts,
    Headroom,
    Interface,
    Link,
    Nic,
    Roce,
    Scheduler,
    Watchdog,
)
from nr_run.intent.preflight import check_fabric, rail_count
from nr_run.intent.schema import (
    MAX_ASN,
    SPEEDS,
    FabricFile,
    Hardware,
    HostData,
    LeafSpineRule,
    RailRule,
    RoceProfileSettings,
    speed_to_mbps,
)
from nr_run.intent.source import FABRIC, HOSTS, SiteSource, load_site


@dataclass(frozen=True)
class Host:
    name: str
    mgmt: str
    data: HostData
    hw: Hardware
    ordinal: int          # position within its role, ordered by (su, index)


@dataclass
class RawLink:
    a: str
    a_port: str
    b: str
    b_port: str
    speed_mbps: int
    cable_length_m: int
    origin: str            # rule name or "override", for messages

    def ends(self) -> tuple[tuple[str, str], tuple[str, str]]:
        return (self.a, self.a_port), (self.b, self.b_port)


# one cabled end of a device: (its port, the link, the peer device, the peer's port)
End = tuple[str, "RawLink", str, str]

M = TypeVar("M", Interface, BgpPeer, Nic, Link)
_ALL_FIELDS: dict[type, set[str]] = {m: set(m.model_fields) for m in (Interface, BgpPeer, Nic, Link)}


def _trusted(model: type[M], **values: Any) -> M:
    """A port, BGP peer, NIC or link built from values compile derived from validated input, not validated
    again: they are most objects of a large site, and validation gives each its own set of field names and its
    own copy of every list (~800 bytes a port). Every field is given, so all instances of a model share one
    field-name set; lists are shared too (the intent is read-only). The tests re-validate compiled intents."""
    assert values.keys() == _ALL_FIELDS[model], f"{model.__name__}: every field must be given"
    return model.model_construct(_ALL_FIELDS[model], **values)


_RULE_TAGS = {"leaf-spine", "rail"}


def _loc(error: ErrorDetails) -> tuple[str, ...]:
    # the discriminated cabling rule puts its tag into the path: cabling.rules.0.rail.speed -> cabling.rules.0.speed
    return tuple(str(p) for p in error["loc"] if p not in _RULE_TAGS)


def printable(text: str) -> str:
    """`text` with every non-printable character escaped, so a message can never add or hide a line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _schema_findings(exc: ValidationError, file: str, host: str, prefix: str) -> list[Finding]:
    """One finding per problem; a misspelled key (unknown key + a missing one beside it) is one finding."""
    errors = exc.errors(include_url=False)
    missing = {_loc(e) for e in errors if e["type"] == "missing"}
    meant: dict[tuple[str, ...], str] = {}        # unknown key -> the missing key beside it that it resembles
    for err in errors:
        loc = _loc(err)
        if err["type"] == "extra_forbidden" and loc:
            free = [m[-1] for m in missing if m[:-1] == loc[:-1] and m[-1] not in meant.values()]
            close = difflib.get_close_matches(loc[-1], free, n=1)
            if close:
                meant[loc] = close[0]
    paired = {loc[:-1] + (key,) for loc, key in meant.items()}
    out = []
    for err in errors:
        loc = _loc(err)
        field = prefix + ".".join(loc) if loc else prefix.rstrip(".")
        if err["type"] == "missing" and loc in paired:
            continue
        if err["type"] == "extra_forbidden":
            hint = f" (did you mean {meant[loc]!r}?)" if loc in meant else ""
            out.append(Finding("error", "schema", file, host, field, "unknown key" + hint))
            continue
        out.append(Finding("error", "schema", file, host, field, printable(err["msg"])))
    return out


def _mgmt_address(value: str, prefix_length: int) -> tuple[str | None, str]:
    """The IPv4 management address in `hostname` ('a.b.c.d' or 'a.b.c.d/len' with the site's length), or
    (None, why not)."""
    try:
        iface = ipaddress.IPv4Interface(value)
    except ValueError:
        return None, f"{printable(value)!r} is not an IPv4 address"
    if "/" in value and iface.network.prefixlen not in (32, prefix_length):
        return None, (f"{value} has prefix length /{iface.network.prefixlen}, the site's management network "
                      f"is /{prefix_length} (management.prefix_length)")
    ip = iface.ip
    if ip.is_multicast or ip.is_loopback or ip.is_unspecified or ip.is_reserved or ip.is_link_local:
        return None, f"{ip} cannot be a device's management address"
    net = ipaddress.IPv4Network((ip, prefix_length), strict=False)
    if ip in (net.network_address, net.broadcast_address):
        return None, f"{ip} is the network or broadcast address of {net} (management.prefix_length)"
    return str(ip), ""


def _parse(source: SiteSource) -> tuple[FabricFile | None, dict[str, Host], list[Finding]]:
    findings = list(source.findings)
    fabric_file, hosts_file = source.file(FABRIC), source.file(HOSTS)
    fabric: FabricFile | None = None
    unreadable = any(f.file == fabric_file and not f.field for f in source.findings)
    try:
        if not unreadable:      # a file that did not load has its one finding, not one per missing key
            # read as the current format: a key an earlier format had is a warning or an error with its hint
            current, changed = upgrade(source.fabric, fabric_file)
            findings += changed
            fabric = FabricFile.model_validate(current)
    except ValidationError as exc:
        findings += _schema_findings(exc, fabric_file, "", "")
    hosts: dict[str, Host] = {}
    parsed: list[tuple[str, str, HostData]] = []
    for name, src in source.hosts.items():
        try:
            data = HostData.model_validate(src.data)
        except ValidationError as exc:
            findings += _schema_findings(exc, hosts_file, name, "data.")
            continue
        parsed.append((name, src.hostname, data))
    if fabric is None:
        return None, {}, findings
    checked: list[tuple[str, str, HostData]] = []
    for name, hostname, data in parsed:
        if not hostname:
            findings.append(Finding("error", "schema", hosts_file, name, "hostname", "management address missing"))
            continue
        mgmt, why = _mgmt_address(hostname, fabric.management.prefix_length)
        if mgmt is None:
            findings.append(Finding("error", "schema", hosts_file, name, "hostname", why))
            continue
        checked.append((name, mgmt, data))
    parsed = checked
    by_role: dict[str, list[tuple[str, str, HostData]]] = {}
    for name, mgmt, data in parsed:
        if data.hardware not in fabric.hardware:
            findings.append(Finding("error", "schema", hosts_file, name, "data.hardware",
                                    f"unknown hardware {data.hardware!r} (not in fabric.yaml hardware)"))
            continue
        hw = fabric.hardware[data.hardware]
        platform = source.hosts[name].platform
        if not platform:      # Nornir connects by the host's platform: every command refuses a host without one
            findings.append(Finding("error", "schema", hosts_file, name, "platform",
                                    f"no platform: set `platform: {hw.platform}` on the host or one of its groups "
                                    f"(its hardware {data.hardware!r} is {hw.platform})"))
        elif platform != hw.platform:
            findings.append(Finding("error", "schema", hosts_file, name, "platform",
                                    f"platform {platform!r} differs from hardware {data.hardware!r} ({hw.platform})"))
        if data.role not in fabric.roles:
            findings.append(Finding("error", "schema", fabric_file, name, f"roles.{data.role}",
                                    f"role {data.role!r} has no settings in fabric.yaml roles"))
            continue
        if data.role in ("rtsw", "gpu") and data.su is None:
            findings.append(Finding("error", "schema", hosts_file, name, "data.su",
                                    f"a {data.role} needs the scalable unit 'su'"))
            continue
        by_role.setdefault(data.role, []).append((name, mgmt, data))
    for _role, members in sorted(by_role.items()):
        members.sort(key=lambda m: (m[2].su or 0, m[2].index, m[0]))
        seen: dict[tuple[int, int], str] = {}
        for ordinal, (name, mgmt, data) in enumerate(members):
            key = (data.su or 0, data.index)
            if key in seen:
                findings.append(Finding("error", "duplicate-index", hosts_file, name, "data.index",
                                        f"{data.role} su {data.su} index {data.index} is also used by {seen[key]}"))
            seen[key] = name
            hosts[name] = Host(name, mgmt, data, fabric.hardware[data.hardware], ordinal)
    return fabric, hosts, findings


def _generate_links(fabric: FabricFile, hosts: dict[str, Host], file: str) -> tuple[list[RawLink], list[Finding]]:
    findings: list[Finding] = []
    links: list[RawLink] = []

    def role_members(role: str) -> list[Host]:
        return sorted((h for h in hosts.values() if h.data.role == role), key=lambda h: h.ordinal)

    def slot_port(host: Host, block: str, k: int, rule: str) -> str | None:
        ports = getattr(host.hw, block)
        if ports is None:
            findings.append(Finding("error", "cabling", file, host.name, f"hardware.{host.data.hardware}.{block}",
                                    f"rule {rule} needs {block} on hardware {host.data.hardware!r}"))
            return None
        if ports.count is not None and k >= ports.count:
            return None
        slot = ports.from_ + k
        if slot >= host.hw.ports:
            findings.append(Finding("error", "pool-exhausted", file, host.name, f"hardware.{host.data.hardware}.ports",
                                    f"rule {rule} needs port slot {slot} but the hardware has {host.hw.ports} ports"))
            return None
        return host.hw.port(slot)

    for i, rule in enumerate(fabric.cabling.rules):
        where = f"cabling.rules.{i}"
        speed = speed_to_mbps(rule.speed)
        if isinstance(rule, LeafSpineRule):
            spines, leaves = role_members(rule.spine_role), role_members(rule.leaf_role)
            for j, spine in enumerate(spines):
                short = sorted({lf.data.hardware for lf in leaves
                                if lf.hw.uplinks is not None and lf.hw.uplinks.count is not None
                                and j >= lf.hw.uplinks.count})
                if short:
                    findings.append(Finding("warning", "ctsw-no-uplinks", file, spine.name,
                                            f"hardware.{short[0]}.uplinks.count",
                                            f"{spine.name} is {rule.spine_role} #{j + 1}; RTSWs of hardware "
                                            f"{', '.join(short)} have fewer uplinks, so they do not connect to it"))
            for leaf in leaves:
                for j, spine in enumerate(spines):
                    a_port = slot_port(leaf, "uplinks", j, where)
                    if a_port is None:
                        continue
                    b_port = slot_port(spine, "downlinks", leaf.ordinal, where)
                    if b_port is None:
                        continue
                    links.append(RawLink(leaf.name, a_port, spine.name, b_port, speed, rule.cable_length_m, where))
        elif isinstance(rule, RailRule):
            # grouped by unit once: a scan of every device per unit grows with the square of the site
            leaves_of: dict[int, dict[int, Host]] = {}
            for lf in role_members(rule.leaf_role):
                leaves_of.setdefault(lf.data.su or 0, {})[lf.data.index] = lf
            servers_of: dict[int, list[Host]] = {}
            for s in role_members(rule.server_role):
                servers_of.setdefault(s.data.su or 0, []).append(s)
            for su in sorted(servers_of):
                unit_leaves = leaves_of.get(su, {})
                for position, server in enumerate(servers_of[su]):
                    for rail in range(rail_count(server.hw)):
                        rail_leaf = unit_leaves.get(rail + 1)
                        if rail_leaf is None:
                            findings.append(Finding("error", "cabling", file, server.name, where,
                                                    f"no {rule.leaf_role} with index {rail + 1} in su {su} for rail {rail + 1}"))
                            continue
                        a_port = slot_port(server, "downlinks", rail, where)
                        b_port = slot_port(rail_leaf, "downlinks", position, where)
                        if a_port and b_port:
                            links.append(RawLink(rail_leaf.name, b_port, server.name, a_port, speed, rule.cable_length_m, where))
    return links, findings


def _apply_overrides(fabric: FabricFile, hosts: dict[str, Host], links: list[RawLink], file: str) -> list[Finding]:
    findings: list[Finding] = []
    for i, ov in enumerate(fabric.cabling.overrides):
        where = f"cabling.overrides.{i}"
        endpoints = [ov.a] + ([ov.b] if ov.b else [])
        bad = False
        for ep in endpoints:
            dev, port = ep.split(":")
            if dev not in hosts:
                findings.append(Finding("error", "cabling", file, dev, where, f"unknown device {dev!r} in {ep!r}"))
                bad = True
            elif hosts[dev].hw.slot_of(port) is None:
                findings.append(Finding("error", "cabling", file, dev, where,
                                        f"unknown port {port!r} on {dev} (hardware {hosts[dev].data.hardware})"))
                bad = True
        if bad:
            continue
        a = tuple(ov.a.split(":"))
        if ov.add:
            if not ov.b or ov.speed is None or ov.cable_length_m is None:
                findings.append(Finding("error", "schema", file, a[0], where, "an added link needs b, speed and cable_length_m"))
                continue
            b = ov.b.split(":")
            links.append(RawLink(a[0], a[1], b[0], b[1], speed_to_mbps(ov.speed), ov.cable_length_m, where))
            continue
        matches = [lk for lk in links if a in lk.ends() and (ov.b is None or tuple(ov.b.split(":")) in lk.ends())]
        if not matches:
            findings.append(Finding("error", "cabling", file, a[0], where, f"no derived link matches {ov.a}" +
                                    (f" <-> {ov.b}" if ov.b else "")))
            continue
        for lk in matches:
            if ov.remove:
                links.remove(lk)
                continue
            if ov.speed is not None:
                lk.speed_mbps = speed_to_mbps(ov.speed)
            if ov.cable_length_m is not None:
                lk.cable_length_m = ov.cable_length_m
    used: dict[tuple[str, str], RawLink] = {}
    for lk in links:
        for end in lk.ends():
            if end in used:
                findings.append(Finding("error", "port-cabled-twice", file, end[0], "cabling",
                                        f"port {end[1]} is cabled twice ({lk.origin} and {used[end].origin})"))
            used[end] = lk
    return findings


def _check_speeds(links: list[RawLink], hosts: dict[str, Host], file: str) -> list[Finding]:
    """A link runs at most at the speed of both ends' hardware (switch port or NIC): one error per rule or
    override and hardware model, naming the key to change."""
    seen: set[tuple[str, str]] = set()
    out: list[Finding] = []
    for lk in links:
        for dev, port in lk.ends():
            host = hosts[dev]
            limit = SPEEDS[host.hw.speed]
            if lk.speed_mbps > limit and (lk.origin, host.data.hardware) not in seen:
                seen.add((lk.origin, host.data.hardware))
                out.append(Finding("error", "link-speed", file, dev, f"{lk.origin}.speed",
                                   f"{lk.speed_mbps // 1000}G is faster than {dev}:{port} can run "
                                   f"(hardware.{host.data.hardware}.speed {host.hw.speed})"))
    return out


def _roce(name: str, settings: RoceProfileSettings) -> Roce:
    full = {d: settings.dscp_to_tc.get(d, settings.default_tc) for d in range(64)}
    lossless = list(settings.lossless_priorities)
    tc_to_queue = {tc: tc for tc in range(8)}
    ecn = settings.ecn
    return Roce(
        profile=name,
        trust=settings.trust,
        dscp_to_tc=full,
        dscp_overrides=dict(sorted(settings.dscp_to_tc.items())),
        tc_to_queue=tc_to_queue,
        tc_to_pg={tc: (tc if tc in lossless else 0) for tc in range(8)},
        pfc_priority_to_queue={p: p for p in range(8)},
        lossless_priorities=lossless,
        lossless_queues=sorted(tc_to_queue[p] for p in lossless),
        cnp_dscp=settings.cnp.dscp,
        cnp_tc=settings.cnp.tc,
        cnp_queue=tc_to_queue[settings.cnp.tc],
        ecn=Ecn(enabled=ecn.enabled, queue=ecn.queue, min_bytes=ecn.min_kbytes * 1000, max_bytes=ecn.max_kbytes * 1000,
                min_kbytes=ecn.min_kbytes, max_kbytes=ecn.max_kbytes, max_mark_probability=ecn.max_mark_probability),
        schedulers=[Scheduler(queue=s.queue, type=s.type, weight=s.weight)
                    for s in sorted(settings.schedulers, key=lambda s: s.queue)],
        watchdog=Watchdog(**settings.pfc_watchdog.model_dump()),
    )


def _hardware(hw: Hardware, name: str, base: Path) -> HardwareFacts:
    return HardwareFacts(name=name, platform_id=hw.platform_id, asic=hw.asic, lanes_per_port=hw.lanes_per_port,
                         speed_mbps=speed_to_mbps(hw.speed),
                         sku_dir=str((base / hw.sku_dir).resolve()) if hw.sku_dir else "")


def _p31_ends(pool: ipaddress.IPv4Network, n: int) -> tuple[tuple[str, str, str], tuple[str, str, str]]:
    """The n-th /31 of `pool` as (address/31, ip, peer ip) of its even and its odd end; each address text is
    made once and shared by both ends (and everything built from them)."""
    base = pool.network_address + 2 * n
    even, odd = str(base), str(base + 1)
    return (f"{even}/31", even, odd), (f"{odd}/31", odd, even)


class _Compiler:
    def __init__(self, source: SiteSource, fabric: FabricFile, hosts: dict[str, Host]) -> None:
        self.source, self.fabric, self.hosts = source, fabric, hosts
        self.findings: list[Finding] = []
        self.fabric_file = source.file(FABRIC)
        self.headrooms: dict[tuple[int, int, int, int], Headroom] = {}

    def profile_of(self, host: Host) -> str:
        return host.data.roce_profile or self.fabric.roles[host.data.role].roce_profile

    def mtu_of(self, host: Host) -> int:
        return host.data.mtu or self.fabric.roles[host.data.role].mtu

    def headroom(self, speed_mbps: int, cable_length_m: int, mtu: int, cell: int) -> Headroom:
        """A port's headroom; one shared (immutable) object per distinct input, as most ports of a site share
        speed, cable length and MTU."""
        key = (speed_mbps, cable_length_m, mtu, cell)
        found = self.headrooms.get(key)
        if found is None:
            xoff = hr.headroom_bytes(speed_mbps, cable_length_m, mtu, cell)
            frame = hr.round_to_cells(hr.frame_bytes(mtu), cell)
            found = Headroom(xoff_bytes=xoff, xon_bytes=frame, xon_offset_bytes=frame, size_bytes=frame)
            self.headrooms[key] = found
        return found

    def mgmt(self, host: Host) -> tuple[str, str]:
        """The host's management prefix and the site's management gateway ("" when none)."""
        gateway = self.fabric.management.gateway
        return f"{host.mgmt}/{self.fabric.management.prefix_length}", str(gateway) if gateway else ""

    def asn_and_loopback(self, host: Host) -> tuple[int | None, str | None]:
        if host.data.role == "gpu":
            return None, None
        pools = self.fabric.pools.loopback
        pool = pools.ctsw if host.data.role == "ctsw" else pools.rtsw
        asn: int | None = self.fabric.asn.ctsw if host.data.role == "ctsw" else self.fabric.asn.rtsw_base + host.ordinal
        if asn is not None and asn > MAX_ASN:
            self.findings.append(Finding("error", "asn-range", self.fabric_file, host.name, "asn.rtsw_base",
                                         f"rtsw #{host.ordinal + 1} would get ASN {asn}, above {MAX_ASN}: lower "
                                         f"asn.rtsw_base to at most {MAX_ASN - host.ordinal}"))
            asn = None
        if host.ordinal + 1 >= pool.num_addresses:
            self.findings.append(Finding("error", "pool-exhausted", self.fabric_file, host.name,
                                         f"pools.loopback.{host.data.role}",
                                         f"pool {pool} has no address for {host.data.role} #{host.ordinal + 1}"))
            return asn, None
        return asn, f"{pool.network_address + host.ordinal + 1}/32"

    def host_block_prefixlen(self) -> int:
        """One block size for the whole site: the smallest power of two holding a /31 per downlink slot of
        every RTSW hardware model, so blocks of RTSWs with different port layouts cannot overlap."""
        capacity = 1
        for host in self.hosts.values():
            if host.data.role == "rtsw":
                first = host.hw.downlinks.from_ if host.hw.downlinks else 0
                capacity = max(capacity, host.hw.ports - first)
        return 32 - math.ceil(math.log2(2 * capacity))

    def host_block(self, leaf: Host) -> ipaddress.IPv4Network | None:
        """The RTSW's block of host /31s: one /31 per downlink slot, so it can be summarized.

        Block n (RTSW ordinal n) of the site-wide block size; None (with a finding) when the pool has no
        such block.
        """
        prefixlen = self.block_prefixlen
        pool = self.fabric.pools.host_p2p
        size = 2 ** (32 - prefixlen)
        base = int(pool.network_address) + leaf.ordinal * size
        if prefixlen < pool.prefixlen or base + size > int(pool.broadcast_address) + 1:
            self.findings.append(Finding("error", "pool-exhausted", self.fabric_file, leaf.name, "pools.host_p2p",
                                         f"pool {pool} has no /{prefixlen} host block for rtsw #{leaf.ordinal + 1}"))
            return None
        return ipaddress.IPv4Network((base, prefixlen))

    def address_links(self, links: list[RawLink]) -> dict[tuple[str, str], tuple[str, str, str]]:
        """(device, port) -> (address/31, ip, peer ip). Upper tier (CTSW, RTSW toward hosts) gets the even address.

        Fabric /31s are numbered in (RTSW ordinal, port) order; a host /31 sits at its RTSW port's
        slot inside that RTSW's host block, so adding servers or RTSWs never renumbers others.
        """
        out: dict[tuple[str, str], tuple[str, str, str]] = {}
        tier = {"ctsw": 0, "rtsw": 1, "gpu": 2}
        fabric_n = 0

        def ends(lk: RawLink) -> tuple[tuple[str, str], tuple[str, str]]:
            lower = max((lk.a, lk.a_port), (lk.b, lk.b_port), key=lambda e: tier[self.hosts[e[0]].data.role])
            upper = (lk.b, lk.b_port) if lower == (lk.a, lk.a_port) else (lk.a, lk.a_port)
            return upper, lower

        def order(lk: RawLink) -> tuple[Any, ...]:
            upper, lower = ends(lk)
            lh, uh = self.hosts[lower[0]], self.hosts[upper[0]]
            return (lh.data.role, lh.ordinal, lh.hw.slot_of(lower[1]) or 0, uh.ordinal, upper, lower)

        fabric = sorted(order(lk) for lk in links if "gpu" not in (self.hosts[lk.a].data.role, self.hosts[lk.b].data.role))
        for *_rest, upper, lower in fabric:
            pool = self.fabric.pools.fabric_p2p
            if 2 * fabric_n + 1 >= pool.num_addresses:
                self.findings.append(Finding("error", "pool-exhausted", self.fabric_file, upper[0], "pools.fabric_p2p",
                                             f"pool {pool} has no /31 left for link #{fabric_n + 1}"))
                continue
            fabric_n += 1
            out[upper], out[lower] = _p31_ends(pool, fabric_n - 1)
        for lk in links:
            upper, lower = ends(lk)
            if self.hosts[lower[0]].data.role != "gpu":
                continue
            leaf = self.hosts[upper[0]]
            block = self.blocks.get(leaf.name)
            if block is None:
                continue
            slot = (leaf.hw.slot_of(upper[1]) or 0) - (leaf.hw.downlinks.from_ if leaf.hw.downlinks else 0)
            if slot < 0:
                self.findings.append(Finding("error", "cabling", self.fabric_file, leaf.name, "cabling",
                                             f"host link on {upper[1]}, which is not a downlink port"))
                continue
            out[upper], out[lower] = _p31_ends(block, slot)
        return out

    def compile(self, links: list[RawLink]) -> FabricIntent:
        self.block_prefixlen = self.host_block_prefixlen()
        self.host_routes = str(self.fabric.pools.host_p2p)
        self.blocks = {h.name: self.host_block(h) for h in sorted(self.hosts.values(), key=lambda h: h.name)
                       if h.data.role == "rtsw"}
        addressing = self.address_links(links)
        idents = {h.name: self.asn_and_loopback(h) for h in self.hosts.values()}
        roces = {n: _roce(n, p) for n, p in sorted(self.fabric.roce_profiles.items())}
        by_end: dict[str, list[End]] = {}
        for lk in links:
            by_end.setdefault(lk.a, []).append((lk.a_port, lk, lk.b, lk.b_port))
            by_end.setdefault(lk.b, []).append((lk.b_port, lk, lk.a, lk.a_port))
        devices: dict[str, DeviceIntent] = {}
        for name in sorted(self.hosts):
            host = self.hosts[name]
            profile = self.profile_of(host)
            if profile not in roces:
                self.findings.append(Finding("error", "schema", self.fabric_file, name, "roce_profile",
                                             f"unknown RoCE profile {profile!r}"))
                continue
            roce = roces[profile]
            ends = sorted(by_end.get(name, []), key=lambda e: host.hw.slot_of(e[0]) or 0)
            asn, loopback = idents[name]
            if host.data.role == "gpu":
                devices[name] = self._server(host, roce, ends, addressing)
                continue
            interfaces, peers = [], []
            for port, lk, peer, peer_port in ends:
                if (name, port) not in addressing:
                    continue
                address, ip, peer_ip = addressing[(name, port)]
                peer_host = self.hosts[peer]
                role: Literal["fabric", "host"] = "host" if peer_host.data.role == "gpu" else "fabric"
                mtu = self.mtu_of(host)
                slot = host.hw.slot_of(port) or 0
                headroom = self.headroom(lk.speed_mbps, lk.cable_length_m, mtu, host.hw.buffer_cell_bytes or 1)
                interfaces.append(_trusted(Interface,
                    name=port, role=role, peer_device=peer, peer_port=peer_port, speed_mbps=lk.speed_mbps,
                    cable_length_m=lk.cable_length_m, mtu=mtu, address=address, ip=ip, peer_ip=peer_ip,
                    description=f"{'P2P' if role == 'fabric' else 'GPU'}_{peer}_{peer_port}",
                    fec=host.hw.fec, slot=slot,
                    lossless_priorities=roce.lossless_priorities,
                    headroom=headroom,
                ))
                if role == "fabric":
                    peer_asn = idents[peer][0]
                    peers.append(_trusted(BgpPeer,address=peer_ip, remote_asn=peer_asn or 0, description=f"{peer}_{peer_port}",
                                         peer_device=peer, local_address=ip, local_port=port,
                                         peer_platform=peer_host.hw.platform))
            bgp_cfg = self.fabric.bgp
            router_id = loopback.split("/")[0] if loopback else None
            bgp = Bgp(asn=asn or 0, router_id=router_id or "0.0.0.0", peer_group=bgp_cfg.peer_group, bfd=bgp_cfg.bfd,
                      maximum_paths=bgp_cfg.maximum_paths, ecmp=bgp_cfg.maximum_paths, keepalive=bgp_cfg.keepalive,
                      holdtime=bgp_cfg.holdtime, maximum_routes=bgp_cfg.maximum_routes, peers=sorted(peers, key=lambda p: ipaddress.IPv4Address(p.address)))
            buffers = None
            if host.hw.buffer_cell_bytes is not None:
                shared_xoff = sum(i.headroom.xoff_bytes * len(roce.lossless_priorities) for i in interfaces if i.headroom)
                buffers = Buffers(cell_bytes=host.hw.buffer_cell_bytes, headroom_bytes=shared_xoff)
            devices[name] = DeviceIntent(
                name=name, site=self.fabric.site, role=host.data.role, platform=host.hw.platform, mgmt_address=host.mgmt,
                mgmt_prefix=self.mgmt(host)[0], mgmt_gateway=self.mgmt(host)[1], mgmt_vrf=self.fabric.management.vrf,
                model=host.hw.model, hardware=_hardware(host.hw, host.data.hardware, self.source.directory), su=host.data.su, index=host.data.index,
                asn=asn, loopback=loopback, router_id=router_id, interfaces=interfaces, bgp=bgp, roce=roce,
                host_block=str(self.blocks[name]) if self.blocks.get(name) else None,
                buffers=buffers,
            )
        return FabricIntent(
            site=self.fabric.site, lab=self.fabric.lab, devices=devices, fabric_file=self.fabric_file,
            links=sorted((_link(lk, self.hosts) for lk in links), key=lambda lk: (lk.a_device, lk.a_port, lk.b_device)),
        )

    def _server(self, host: Host, roce: Roce, ends: list[End],
                addressing: dict[tuple[str, str], tuple[str, str, str]]) -> DeviceIntent:
        nics = []
        host_routes = self.host_routes
        for port, lk, peer, peer_port in ends:
            if (host.name, port) not in addressing:
                continue
            address, ip, peer_ip = addressing[(host.name, port)]
            nics.append(_trusted(Nic,name=port, address=address, ip=ip, gateway=peer_ip, mtu=self.mtu_of(host),
                            rail=self.hosts[peer].data.index, peer_device=peer, peer_port=peer_port,
                            speed_mbps=lk.speed_mbps, lossless_priorities=roce.lossless_priorities, trust=roce.trust,
                            routes=[host_routes]))
        return DeviceIntent(name=host.name, site=self.fabric.site, role="gpu", platform=host.hw.platform,
                            mgmt_address=host.mgmt, mgmt_prefix=self.mgmt(host)[0],
                            mgmt_gateway=self.mgmt(host)[1], model=host.hw.model,
                            hardware=_hardware(host.hw, host.data.hardware, self.source.directory), su=host.data.su, index=host.data.index,
                            roce=roce, nics=nics, rails=_rail_ports(host.hw))


def _rail_ports(hw: Hardware) -> list[str]:
    first = hw.downlinks.from_ if hw.downlinks else 0
    return [hw.port(first + k) for k in range(rail_count(hw))]


def _link(lk: RawLink, hosts: dict[str, Host]) -> Link:
    (a, ap), (b, bp) = sorted(lk.ends())
    role: Literal["fabric", "host"] = "host" if "gpu" in (hosts[a].data.role, hosts[b].data.role) else "fabric"
    return _trusted(Link, a_device=a, a_port=ap, b_device=b, b_port=bp, role=role, speed_mbps=lk.speed_mbps,
                cable_length_m=lk.cable_length_m)


def compile_with_findings(directory: Path | str) -> tuple[FabricIntent | None, list[Finding]]:
    """Compile the site and run every preflight rule; returns the intent (None on fatal errors) and findings."""
    source = load_site(Path(directory))
    fabric, hosts, findings = _parse(source)
    if fabric is None or any(f.severity == "error" for f in findings):
        return None, sorted(set(findings))
    links, link_findings = _generate_links(fabric, hosts, source.file(FABRIC))
    findings += link_findings
    findings += _apply_overrides(fabric, hosts, links, source.file(FABRIC))
    findings += _check_speeds(links, hosts, source.file(FABRIC))
    compiler = _Compiler(source, fabric, hosts)
    intent = compiler.compile(links)
    findings += compiler.findings
    findings += check_fabric(intent, fabric, source)
    return intent, sorted(set(findings))


def compile_site(directory: Path | str) -> FabricIntent:
    """Compile a site, raising InventoryError if any preflight rule reports an error."""
    intent, findings = compile_with_findings(directory)
    if intent is None or any(f.severity == "error" for f in findings):
        raise InventoryError(findings)
    return intent
