"""Compile a site inventory into a FabricIntent: addresses, ASNs, cabling, BGP, RoCE, headroom.

Pure and deterministic: only the inventory files are read, every collection is sorted, and the
result does not depend on the order of hosts in hosts.yaml.
"""

from __future__ import annotations

import difflib
import ipaddress
import math
import socket
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError
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
    PowerBudget,
    Roce,
    Scheduler,
    Watchdog,
)
from nr_run.intent.nic import NicQos, nic_qos
from nr_run.intent.plan import Place, Slots
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
    SpineAggregationRule,
    speed_to_mbps,
)
from nr_run.intent.shapes import SHAPES, tier_of
from nr_run.intent.source import FABRIC, HOSTS, SiteSource, load_site


@dataclass(frozen=True)
class Host:
    name: str
    mgmt: str
    data: HostData
    hw: Hardware
    ordinal: int          # position within its role, ordered by (zone, su, index)
    tier: int = 0         # 0 servers, 1 leaves, 2 spines, 3 aggregation

    @cached_property
    def place(self) -> Place:
        """Its place in the plan (made once: the address plan asks for it per link end)."""
        return Place(self.data.role, self.data.zone, self.data.su, self.data.index, self.ordinal)


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
_MODELS: tuple[type[BaseModel], ...] = (Interface, BgpPeer, Nic, Link)
_ALL_FIELDS: dict[type, set[str]] = {m: set(m.model_fields) for m in _MODELS}
_ORDER: dict[type, tuple[str, ...]] = {m: tuple(m.model_fields) for m in _MODELS}
_set = object.__setattr__
# what model_construct would do differently (aliases, post-init, extra or private attributes) none of them has
assert not any(f.alias or f.validation_alias for m in _MODELS for f in m.model_fields.values())
assert not any(m.__pydantic_post_init__ or m.__private_attributes__ or m.model_config.get("extra") == "allow"
               for m in _MODELS)


def _trusted(model: type[M], **values: Any) -> M:
    """A port, BGP peer, NIC or link built from values compile derived from validated input, not validated
    again: they are most objects of a large site, and validation gives each its own set of field names and its
    own copy of every list (~800 bytes a port). Every field is given, so all instances of a model share one
    field-name set; lists are shared too (the intent is read-only). The tests re-validate compiled intents.
    The instance is what model_construct makes (fields in declaration order), without its per-field search for
    aliases and defaults (a third of compile at 1,000 switches)."""
    if tuple(values) != _ORDER[model]:          # the callers give the fields in declaration order: no copy
        assert values.keys() == _ALL_FIELDS[model], f"{model.__name__}: every field must be given"
        values = {k: values[k] for k in _ORDER[model]}
    m = model.__new__(model)
    _set(m, "__dict__", values)
    _set(m, "__pydantic_fields_set__", _ALL_FIELDS[model])
    _set(m, "__pydantic_extra__", None)
    _set(m, "__pydantic_private__", None)
    return m


