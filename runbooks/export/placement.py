"""Where each GPU server sits in the fabric, tier by tier: the data both scheduler exports are written from.

A rail-optimized unit's servers all reach each other in one hop on every rail, so a scheduler's leaf is the
scalable unit (its RTSWs, one per rail); above it the zone's CTSWs, above those the aggregation tier.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nr_run.intent.models import FabricIntent

_NUMBERED = re.compile(r"^(.*?)(\d+)$")


@dataclass
class Unit:
    name: str                             # "su1", "z2-su1"
    zone: int | None
    servers: list[str] = field(default_factory=list)
    rtsws: list[str] = field(default_factory=list)
    server_mbps: int = 0                  # one server's bandwidth into the unit (its rail NICs)
    uplink_mbps: int = 0                  # the unit's RTSWs toward the tier above


@dataclass
class Zone:
    name: str                             # "z1"
    number: int
    units: list[str] = field(default_factory=list)
    ctsws: list[str] = field(default_factory=list)
    uplink_mbps: int = 0                  # the zone's CTSWs toward the aggregation tier


@dataclass
class Placement:
    site: str
    shape: str
    units: dict[str, Unit]
    zones: dict[str, Zone]
    spines: list[str]                     # every CTSW (clos, multi-zone)
    aggregation: list[str]                # every ATSW (multi-zone)


def unit_name(zone: int | None, su: int | None) -> str:
    return (f"z{zone}-" if zone is not None else "") + f"su{su or 0}"


def placement(intent: FabricIntent) -> Placement:
    devs = intent.devices
    units: dict[str, Unit] = {}
    zones: dict[str, Zone] = {}
    for dev in sorted(devs.values(), key=lambda d: (d.zone or 0, d.su or 0, d.index, d.name)):
        if dev.tier == 0:
            unit = units.setdefault(unit_name(dev.zone, dev.su), Unit(unit_name(dev.zone, dev.su), dev.zone))
            unit.servers.append(dev.name)
            unit.server_mbps = max(unit.server_mbps, sum(n.speed_mbps for n in dev.nics))
        elif dev.tier == 1:
            unit = units.setdefault(unit_name(dev.zone, dev.su), Unit(unit_name(dev.zone, dev.su), dev.zone))
            unit.rtsws.append(dev.name)
            unit.uplink_mbps += sum(i.speed_mbps for i in dev.interfaces if i.role == "fabric")
        elif dev.tier == 2 and dev.zone is not None:
            zone = zones.setdefault(f"z{dev.zone}", Zone(f"z{dev.zone}", dev.zone))
            zone.ctsws.append(dev.name)
            zone.uplink_mbps += sum(i.speed_mbps for i in dev.interfaces
                                    if i.peer_device in devs and devs[i.peer_device].tier > 2)
    for unit in units.values():
        if unit.zone is not None:
            zones.setdefault(f"z{unit.zone}", Zone(f"z{unit.zone}", unit.zone)).units.append(unit.name)
    spines = sorted(d.name for d in devs.values() if d.tier == 2)
    aggregation = sorted(d.name for d in devs.values() if d.tier >= 3)
    return Placement(intent.site, intent.shape, dict(sorted(units.items())), dict(sorted(zones.items())),
                     spines, aggregation)


def collapse(names: list[str]) -> str:
    """Names as a Slurm hostlist expression: gpu1, gpu2, gpu3, gpu7 -> gpu[1-3,7] (number widths kept)."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in names:
        m = _NUMBERED.match(name)
        if m is None:
            plain.append(name)
            continue
        digits = m.group(2)
        width = len(digits) if digits.startswith("0") else 0
        groups.setdefault((m.group(1), width), []).append(int(digits))
    parts = list(plain)
    for (prefix, width), numbers in sorted(groups.items()):
        numbers = sorted(set(numbers))
        if len(numbers) == 1:
            parts.append(f"{prefix}{numbers[0]:0{width}d}" if width else f"{prefix}{numbers[0]}")
            continue
        runs: list[str] = []
        start = prev = numbers[0]
        ends: list[int | None] = [*numbers[1:], None]
        for n in ends:
            if n is not None and n == prev + 1:
                prev = n
                continue
            lo, hi = (f"{start:0{width}d}", f"{prev:0{width}d}") if width else (str(start), str(prev))
            runs.append(lo if start == prev else f"{lo}-{hi}")
            if n is not None:
                start = prev = n
        parts.append(f"{prefix}[{','.join(runs)}]")
    return ",".join(parts)
