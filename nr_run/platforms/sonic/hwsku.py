"""SONiC hardware profiles: a HWSKU's port table (its port_config.ini rows) and its ASIC family.

The tables live in `hwsku/<HWSKU>.ini` (package data), copied row for row from sonic-buildimage with the
source path and commit in each file's header. A link is placed on the port of its front-panel slot; a
link below the port's speed breaks the port out, as SONiC's dynamic port breakout does: the port keeps
its name, alias and index and takes the first speed/port-speed share of its lanes (a 4-lane 400G port at
100G: one 100G lane), so lanes always follow the link speed, never the hardware entry alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

PACKAGE = "nr_run.platforms.sonic"


class HwskuError(ValueError):
    """The HWSKU table cannot carry the port or speed asked for."""


@dataclass(frozen=True)
class PortRow:
    name: str
    lanes: tuple[int, ...]
    alias: str
    index: str
    speed_mbps: int
    fec: str


@dataclass(frozen=True)
class HwskuProfile:
    hwsku: str
    platform: str
    asic: str                      # GCU's ASIC family name (th5, td2, spc4, ...)
    ports: tuple[PortRow, ...]

    def by_name(self, name: str) -> PortRow | None:
        return next((p for p in self.ports if p.name == name), None)


def _parse(hwsku: str, text: str) -> HwskuProfile:
    platform = asic = ""
    rows: list[PortRow] = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("# platform:"):
            fields = line.removeprefix("# platform:").split()
            platform = fields[0]
            if "asic:" in fields:
                asic = fields[fields.index("asic:") + 1]
            continue
        if not line or line.startswith("#"):
            continue
        name, lanes, alias, index, speed, fec = line.split()
        rows.append(PortRow(name, tuple(int(x) for x in lanes.split(",")), alias, index, int(speed), fec))
    return HwskuProfile(hwsku, platform, asic, tuple(rows))


@lru_cache(maxsize=16)
def profile(hwsku: str) -> HwskuProfile | None:
    """The profile of a HWSKU, or None when this plug-in has no table for it."""
    if not hwsku or "/" in hwsku or hwsku.startswith("."):
        return None
    try:
        text = resources.files(PACKAGE).joinpath("hwsku", f"{hwsku}.ini").read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return None
    return _parse(hwsku, text)


def known() -> list[str]:
    folder = resources.files(PACKAGE).joinpath("hwsku")
    return sorted(p.name.removesuffix(".ini") for p in folder.iterdir() if p.name.endswith(".ini"))


def port_entry(prof: HwskuProfile, name: str, speed_mbps: int) -> dict[str, str]:
    """PORT lanes, alias, index and speed of port `name` running at `speed_mbps` (HwskuError if it cannot)."""
    row = prof.by_name(name)
    if row is None:
        raise HwskuError(f"{name} is not a port of HWSKU {prof.hwsku}")
    if len(set(row.lanes)) != len(row.lanes):
        raise HwskuError(f"{name} of HWSKU {prof.hwsku} repeats a lane in its port_config.ini row")
    if speed_mbps > row.speed_mbps or row.speed_mbps % speed_mbps \
            or (len(row.lanes) * speed_mbps) % row.speed_mbps:
        raise HwskuError(f"{name} of HWSKU {prof.hwsku} ({row.speed_mbps // 1000}G over {len(row.lanes)} lanes) "
                         f"cannot run {speed_mbps // 1000}G")
    lanes = row.lanes[: len(row.lanes) * speed_mbps // row.speed_mbps]
    return {"lanes": ",".join(str(x) for x in lanes), "alias": row.alias, "index": row.index,
            "speed": str(speed_mbps)}