_RULE_TAGS = {"leaf-spine", "spine-aggregation", "rail"}


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
    findings += _shape_findings(fabric, fabric_file)
    spec = SHAPES[fabric.shape]
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
        tier = tier_of(fabric.shape, data.role)
        if tier is None:
            findings.append(Finding("error", "shape", hosts_file, name, "data.role",
                                    f"role {data.role!r} is not part of shape {fabric.shape!r} ({spec.what}; its "
                                    f"roles: {', '.join(spec.tiers)}): change data.role or fabric.yaml shape"))
            continue
        if tier <= 1 and data.su is None:
            findings.append(Finding("error", "schema", hosts_file, name, "data.su",
                                    f"a {data.role} needs the scalable unit 'su'"))
            continue
        problem = _place_problem(fabric, data, tier)
        if problem:
            findings.append(Finding("error", "shape", hosts_file, name, problem[0], problem[1]))
            continue
        by_role.setdefault(data.role, []).append((name, mgmt, data))
    for _role, members in sorted(by_role.items()):
        members.sort(key=lambda m: (m[2].zone or 0, m[2].su or 0, m[2].index, m[0]))
        seen: dict[tuple[int, int, int], str] = {}
        for ordinal, (name, mgmt, data) in enumerate(members):
            key = (data.zone or 0, data.su or 0, data.index)
            if key in seen:
                where = f"zone {data.zone} " if data.zone else ""
                findings.append(Finding("error", "duplicate-index", hosts_file, name, "data.index",
                                        f"{data.role} {where}su {data.su} index {data.index} is also used by {seen[key]}"))
            seen[key] = name
            hw = fabric.hardware[data.hardware]
            if data.port_names is not None:
                names = data.port_names
                if len(names) != hw.ports or len(set(names)) != len(names):
                    findings.append(Finding("error", "schema", hosts_file, name, "data.port_names",
                                            f"{len(names)} names, {len(set(names))} distinct, for the {hw.ports} "
                                            f"ports of hardware {data.hardware}: one name per port, none twice"))
                    continue
                hw = hw.model_copy(update={"port_name": None, "port_names": list(names)})
            hosts[name] = Host(name, mgmt, data, hw, ordinal, tier_of(fabric.shape, data.role) or 0)
    return fabric, hosts, findings


def _shape_findings(fabric: FabricFile, file: str) -> list[Finding]:
    """What the declared shape cannot have: roles and cabling rules of other shapes, a missing plan."""
    spec = SHAPES[fabric.shape]
    out: list[Finding] = []
    for role in sorted(fabric.roles):
        if role not in spec.tiers:
            out.append(Finding("error", "shape", file, "", f"roles.{role}",
                               f"shape {fabric.shape!r} ({spec.what}) has no role {role!r}; its roles: "
                               f"{', '.join(spec.tiers)}"))
    for i, rule in enumerate(fabric.cabling.rules):
        if rule.type not in spec.rules:
            out.append(Finding("error", "shape", file, "", f"cabling.rules.{i}.type",
                               f"shape {fabric.shape!r} ({spec.what}) has no {rule.type} links; its rules: "
                               f"{', '.join(spec.rules)}"))
            continue
        want = {"rail": (("server_role", 0), ("leaf_role", 1)), "leaf-spine": (("leaf_role", 1), ("spine_role", 2)),
                "spine-aggregation": (("spine_role", 2), ("aggregation_role", 3))}[rule.type]
        for key, tier in want:
            role = getattr(rule, key)
            if tier_of(fabric.shape, role) != tier:
                out.append(Finding("error", "shape", file, "", f"cabling.rules.{i}.{key}",
                                   f"{role!r} is not the {('server', 'leaf', 'spine', 'aggregation')[tier]} tier of "
                                   f"shape {fabric.shape!r} (that is {spec.tiers[tier]!r})"))
    if spec.zoned and fabric.plan is None:
        out.append(Finding("error", "shape", file, "", "plan",
                           "shape 'multi-zone' needs a plan: (zones, units_per_zone, rtsw_per_unit, ctsw_per_zone, "
                           "atsw): zones are numbered from their capacities, so adding one renumbers nothing"))
    if fabric.plan is not None and "ctsw" in spec.tiers and fabric.plan.ctsw_per_zone < 1:
        out.append(Finding("error", "shape", file, "", "plan.ctsw_per_zone",
                           f"shape {fabric.shape!r} has a CTSW tier: plan.ctsw_per_zone must be at least 1"))
    if fabric.policy.cross_zone != "lossless" and "atsw" not in spec.tiers:
        out.append(Finding("error", "shape", file, "", "policy.cross_zone",
                           f"shape {fabric.shape!r} has no aggregation tier: policy.cross_zone applies to "
                           "multi-zone sites only"))
    if fabric.policy.cross_zone == "lossy":
        # without PFC the aggregation tier relies on ECN alone to slow RoCE senders before queues drop
        for name, prof in sorted(fabric.roce_profiles.items()):
            if not prof.ecn.enabled:
                out.append(Finding("error", "shape", file, "", f"roce_profiles.{name}.ecn.enabled",
                                   "policy.cross_zone: lossy takes PFC off the aggregation tier: ECN must mark "
                                   "there, or nothing slows RoCE senders before the queues drop"))
    if fabric.plan is not None and "atsw" in spec.tiers and fabric.plan.atsw < 1:
        out.append(Finding("error", "shape", file, "", "plan.atsw",
                           "shape 'multi-zone' has an aggregation tier: plan.atsw must be at least 1"))
    if fabric.plan is not None and not spec.zoned and fabric.plan.zones != 1:
        out.append(Finding("error", "shape", file, "", "plan.zones",
                           f"shape {fabric.shape!r} has no zones: plan.zones must be 1 (or use shape: multi-zone)"))
    if spec.zoned and fabric.policy.cross_zone_oversubscription is None:
        out.append(Finding("error", "shape", file, "", "policy.cross_zone_oversubscription",
                           "shape 'multi-zone' needs the declared cross-zone oversubscription (CTSW bandwidth "
                           "toward its RTSWs / toward the ATSWs, e.g. 4.0 for 4:1)"))
    return out


