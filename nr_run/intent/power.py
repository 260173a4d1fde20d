"""Power and space preflight: no rack draws more than power.rack_kw, no zone (the site, outside multi-zone) has
more racks than power.racks_per_zone or draws more than power.zone_kw. Racks are bounded by power and cooling
before ports: a hotter GPU generation fits fewer servers per rack and fewer racks per zone."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from nr_run.intent.errors import Finding
from nr_run.intent.models import FabricIntent


@dataclass
class Usage:
    """What one rack or zone draws and holds."""

    kw: float = 0.0
    devices: list[str] = field(default_factory=list)
    racks: set[str] = field(default_factory=set)
    zones: set[int | None] = field(default_factory=set)


def zone_label(zone: int | None) -> str:
    return f"zone {zone}" if zone is not None else "the site"


def usage(intent: FabricIntent) -> tuple[dict[str, Usage], dict[int | None, Usage]]:
    """Per rack and per zone (None: the site, or devices of no zone such as ATSWs): kW, devices, racks."""
    racks: dict[str, Usage] = defaultdict(Usage)
    zones: dict[int | None, Usage] = defaultdict(Usage)
    for name, dev in sorted(intent.devices.items()):
        zone = zones[dev.zone]
        zone.kw += dev.power_kw
        zone.devices.append(name)
        if dev.rack is not None:
            rack = racks[dev.rack]
            rack.kw += dev.power_kw
            rack.devices.append(name)
            rack.zones.add(dev.zone)
            zone.racks.add(dev.rack)
    return dict(racks), dict(zones)


def check_power(intent: FabricIntent, ff: str, hf: str, hardware_without_power: list[str]) -> list[Finding]:
    budget = intent.power
    if budget is None:
        return []
    out = [Finding("error", "power", ff, "", f"hardware.{hw}.power_kw",
                   f"power: is declared but hardware {hw!r} has no power_kw (a device without a draw would hide "
                   "in every budget)") for hw in hardware_without_power]
    racks, zones = usage(intent)
    for rack, use in sorted(racks.items()):
        if len(use.zones) > 1:
            out.append(Finding("error", "power", hf, use.devices[0], "data.rack",
                               f"rack {rack} holds devices of {', '.join(zone_label(z) for z in sorted(use.zones, key=str))}: "
                               "a rack belongs to one zone"))
        if use.kw > budget.rack_kw + 1e-9:
            out.append(Finding("error", "power", ff, use.devices[0], "power.rack_kw",
                               f"rack {rack} draws {use.kw:g} kW ({len(use.devices)} devices: {', '.join(use.devices[:4])}"
                               f"{', ...' if len(use.devices) > 4 else ''}), above power.rack_kw {budget.rack_kw:g} kW"))
    for zone, use in sorted(zones.items(), key=lambda z: (z[0] is None, z[0] or 0)):
        if zone is None and intent.shape == "multi-zone":
            continue          # the aggregation tier belongs to no zone's budget
        if budget.racks_per_zone is not None and len(use.racks) > budget.racks_per_zone:
            out.append(Finding("error", "power", ff, "", "power.racks_per_zone",
                               f"{zone_label(zone)} has {len(use.racks)} racks, above power.racks_per_zone "
                               f"{budget.racks_per_zone}"))
        if budget.zone_kw is not None and use.kw > budget.zone_kw + 1e-9:
            out.append(Finding("error", "power", ff, "", "power.zone_kw",
                               f"{zone_label(zone)} draws {use.kw:g} kW, above power.zone_kw {budget.zone_kw:g} kW"))
    return out
