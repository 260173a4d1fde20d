"""Preflight rules over a compiled fabric: each finding names the file, host and field."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING

from nr_run.intent.errors import Finding
from nr_run.intent.source import FABRIC, HOSTS

if TYPE_CHECKING:
    from nr_run.intent.models import FabricIntent
    from nr_run.intent.schema import FabricFile
    from nr_run.intent.source import SiteSource

# RoCEv2 with a 4096-byte RDMA MTU: IPv4 20 + UDP 8 + BTH 12 + RETH 16 + ICRC 4 bytes of headers.
ROCE_PATH_MTU = 4096
ROCE_HEADERS = 20 + 8 + 12 + 16 + 4
ROCE_MIN_MTU = ROCE_PATH_MTU + ROCE_HEADERS


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
    # the CTSW tier shares one ASN by design; any other reuse is an error
    asns = {n: d.asn for n, d in devices.items() if d.role == "rtsw"}
    asns["CTSW tier"] = fabric.asn.ctsw
    dupes("ASN", "duplicate-asn", asns, ff, "asn")

    ctsws = [d for d in devices.values() if d.role == "ctsw"]
    if len(ctsws) < fabric.policy.min_ctsw:
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

    for name, dev in sorted(devices.items()):
        mtus = [(i.name, i.mtu) for i in dev.interfaces] + [(n.name, n.mtu) for n in dev.nics]
        for port_name, mtu in mtus:
            if mtu < ROCE_MIN_MTU:
                out.append(Finding("error", "mtu-too-small", ff, name, f"roles.{dev.role}.mtu",
                                   f"{port_name} MTU {mtu} < {ROCE_MIN_MTU} (RoCE path MTU {ROCE_PATH_MTU} + "
                                   f"{ROCE_HEADERS} bytes of RoCEv2 headers)"))
        for nic in dev.nics:
            switch = devices.get(nic.peer_device)
            port = next((i for i in switch.interfaces if i.name == nic.peer_port), None) if switch else None
            if port and nic.mtu > port.mtu:
                out.append(Finding("error", "mtu-mismatch", ff, name, "roles.gpu.mtu",
                                   f"NIC {nic.name} MTU {nic.mtu} > {nic.peer_device}:{port.name} MTU {port.mtu}"))
        if dev.role == "rtsw":
            up = sum(i.speed_mbps for i in dev.interfaces if i.role == "fabric")
            down = sum(i.speed_mbps for i in dev.interfaces if i.role == "host")
            ratio = down / up if up else float("inf")
            if down and ratio > fabric.policy.max_oversubscription + 1e-9:
                out.append(Finding("error", "oversubscription", ff, name, "policy.max_oversubscription",
                                   f"host {down // 1000}G / uplink {up // 1000}G = {ratio:.2f}:1 exceeds "
                                   f"{fabric.policy.max_oversubscription}:1"))
            uplinks = sum(1 for i in dev.interfaces if i.role == "fabric")
            if dev.bgp and uplinks > dev.bgp.maximum_paths:
                out.append(Finding("error", "ecmp-width", ff, name, "bgp.maximum_paths",
                                   f"{uplinks} equal-cost uplinks but maximum-paths {dev.bgp.maximum_paths}"))

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
