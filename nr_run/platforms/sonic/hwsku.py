"""SONiC hardware SKUs: a HWSKU folder as sonic-buildimage ships it under device/<vendor>/<platform>/<HWSKU>/.

A folder holds the SKU's own files, unchanged: port_config.ini (the port table), pg_profile_lookup.ini (the
lossless PG profile per speed and cable length that buffermgrd programs), buffers_defaults_t1.j2 (pools and
fixed profiles), hwsku.json/platform.json (breakout modes), qos.json.j2, plus nr-run's sku.json (platform,
GCU ASIC family, first release) and SOURCE.txt (upstream path and commit of every file). The shipped folders
live in `sku/`; an operator adds an SKU with `hardware.<name>.sku_dir` (a folder of HWSKU folders), which is
searched first, so no package file is edited.

A link is placed on the port of its front-panel slot; a link below the port's speed breaks the port out, as
SONiC's dynamic port breakout does: the port keeps its name, alias and index and takes the first
speed/port-speed share of its lanes, so lanes always follow the link speed, never the hardware entry alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import Any

from jinja2 import DictLoader, TemplateError
from jinja2.sandbox import SandboxedEnvironment

PACKAGE = "nr_run.platforms.sonic"
REQUIRED = ("sku.json", "port_config.ini", "pg_profile_lookup.ini", "buffers_defaults_t1.j2")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
CABLE = re.compile(r"^(\d{1,5})m$")
MAX_FILE = 1 << 20


class HwskuError(ValueError):
    """The HWSKU folder is unusable, or its table cannot carry the port or speed asked for."""


@dataclass(frozen=True)
class PortRow:
    name: str
    lanes: tuple[int, ...]
    alias: str
    index: str
    speed_mbps: int
    fec: str


@dataclass(frozen=True)
class PgRow:
    """One row of pg_profile_lookup.ini, fields as buffermgrd reads them (strings, xon_offset may be "")."""

    speed_mbps: int
    cable: str
    size: str
    xon: str
    xoff: str
    threshold: str
    xon_offset: str

    @property
    def cable_m(self) -> int:
        return int(self.cable[:-1])


@dataclass(frozen=True)
class BreakoutParent:
    """A front-panel port of platform.json: its lanes, per-lane index and breakout modes (mode -> aliases)."""

    name: str
    lanes: tuple[int, ...]
    indexes: tuple[str, ...]
    modes: dict[str, tuple[str, ...]]


MODE = re.compile(r"^(\d+)x(\d+)G(?:\[([\dG,]*)\])?(?:\(\d+\))?$")


def mode_speeds(mode: str) -> tuple[int, tuple[int, ...]] | None:
    """(child count, child speeds in Mb/s: the mode's own first, then its bracketed alternatives) of a
    platform.json breakout mode such as "2x400G[200G,100G]"; None for a form nr-run does not read."""
    m = MODE.match(mode)
    if m is None:
        return None
    alternatives = [int(x.rstrip("G")) * 1000 for x in (m.group(3) or "").split(",") if x.rstrip("G").isdigit()]
    return int(m.group(1)), (int(m.group(2)) * 1000, *alternatives)


@dataclass(frozen=True)
class HwskuProfile:
    hwsku: str
    platform: str
    asic: str                      # GCU's ASIC family name (th5, td2, spc4, ...)
    ports: tuple[PortRow, ...]
    asic_type: str = "broadcom"    # broadcom, mellanox: which of GCU's lists and buffer conventions apply
    first_release: str = ""        # first release branch (YYYYMM) that has the SKU
    buffer_model: str = "traditional"
    pg_rows: tuple[PgRow, ...] = ()
    pools: dict[str, dict[str, str]] = field(default_factory=dict)          # BUFFER_POOL of buffers_defaults
    fixed_profiles: dict[str, dict[str, str]] = field(default_factory=dict)  # its BUFFER_PROFILE
    default_cable: str = ""        # buffers_defaults' default_cable (what a factory switch writes)
    breakout_modes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # platform.json, per parent port
    parents: tuple[BreakoutParent, ...] = ()                                  # platform.json's ports
    default_breakout: dict[str, str] = field(default_factory=dict)            # hwsku.json default_brkout_mode
    source: str = ""               # where the folder was read from
    # answers derived from the fields above (port rows by name, parents, breakout modes, PORT entries): a site
    # asks the same few questions of one SKU for every port of every switch
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def by_name(self, name: str) -> PortRow | None:
        rows = self.memo.get("rows")
        if rows is None:
            rows = self.memo["rows"] = {}
            for p in self.ports:
                rows.setdefault(p.name, p)       # the first row of a name, as a scan in order finds it
        found: PortRow | None = rows.get(name)
        return found

    def pg_row(self, speed_mbps: int, cable_length_m: int) -> PgRow | None:
        """The table row buffermgrd would look up for a cable of `cable_length_m`: the shortest row at the
        port's speed that is at least that long (a length between rows rounds up), None when none is."""
        key = ("pg_row", speed_mbps, cable_length_m)
        if key not in self.memo:
            rows = sorted((r for r in self.pg_rows if r.speed_mbps == speed_mbps), key=lambda r: r.cable_m)
            self.memo[key] = next((r for r in rows if r.cable_m >= cable_length_m), None)
        found: PgRow | None = self.memo[key]
        return found

    def speeds(self) -> list[int]:
        return sorted({r.speed_mbps for r in self.pg_rows})

    def parent_of(self, port: str) -> BreakoutParent | None:
        """The platform.json port whose lanes `port` (EthernetN) lies in: N within its lane count."""
        key = ("parent", port)
        if key not in self.memo:
            self.memo[key] = self._parent_of(port)
        found: BreakoutParent | None = self.memo[key]
        return found

    def _parent_of(self, port: str) -> BreakoutParent | None:
        number = int(port.removeprefix("Ethernet")) if port.removeprefix("Ethernet").isdigit() else -1
        for parent in self.parents:
            base = int(parent.name.removeprefix("Ethernet"))
            if base <= number < base + len(parent.lanes):
                return parent
        return None


def _read(folder: Traversable, name: str) -> str:
    item = folder.joinpath(name)
    if not item.is_file():
        raise HwskuError(f"{name} is missing")
    text = item.read_bytes()
    if len(text) > MAX_FILE:
        raise HwskuError(f"{name} is larger than {MAX_FILE} bytes")
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HwskuError(f"{name} is not UTF-8 text") from exc


def parse_port_config(text: str) -> tuple[PortRow, ...]:
    """port_config.ini rows; the last `# name ...` comment names the columns (index and fec may be absent,
    as in sonic-vs's Force10-S6000: then index is the row's position and fec is empty)."""
    titles = ["name", "lanes", "alias", "index", "speed", "fec"]
    rows: list[PortRow] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("#"):
            words = line.lstrip("#").split()
            if words[:1] == ["name"]:
                titles = words
            continue
        if not line:
            continue
        cols = dict(zip(titles, line.split(), strict=False))
        try:
            lanes = tuple(int(x) for x in cols["lanes"].split(","))
            speed = int(cols.get("speed", "0"))
        except (KeyError, ValueError) as exc:
            raise HwskuError(f"port_config.ini line {n}: cannot read {line!r}") from exc
        if not re.fullmatch(r"Ethernet\d{1,4}", cols.get("name", "")):
            raise HwskuError(f"port_config.ini line {n}: port name {cols.get('name')!r} is not EthernetN")
        rows.append(PortRow(cols["name"], lanes, cols.get("alias", cols["name"]),
                            cols.get("index", str(len(rows))), speed, cols.get("fec", "")))
    if not rows:
        raise HwskuError("port_config.ini has no port")
    return tuple(rows)


def parse_pg_lookup(text: str) -> tuple[PgRow, ...]:
    """pg_profile_lookup.ini as buffermgrd's readPgProfileLookupFile reads it: a line starting with '#' is
    skipped; columns speed, cable, size, xon, xoff, threshold and an optional xon_offset."""
    rows: list[PgRow] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#") or not line.strip():
            continue
        cols = line.split()
        ok = len(cols) in (6, 7) and cols[0].isdigit() and CABLE.match(cols[1]) \
            and all(c.lstrip("-").isdigit() for c in cols[2:])
        if not ok:
            raise HwskuError(f"pg_profile_lookup.ini line {n}: cannot read {line.strip()!r}")
        rows.append(PgRow(int(cols[0]), cols[1], cols[2], cols[3], cols[4], cols[5],
                          cols[6] if len(cols) == 7 else ""))
    if not rows:
        raise HwskuError("pg_profile_lookup.ini has no row")
    return tuple(rows)


def _j2_sources(folder: Traversable) -> dict[str, str]:
    return {item.name: _read(folder, item.name) for item in folder.iterdir() if item.name.endswith(".j2")}


def parse_buffer_defaults(folder: Traversable, topology: str = "t1") -> tuple[dict[str, Any], dict[str, Any], str]:
    """BUFFER_POOL, BUFFER_PROFILE and default_cable of buffers_defaults_<topology>.j2, rendered in a sandbox
    the way buffers_config.j2 calls it (its pool-and-profile macro, no inactive ports)."""
    env = SandboxedEnvironment(loader=DictLoader(_j2_sources(folder)), autoescape=False)
    name = f"buffers_defaults_{topology}.j2"
    try:
        module = env.get_template(name).make_module()
        macro = getattr(module, "generate_buffer_pool_and_profiles", None)
        if macro is not None:
            body = str(macro())
        else:
            macro = getattr(module, "generate_buffer_pool_and_profiles_with_inactive_ports", None)
            if macro is None:
                raise HwskuError(f"{name} defines no generate_buffer_pool_and_profiles macro")
            body = str(macro(""))
        cable = str(getattr(module, "default_cable", "") or "")
    except TemplateError as exc:
        raise HwskuError(f"{name}: {exc}") from exc
    try:
        doc = json.loads("{" + body.strip().rstrip(",") + "}")
    except ValueError as exc:
        raise HwskuError(f"{name}: its pools and profiles are not JSON ({exc})") from exc
    pools, profiles = doc.get("BUFFER_POOL"), doc.get("BUFFER_PROFILE")
    if not isinstance(pools, dict) or "ingress_lossless_pool" not in pools or not isinstance(profiles, dict):
        raise HwskuError(f"{name} has no BUFFER_POOL ingress_lossless_pool or no BUFFER_PROFILE")
    strs = {t: {k: {f: str(v) for f, v in e.items()} for k, e in tbl.items()} for t, tbl in doc.items()}
    return strs["BUFFER_POOL"], strs["BUFFER_PROFILE"], cable


def _breakouts(folder: Traversable) -> tuple[dict[str, tuple[str, ...]], dict[str, str], tuple[BreakoutParent, ...]]:
    modes: dict[str, tuple[str, ...]] = {}
    default: dict[str, str] = {}
    parents: list[BreakoutParent] = []
    if folder.joinpath("platform.json").is_file():
        doc = json.loads(_read(folder, "platform.json"))
        for port, entry in (doc.get("interfaces") or {}).items():
            if isinstance(entry, dict) and isinstance(entry.get("breakout_modes"), dict):
                modes[port] = tuple(entry["breakout_modes"])
                try:
                    parents.append(BreakoutParent(
                        port, tuple(int(x) for x in str(entry["lanes"]).split(",")),
                        tuple(str(entry.get("index", "")).split(",")),
                        {m: tuple(str(a) for a in aliases) for m, aliases in entry["breakout_modes"].items()}))
                except (KeyError, ValueError) as exc:
                    raise HwskuError(f"platform.json port {port}: cannot read its lanes ({exc})") from exc
    if folder.joinpath("hwsku.json").is_file():
        doc = json.loads(_read(folder, "hwsku.json"))
        for port, entry in (doc.get("interfaces") or {}).items():
            if isinstance(entry, dict) and "default_brkout_mode" in entry:
                default[port] = str(entry["default_brkout_mode"])
    return modes, default, tuple(parents)


def load(folder: Traversable, hwsku: str) -> HwskuProfile:
    """Read and check one HWSKU folder (HwskuError naming the file and what is wrong)."""
    for name in REQUIRED:
        if not folder.joinpath(name).is_file():
            raise HwskuError(f"HWSKU folder {folder} has no {name}")
    try:
        meta = json.loads(_read(folder, "sku.json"))
    except ValueError as exc:
        raise HwskuError(f"{folder}/sku.json is not JSON ({exc})") from exc
    if not isinstance(meta, dict) or meta.get("hwsku") != hwsku:
        raise HwskuError(f"{folder}/sku.json does not name HWSKU {hwsku}")
    try:
        ports = parse_port_config(_read(folder, "port_config.ini"))
        pg_rows = parse_pg_lookup(_read(folder, "pg_profile_lookup.ini"))
        pools, profiles, cable = parse_buffer_defaults(folder, str(meta.get("topology", "t1")))
        modes, default, parents = _breakouts(folder)
    except (HwskuError, ValueError) as exc:
        raise HwskuError(f"HWSKU folder {folder}: {exc}") from exc
    return HwskuProfile(
        hwsku=hwsku, platform=str(meta.get("platform", "")), asic=str(meta.get("asic", "")), ports=ports,
        asic_type=str(meta.get("asic_type", "broadcom")), first_release=str(meta.get("first_release", "")),
        buffer_model=str(meta.get("buffer_model", "traditional")), pg_rows=pg_rows, pools=pools,
        fixed_profiles=profiles, default_cable=cable, breakout_modes=modes, default_breakout=default,
        parents=parents, source=str(folder))


def _packaged() -> Traversable:
    return resources.files(PACKAGE).joinpath("sku")


@lru_cache(maxsize=64)
def _profile(hwsku: str, dirs: tuple[str, ...]) -> HwskuProfile | None:
    for d in dirs:
        folder = Path(d) / hwsku
        if folder.is_dir():
            return load(folder, hwsku)
    shipped = _packaged().joinpath(hwsku)
    return load(shipped, hwsku) if shipped.is_dir() else None


def profile(hwsku: str, dirs: Iterable[str] = ()) -> HwskuProfile | None:
    """The profile of a HWSKU (the user's folders first, then the shipped ones), None when no folder has it;
    HwskuError when its folder is unusable."""
    if not hwsku or not NAME.match(hwsku):
        return None
    return _profile(hwsku, tuple(d for d in dirs if d))


def known(dirs: Iterable[str] = ()) -> list[str]:
    names = {p.name for p in _packaged().iterdir() if p.is_dir() and NAME.match(p.name)}
    for d in dirs:
        if d and Path(d).is_dir():
            names |= {p.name for p in Path(d).iterdir() if p.is_dir() and NAME.match(p.name)}
    return sorted(names)


def children(parent: BreakoutParent, mode: str) -> dict[str, dict[str, str]]:
    """The ports a breakout mode makes of a parent, as SONiC's portconfig derives them from platform.json:
    N children with an equal share of its lanes, child i named Ethernet<parent + i x lanes per child>, with
    the mode's i-th alias, the index of its first lane and the mode's speed."""
    parsed = mode_speeds(mode)
    if parsed is None or mode not in parent.modes:
        raise HwskuError(f"{parent.name}: breakout mode {mode!r} is not one of platform.json's")
    count, speeds = parsed
    if count < 1 or len(parent.lanes) % count or len(parent.modes[mode]) != count:
        raise HwskuError(f"{parent.name}: breakout mode {mode} does not split its {len(parent.lanes)} lanes")
    share = len(parent.lanes) // count
    base = int(parent.name.removeprefix("Ethernet"))
    out = {}
    for i in range(count):
        lanes = parent.lanes[i * share:(i + 1) * share]
        index = parent.indexes[i * share] if len(parent.indexes) == len(parent.lanes) else parent.indexes[0]
        out[f"Ethernet{base + i * share}"] = {"lanes": ",".join(str(x) for x in lanes),
                                              "alias": parent.modes[mode][i], "index": index,
                                              "speed": str(speeds[0])}
    return out


def breakout_mode(prof: HwskuProfile, port: str, speed_mbps: int) -> str | None:
    """The breakout mode of `port`'s parent that has a child `port` able to run `speed_mbps` (its own speed or
    a bracketed alternative): the HWSKU's default mode when it can, else the one with the fewest children."""
    key = ("mode", port, speed_mbps)
    if key not in prof.memo:
        prof.memo[key] = _breakout_mode(prof, port, speed_mbps)
    found: str | None = prof.memo[key]
    return found


def _breakout_mode(prof: HwskuProfile, port: str, speed_mbps: int) -> str | None:
    parent = prof.parent_of(port)
    if parent is None:
        return None
    fits = []
    for mode in parent.modes:
        parsed = mode_speeds(mode)
        if parsed is None or speed_mbps not in parsed[1]:
            continue
        try:
            if port in children(parent, mode):
                fits.append((mode != prof.default_breakout.get(parent.name), parsed[0], mode))
        except HwskuError:
            continue
    return min(fits)[2] if fits else None


def port_entry(prof: HwskuProfile, name: str, speed_mbps: int) -> dict[str, str]:
    """PORT lanes, alias, index and speed of port `name` running at `speed_mbps` (HwskuError if it cannot).

    A port whose port_config.ini row runs the speed is that row. Otherwise, where platform.json describes
    the port's parent, the port is the child of the breakout mode that runs the speed (breakout_mode), with
    that mode's lanes and alias; without platform.json the port takes the first share of its row's lanes."""
    key = ("entry", name, speed_mbps)
    found = prof.memo.get(key)
    if found is None:
        found = prof.memo[key] = _port_entry(prof, name, speed_mbps)     # a refusal raises and is not kept
    return dict(found)


def _port_entry(prof: HwskuProfile, name: str, speed_mbps: int) -> dict[str, str]:
    row = prof.by_name(name)
    if row is not None and row.speed_mbps == speed_mbps and len(set(row.lanes)) == len(row.lanes):
        return {"lanes": ",".join(str(x) for x in row.lanes), "alias": row.alias, "index": row.index,
                "speed": str(speed_mbps)}
    parent = prof.parent_of(name)
    if parent is not None and prof.parents:
        mode = breakout_mode(prof, name, speed_mbps)
        if mode is None:
            raise HwskuError(f"{name} of HWSKU {prof.hwsku}: no breakout mode of {parent.name} in platform.json "
                             f"({', '.join(parent.modes)}) has {name} at {speed_mbps // 1000}G")
        entry = children(parent, mode)[name]
        return {**entry, "speed": str(speed_mbps)}
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