def _place_problem(fabric: FabricFile, data: HostData, tier: int) -> tuple[str, str] | None:
    """(field, why) when a host's zone/unit/index does not fit its shape and the plan's capacities."""
    spec, plan = SHAPES[fabric.shape], fabric.plan
    top = len(spec.tiers) - 1
    if spec.zoned and tier < top and data.zone is None:
        return "data.zone", f"a {data.role} of a multi-zone site needs its 'zone'"
    if data.zone is not None and (not spec.zoned or tier == top):
        what = f"shape {fabric.shape!r} has no zones" if not spec.zoned else f"the {data.role} tier spans the zones"
        return "data.zone", f"{what}: remove data.zone"
    if plan is None:
        return None
    if data.zone is not None and data.zone > plan.zones:
        return "data.zone", f"zone {data.zone} is beyond plan.zones ({plan.zones})"
    if tier <= 1 and (data.su or 1) > plan.units_per_zone:
        return "data.su", f"su {data.su} is beyond plan.units_per_zone ({plan.units_per_zone})"
    limits = {1: ("plan.rtsw_per_unit", plan.rtsw_per_unit), 2: ("plan.ctsw_per_zone", plan.ctsw_per_zone),
              3: ("plan.atsw", plan.atsw)}
    if tier in limits and data.index > limits[tier][1]:
        return "data.index", f"{data.role} index {data.index} is beyond {limits[tier][0]} ({limits[tier][1]})"
    return None


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

    slots = Slots(fabric.plan)

    def by_zone(members: list[Host]) -> dict[int, list[Host]]:
        out: dict[int, list[Host]] = {}
        for m in members:
            out.setdefault(m.data.zone or 0, []).append(m)
        return out

    for i, rule in enumerate(fabric.cabling.rules):
        where = f"cabling.rules.{i}"
        speed = speed_to_mbps(rule.speed)
        if isinstance(rule, LeafSpineRule):
            spines_of, leaves_of_zone = by_zone(role_members(rule.spine_role)), by_zone(role_members(rule.leaf_role))
            for zone in sorted(set(spines_of) | set(leaves_of_zone)):
                spines, leaves = spines_of.get(zone, []), leaves_of_zone.get(zone, [])
                for spine in spines:
                    j = slots.spine_in_zone(spine.place)
                    short = sorted({lf.data.hardware for lf in leaves
                                    if lf.hw.uplinks is not None and lf.hw.uplinks.count is not None
                                    and j >= lf.hw.uplinks.count})
                    if short:
                        findings.append(Finding("warning", "ctsw-no-uplinks", file, spine.name,
                                                f"hardware.{short[0]}.uplinks.count",
                                                f"{spine.name} is {rule.spine_role} #{j + 1}; RTSWs of hardware "
                                                f"{', '.join(short)} have fewer uplinks, so they do not connect to it"))
                for leaf in leaves:
                    for spine in spines:
                        a_port = slot_port(leaf, "uplinks", slots.spine_in_zone(spine.place), where)
                        if a_port is None:
                            continue
                        b_port = slot_port(spine, "downlinks", slots.leaf_in_zone(leaf.place), where)
                        if b_port is None:
                            continue
                        links.append(RawLink(leaf.name, a_port, spine.name, b_port, speed, rule.cable_length_m, where))
        elif isinstance(rule, SpineAggregationRule):
            aggs = role_members(rule.aggregation_role)
            for spine in role_members(rule.spine_role):
                for agg in aggs:
                    a_port = slot_port(spine, "uplinks", slots.aggregation(agg.place), where)
                    if a_port is None:
                        continue
                    b_port = slot_port(agg, "downlinks", slots.spine(spine.place), where)
                    if b_port is None:
                        continue
                    links.append(RawLink(spine.name, a_port, agg.name, b_port, speed, rule.cable_length_m, where))
        elif isinstance(rule, RailRule):
            # grouped by unit once: a scan of every device per unit grows with the square of the site
            leaves_of: dict[tuple[int, int], dict[int, Host]] = {}
            for lf in role_members(rule.leaf_role):
                leaves_of.setdefault((lf.data.zone or 0, lf.data.su or 0), {})[lf.data.index] = lf
            servers_of: dict[tuple[int, int], list[Host]] = {}
            for s in role_members(rule.server_role):
                servers_of.setdefault((s.data.zone or 0, s.data.su or 0), []).append(s)
            per_leaf = rule.nics_per_leaf
            for unit in sorted(servers_of):
                unit_leaves = leaves_of.get(unit, {})
                for position, server in enumerate(servers_of[unit]):
                    if fabric.plan is not None:
                        position = server.data.index - 1
                    for nic in range(rail_count(server.hw)):
                        leaf_index = nic // per_leaf + 1
                        rail_leaf = unit_leaves.get(leaf_index)
                        if rail_leaf is None:
                            in_zone = f"zone {unit[0]} " if unit[0] else ""
                            findings.append(Finding("error", "cabling", file, server.name, where,
                                                    f"no {rule.leaf_role} with index {leaf_index} in {in_zone}su {unit[1]} "
                                                    f"for rail {nic + 1}"))
                            continue
                        a_port = slot_port(server, "downlinks", nic, where)
                        b_port = slot_port(rail_leaf, "downlinks", position * per_leaf + nic % per_leaf, where)
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
    made once and shared by both ends (and everything built from them). The text is inet_ntoa's, which is
    IPv4Address's (dotted decimal, no leading zeros), made in C."""
    base = int(pool.network_address) + 2 * n
    if not 0 <= base < 0xFFFFFFFF:
        raise ipaddress.AddressValueError(f"/31 #{n} of {pool} is not an IPv4 address")
    even, odd = socket.inet_ntoa(base.to_bytes(4, "big")), socket.inet_ntoa((base + 1).to_bytes(4, "big"))
    return (f"{even}/31", even, odd), (f"{odd}/31", odd, even)


