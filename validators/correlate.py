"""Failed findings grouped by probable cause, the consequences folded under it (pure, deterministic).

One downed link fails both ends' interface and LLDP checks, the BGP session over it, PFC agreement, the ECMP
width of every RTSW that routed over it and the RDMA pairs behind it: one cause. Causes, in the order they
take findings:
  device  a device that could not be read (unreachable, a section not collected) takes its own findings and
          every finding toward it (a dead CTSW: the far ends of its links, the narrower ECMP of its RTSWs)
  link    a cabled link (of the intent) with a failed physical-layer finding (checks tagged `l1`: interfaces,
          cabling) on either end takes every finding on either end's port (but those of checks that judge only
          the device's own configuration), the ECMP width of both ends' devices (fabric links), and the RDMA
          pairs and NIC findings behind a host link
  config  the remaining findings of one device and one check (`<device> <check>`): one configuration section
Sorted physical layer first (links), then devices, then configuration; within a layer by size, largest first.
Everything reads the findings' structured fields and the checks' tags, never their wording.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from nr_run.intent.models import FabricIntent, Link
from nr_run.validators.base import Finding, all_checks

LAYERS = ("physical", "device", "config")
UNREAD = ("unreachable", "not-collected")


@dataclass
class Cause:
    id: str
    kind: str                      # link | device | config
    layer: str                     # physical | device | config
    summary: str                   # what the operator reads first
    root: Finding                  # the finding that names the cause
    findings: list[Finding] = field(default_factory=list)     # root first, then the consequences

    @property
    def consequences(self) -> list[Finding]:
        return self.findings[1:]

    @property
    def devices(self) -> list[str]:
        return sorted({f.device for f in self.findings})

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "layer": self.layer, "summary": self.summary,
                "root": self.root.id, "hint": self.root.hint, "devices": self.devices,
                "findings": [f.id for f in self.findings]}


def _physical_checks() -> set[str]:
    return {name for name, cls in all_checks().items() if "l1" in cls.tags}


def _own_config_checks() -> set[str]:
    """Checks that judge only the device's own configuration: a link going down cannot cause their failures."""
    return {name for name, cls in all_checks().items() if cls.judges_own_config()}


def _link_key(link: Link) -> str:
    return f"link:{link.a_device}:{link.a_port}|{link.b_device}:{link.b_port}"


def _order(f: Finding) -> tuple[Any, ...]:
    return f.sort_key()


def _root_order(f: Finding) -> tuple[Any, ...]:
    return (f.check != "interfaces", f.sort_key())


def correlate(findings: list[Finding], fabric: FabricIntent | None) -> list[Cause]:
    """The failed findings as causes (every failed finding in exactly one cause)."""
    failed = sorted((f for f in findings if not f.passed), key=_order)
    if not failed:
        return []
    physical = _physical_checks()
    own_config = _own_config_checks()
    ends: dict[tuple[str, str], Link] = {}
    adjacent: dict[str, set[str]] = defaultdict(set)
    for lk in fabric.links if fabric is not None else []:
        ends[(lk.a_device, lk.a_port)] = lk
        ends[(lk.b_device, lk.b_port)] = lk
        adjacent[lk.a_device].add(lk.b_device)
        adjacent[lk.b_device].add(lk.a_device)
    # a host link's NIC end: RDMA pairs and NIC findings from either NIC fold under it
    taken: set[int] = set()
    causes: list[Cause] = []

    def take(cause: Cause, test: Any) -> None:
        for i, f in enumerate(failed):
            if i not in taken and test(f):
                taken.add(i)
                if f is not cause.root:
                    cause.findings.append(f)

    # devices that could not be read
    unread: dict[str, Finding] = {}
    for f in failed:
        if f.kind in UNREAD and f.device not in unread:
            unread[f.device] = f
    for device, root in sorted(unread.items()):
        cause = Cause(f"device:{device}", "device", "device", f"{device} could not be read: {root.observed}", root,
                      [root])
        taken.add(failed.index(root))
        near = adjacent.get(device, set())
        take(cause, lambda f, d=device, n=near: f.device == d or f.peer_device == d
             or (f.check == "ecmp" and f.device in n))
        causes.append(cause)
    # links with a physical-layer failure on an end; the root is the link state (interfaces) before LLDP
    roots: dict[str, Finding] = {}
    for i, f in enumerate(failed):
        if i in taken or f.check not in physical or not f.port:
            continue
        end = ends.get((f.device, f.port))
        if end is None:
            continue
        key = _link_key(end)
        if key not in roots or _root_order(f) < _root_order(roots[key]):
            roots[key] = f
    by_key = {_link_key(lk): lk for lk in ends.values()}
    for key in sorted(roots, key=lambda k: _order(roots[k])):
        lk, root = by_key[key], roots[key]
        if failed.index(root) in taken:
            continue
        a, b = (lk.a_device, lk.a_port), (lk.b_device, lk.b_port)
        link_devices = {lk.a_device, lk.b_device}
        cause = Cause(key, "link", "physical",
                      f"link {a[0]}:{a[1]} <-> {b[0]}:{b[1]}: {root.observed} on {root.device}:{root.port}",
                      root, [root])
        taken.add(failed.index(root))

        def on_link(f: Finding, a: tuple[str, str] = a, b: tuple[str, str] = b,
                    devices: set[str] = link_devices, fabric_link: bool = lk.role == "fabric") -> bool:
            if f.check in own_config:          # a configuration error stays its own cause
                return False
            here = (f.device, f.port)
            there = (f.peer_device, f.peer_port)
            if here in (a, b) or (f.port and there in (a, b)):
                return True
            return fabric_link and f.check == "ecmp" and (f.device in devices or f.peer_device in devices)

        take(cause, on_link)
        cause.findings[1:] = sorted(cause.findings[1:], key=lambda f: (f.check not in physical, _root_order(f)))
        causes.append(cause)
    # what is left: one configuration section (device, check) per cause
    groups: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for i, f in enumerate(failed):
        if i not in taken:
            groups[(f.device, f.check)].append(f)
    for (device, check), members in sorted(groups.items()):
        root = members[0]
        summary = (f"{device} {check}: {root.target}: {root.observed} (expected {root.expected})" if len(members) == 1
                   else f"{device} {check}: {len(members)} findings, first {root.target}: {root.observed}")
        causes.append(Cause(f"config:{device}:{check}", "config", "config", summary, root, list(members)))
    return sorted(causes, key=lambda c: (LAYERS.index(c.layer), -len(c.findings), _order(c.root)))


def cause_of(causes: list[Cause]) -> dict[str, str]:
    """Finding id -> the id of the cause it belongs to."""
    return {f.id: c.id for c in causes for f in c.findings}