class _Compiler:
    def __init__(self, source: SiteSource, fabric: FabricFile, hosts: dict[str, Host]) -> None:
        self.source, self.fabric, self.hosts = source, fabric, hosts
        self.findings: list[Finding] = []
        self.fabric_file = source.file(FABRIC)
        self.headrooms: dict[tuple[int, int, int, int], Headroom] = {}
        self.slots = Slots(fabric.plan)
        self._port_slots: dict[tuple[int, str], int | None] = {}
        self._nic_qos: dict[int, tuple[Roce, NicQos]] = {}      # id of a Roce -> (it, its NicQos)
        self._hardware: dict[str, HardwareFacts] = {}           # hardware model name -> its facts

    def nic_qos(self, roce: Roce) -> NicQos:
        """The NIC settings of a RoCE profile, built once per profile and shared by its NICs (immutable)."""
        found = self._nic_qos.get(id(roce))
        if found is None or found[0] is not roce:
            found = self._nic_qos[id(roce)] = (roce, nic_qos(self.fabric.nic, roce))
        return found[1]

    def slot_of(self, hw: Hardware, port: str) -> int | None:
        """hw.slot_of(port), parsed once per model and port (every port is asked for several times); keyed by
        the model object, which self.hosts keeps alive for the whole compile."""
        key = (id(hw), port)
        if key not in self._port_slots:
            self._port_slots[key] = hw.slot_of(port)
        return self._port_slots[key]

    def hardware_facts(self, host: Host) -> HardwareFacts:
        """The facts of the host's hardware model, built once per model and shared by its devices (immutable;
        the sku_dir's realpath is a few system calls per device otherwise)."""
        found = self._hardware.get(host.data.hardware)
        if found is None:
            found = self._hardware[host.data.hardware] = _hardware(host.hw, host.data.hardware,
                                                                   self.source.directory)
        return found

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
        """Leaves: an ASN each (asn.rtsw_base + slot). Spines share one ASN per zone (asn.ctsw + zone - 1) and
        the aggregation tier one ASN (asn.atsw), RFC 7938's scheme: a tier's shared ASN makes BGP's loop
        check refuse every path that would go down and up again (valley-free). Loopback: pool + slot + 1."""
        role, place, asns = host.data.role, host.place, self.fabric.asn
        if host.tier == 0:
            return None, None
        slot = {"rtsw": self.slots.leaf, "ctsw": self.slots.spine, "atsw": self.slots.aggregation}[role](place)
        shared = {"ctsw": asns.ctsw, "atsw": asns.atsw}
        asn: int | None
        if role in shared:
            base = shared[role]
            asn = None if base is None else base + ((host.data.zone or 1) - 1)
            if base is None:
                self.findings.append(Finding("error", "schema", self.fabric_file, host.name, f"asn.{role}",
                                             f"the {role} tier needs asn.{role}"))
        else:
            asn = asns.rtsw_base + slot
        if asn is not None and asn > MAX_ASN:
            self.findings.append(Finding("error", "asn-range", self.fabric_file, host.name, f"asn.{role}" if role in shared
                                         else "asn.rtsw_base",
                                         f"{role} #{slot + 1} would get ASN {asn}, above {MAX_ASN}: lower "
                                         f"asn.rtsw_base to at most {MAX_ASN - slot}"))
            asn = None
        pool = getattr(self.fabric.pools.loopback, role)
        if pool is None:
            self.findings.append(Finding("error", "schema", self.fabric_file, host.name, f"pools.loopback.{role}",
                                         f"the {role} tier needs a loopback pool pools.loopback.{role}"))
            return asn, None
        if slot + 1 >= pool.num_addresses:
            self.findings.append(Finding("error", "pool-exhausted", self.fabric_file, host.name,
                                         f"pools.loopback.{role}",
                                         f"pool {pool} has no address for {role} #{slot + 1}"))
            return asn, None
        return asn, f"{pool.network_address + slot + 1}/32"

    def host_block_prefixlen(self) -> int:
        """One block size for the whole site: the smallest power of two holding a /31 per downlink slot of
        every RTSW hardware model, so blocks of RTSWs with different port layouts cannot overlap."""
        capacity = 1
        for host in self.hosts.values():
            if host.tier == 1:
                block = host.hw.downlinks
                first = block.from_ if block else 0
                slots = block.count if block and block.count else host.hw.ports - first
                capacity = max(capacity, min(slots, host.hw.ports - first))
        return 32 - math.ceil(math.log2(2 * capacity))

    def zone_summary(self, zone: int) -> ipaddress.IPv4Network | None:
        """The one prefix holding every host block the plan gives zone `zone` (its CTSWs announce it)."""
        per_zone = self.slots.leaves_per_zone
        if not per_zone:
            return None
        size = 2 ** (32 - self.block_prefixlen)
        pool = self.fabric.pools.host_p2p
        prefixlen = self.block_prefixlen - (per_zone.bit_length() - 1)
        base = int(pool.network_address) + (zone - 1) * per_zone * size
        if prefixlen < pool.prefixlen or base + per_zone * size > int(pool.broadcast_address) + 1:
            return None
        return ipaddress.IPv4Network((base, prefixlen))

    def zone_summaries(self) -> list[str]:
        """Every zone's summary, in zone order: what the aggregation tier keeps of the zones' host blocks."""
        zones = sorted({h.data.zone for h in self.hosts.values() if h.tier == 2 and h.data.zone})
        return [str(s) for z in zones if (s := self.zone_summary(z)) is not None]

    def host_block(self, leaf: Host) -> ipaddress.IPv4Network | None:
        """The RTSW's block of host /31s: one /31 per downlink slot, so it can be summarized.

        Block n (RTSW ordinal n) of the site-wide block size; None (with a finding) when the pool has no
        such block.
        """
        prefixlen = self.block_prefixlen
        pool = self.fabric.pools.host_p2p
        size = 2 ** (32 - prefixlen)
        slot = self.slots.leaf(leaf.place)
        base = int(pool.network_address) + slot * size
        if prefixlen < pool.prefixlen or base + size > int(pool.broadcast_address) + 1:
            self.findings.append(Finding("error", "pool-exhausted", self.fabric_file, leaf.name, "pools.host_p2p",
                                         f"pool {pool} has no /{prefixlen} host block for rtsw #{slot + 1}"))
            return None
        return ipaddress.IPv4Network((base, prefixlen))

    def address_links(self, links: list[RawLink]) -> dict[tuple[str, str], tuple[str, str, str]]:
        """(device, port) -> (address/31, ip, peer ip). Upper tier (CTSW, RTSW toward hosts) gets the even address.

        Fabric /31s are numbered in (RTSW ordinal, port) order; a host /31 sits at its RTSW port's
        slot inside that RTSW's host block, so adding servers or RTSWs never renumbers others.
        """
        out: dict[tuple[str, str], tuple[str, str, str]] = {}
        fabric_n = 0

        def ends(lk: RawLink) -> tuple[tuple[str, str], tuple[str, str]]:
            lower = min((lk.a, lk.a_port), (lk.b, lk.b_port), key=lambda e: self.hosts[e[0]].tier)
            upper = (lk.b, lk.b_port) if lower == (lk.a, lk.a_port) else (lk.a, lk.a_port)
            return upper, lower

        def order(lk: RawLink) -> tuple[Any, ...]:
            upper, lower = ends(lk)
            lh, uh = self.hosts[lower[0]], self.hosts[upper[0]]
            return (lh.data.role, lh.ordinal, self.slot_of(lh.hw, lower[1]) or 0, uh.ordinal, upper, lower)

        def planned(upper: tuple[str, str], lower: tuple[str, str]) -> int:
            uh, lh = self.hosts[upper[0]], self.hosts[lower[0]]
            if lh.tier == 1:
                return self.slots.leaf_spine_p2p(lh.place, uh.place)
            return self.slots.spine_aggregation_p2p(lh.place, uh.place)

        fabric = sorted(order(lk) for lk in links if self.hosts[lk.a].tier and self.hosts[lk.b].tier)
        pool = self.fabric.pools.fabric_p2p
        if fabric and pool is None:
            self.findings.append(Finding("error", "schema", self.fabric_file, fabric[0][-2][0], "pools.fabric_p2p",
                                         "switch-to-switch links need the pool pools.fabric_p2p"))
            fabric = []
        for *_rest, upper, lower in fabric:
            assert pool is not None
            n = planned(upper, lower) if self.fabric.plan is not None else fabric_n
            if 2 * n + 1 >= pool.num_addresses:
                self.findings.append(Finding("error", "pool-exhausted", self.fabric_file, upper[0], "pools.fabric_p2p",
                                             f"pool {pool} has no /31 left for link #{n + 1}"))
                continue
            fabric_n += 1
            out[upper], out[lower] = _p31_ends(pool, n)
        for lk in links:
            upper, lower = ends(lk)
            if self.hosts[lower[0]].tier != 0:
                continue
            leaf = self.hosts[upper[0]]
            block = self.blocks.get(leaf.name)
            if block is None:
                continue
            slot = (self.slot_of(leaf.hw, upper[1]) or 0) - (leaf.hw.downlinks.from_ if leaf.hw.downlinks else 0)
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
                       if h.tier == 1}
        addressing = self.address_links(links)
        idents = {h.name: self.asn_and_loopback(h) for h in self.hosts.values()}
        roces = {n: _roce(n, p) for n, p in sorted(self.fabric.roce_profiles.items())}
        by_end: dict[str, list[End]] = {}
        for lk in links:
            by_end.setdefault(lk.a, []).append((lk.a_port, lk, lk.b, lk.b_port))
            by_end.setdefault(lk.b, []).append((lk.b_port, lk, lk.a, lk.a_port))
        devices: dict[str, DeviceIntent] = {}
        summaries = self.zone_summaries()
        for name in sorted(self.hosts):
            host = self.hosts[name]
            profile = self.profile_of(host)
            if profile not in roces:
                self.findings.append(Finding("error", "schema", self.fabric_file, name, "roce_profile",
                                             f"unknown RoCE profile {profile!r}"))
                continue
            roce = roces[profile]
            hw = host.hw
            # each end with its slot, in slot order (stable: ends of one slot keep their order)
            slotted = sorted(((self.slot_of(hw, e[0]) or 0, e) for e in by_end.get(name, [])), key=_first)
            asn, loopback = idents[name]
            if host.tier == 0:
                devices[name] = self._server(host, roce, [e for _, e in slotted], addressing)
                continue
            interfaces, peers = [], []
            # the same for every port of the switch
            mtu, fec, cell = self.mtu_of(host), hw.fec, hw.buffer_cell_bytes or 1
            lossless_prios = roce.lossless_priorities
            # a lossy aggregation tier: no PFC and no headroom on CTSW-ATSW links (ECN still marks)
            lossy_toward = ({2: 3, 3: 2}.get(host.tier) if self.fabric.policy.cross_zone == "lossy" else None)
            for slot, (port, lk, peer, peer_port) in slotted:
                found = addressing.get((name, port))
                if found is None:
                    continue
                address, ip, peer_ip = found
                peer_host = self.hosts[peer]
                role: Literal["fabric", "host"] = "host" if peer_host.tier == 0 else "fabric"
                lossy = peer_host.tier == lossy_toward
                headroom = None if lossy else self.headroom(lk.speed_mbps, lk.cable_length_m, mtu, cell)
                interfaces.append(_trusted(Interface,
                    name=port, role=role, peer_device=peer, peer_port=peer_port, speed_mbps=lk.speed_mbps,
                    cable_length_m=lk.cable_length_m, mtu=mtu, address=address, ip=ip, peer_ip=peer_ip,
                    description=f"{'P2P' if role == 'fabric' else 'GPU'}_{peer}_{peer_port}",
                    fec=fec, slot=slot,
                    lossless_priorities=[] if lossy else lossless_prios,
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
                      holdtime=bgp_cfg.holdtime, maximum_routes=bgp_cfg.maximum_routes, peers=sorted(peers, key=_ip_order))
            buffers = None
            if host.hw.buffer_cell_bytes is not None:
                shared_xoff = sum(i.headroom.xoff_bytes * len(roce.lossless_priorities) for i in interfaces if i.headroom)
                buffers = Buffers(cell_bytes=host.hw.buffer_cell_bytes, headroom_bytes=shared_xoff)
            summary = self.zone_summary(host.data.zone) if host.tier == 2 and host.data.zone else None
            devices[name] = DeviceIntent(
                name=name, site=self.fabric.site, role=host.data.role, tier=host.tier, zone=host.data.zone,
                rack=host.data.rack, power_kw=host.hw.power_kw or 0.0,
                zone_summary=str(summary) if summary else None,
                zone_summaries=summaries if host.tier == 3 else [],
                platform=host.hw.platform, mgmt_address=host.mgmt,
                mgmt_prefix=self.mgmt(host)[0], mgmt_gateway=self.mgmt(host)[1], mgmt_vrf=self.fabric.management.vrf,
                model=host.hw.model, hardware=self.hardware_facts(host), su=host.data.su, index=host.data.index,
                asn=asn, loopback=loopback, router_id=router_id, interfaces=interfaces, bgp=bgp, roce=roce,
                host_block=str(self.blocks[name]) if self.blocks.get(name) else None,
                buffers=buffers,
            )
        return FabricIntent(
            site=self.fabric.site, lab=self.fabric.lab, shape=self.fabric.shape, cross_zone=self.fabric.policy.cross_zone,
            devices=devices,
            fabric_file=self.fabric_file,
            power=PowerBudget(**self.fabric.power.model_dump()) if self.fabric.power else None,
            links=sorted((_link(lk, self.hosts) for lk in links), key=lambda lk: (lk.a_device, lk.a_port, lk.b_device)),
        )

    def _server(self, host: Host, roce: Roce, ends: list[End],
                addressing: dict[tuple[str, str], tuple[str, str, str]]) -> DeviceIntent:
        nics = []
        host_routes = self.host_routes
        first = host.hw.downlinks.from_ if host.hw.downlinks else 0     # rail r: the r-th compute NIC
        for port, lk, peer, peer_port in ends:
            if (host.name, port) not in addressing:
                continue
            address, ip, peer_ip = addressing[(host.name, port)]
            nics.append(_trusted(Nic,name=port, address=address, ip=ip, gateway=peer_ip, mtu=self.mtu_of(host),
                            rail=(self.slot_of(host.hw, port) or 0) - first + 1, peer_device=peer, peer_port=peer_port,
                            speed_mbps=lk.speed_mbps, lossless_priorities=roce.lossless_priorities, trust=roce.trust,
                            routes=[host_routes], qos=self.nic_qos(roce)))
        return DeviceIntent(name=host.name, site=self.fabric.site, role="gpu", zone=host.data.zone,
                            rack=host.data.rack, power_kw=host.hw.power_kw or 0.0,
                            platform=host.hw.platform,
                            mgmt_address=host.mgmt, mgmt_prefix=self.mgmt(host)[0],
                            mgmt_gateway=self.mgmt(host)[1], model=host.hw.model,
                            hardware=self.hardware_facts(host), su=host.data.su, index=host.data.index,
                            roce=roce, nics=nics, rails=_rail_ports(host.hw))


def _first(pair: tuple[int, Any]) -> int:
    return pair[0]


def _ip_order(peer: BgpPeer) -> tuple[int, ...]:
    """A peer's place in address order: compile writes canonical dotted quads, whose octets as numbers sort as
    the addresses do (cheaper than an IPv4Address per peer)."""
    return tuple(map(int, peer.address.split(".")))


def _rail_ports(hw: Hardware) -> list[str]:
    first = hw.downlinks.from_ if hw.downlinks else 0
    return [hw.port(first + k) for k in range(rail_count(hw))]


def _link(lk: RawLink, hosts: dict[str, Host]) -> Link:
    (a, ap), (b, bp) = sorted(lk.ends())
    role: Literal["fabric", "host"] = "host" if 0 in (hosts[a].tier, hosts[b].tier) else "fabric"
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
