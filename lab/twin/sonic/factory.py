"""A SONiC switch's factory day 0: what its HWSKU folder makes of an empty switch.

The HWSKU folders in device_data/ are sonic-buildimage's own files (SOURCE.txt in each), as the image ships
them under /usr/share/sonic/device/<platform>/<HWSKU>/. Day 0 is, in order:
  * DEVICE_METADATA and PORT (every port_config.ini row, admin down, MTU 9100), as `config-setup factory`
    writes them (buffer_model traditional and default_pfcwd_status disable: the image build's defaults,
    rules/config ENABLE_PFCWD_ON_START unset, so `pfcwd start_default` writes no PFC_WD);
  * `config qos reload`: the HWSKU's buffers.json.j2 and qos.json.j2 rendered with sonic-buildimage's
    buffers_config.j2/qos_config.j2 (templates/), giving CABLE_LENGTH, BUFFER_POOL/PROFILE, BUFFER_PG |0,
    BUFFER_QUEUE |0-2 |3-4 |5-6, the AZURE maps, PORT_QOS_MAP (pfc_enable 3,4), SCHEDULER, WRED and QUEUE;
  * buffermgrd (sonic-swss cfgmgr/buffermgr.cpp doSpeedUpdateTask): for each port with a cable length other
    than 0m and a pg_profile_lookup.ini row for its speed and cable, the profile pg_lossless_<speed>_<cable>_profile
    and BUFFER_PG <port>|<pfc_enable range>; no row, no PG (buffermgrd logs an error and programs nothing).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from importlib.abc import Traversable
from typing import Any

from jinja2 import BaseLoader, TemplateNotFound
from jinja2.sandbox import SandboxedEnvironment

DATA = "nr_run.lab.twin.sonic"


def _folder(hwsku: str) -> Traversable | None:
    if not hwsku or "/" in hwsku or hwsku.startswith("."):
        return None
    folder = resources.files(DATA).joinpath("device_data", hwsku)
    return folder if folder.is_dir() and folder.joinpath("port_config.ini").is_file() else None


def known() -> list[str]:
    root = resources.files(DATA).joinpath("device_data")
    return sorted(p.name for p in root.iterdir() if p.is_dir() and p.joinpath("port_config.ini").is_file())


class _Loader(BaseLoader):
    """The HWSKU folder first, then sonic-buildimage's build templates (as sonic-cfggen's search path)."""

    def __init__(self, folder: Traversable) -> None:
        self.dirs = (folder, resources.files(DATA).joinpath("device_data", "templates"))

    def names(self) -> set[str]:
        return {p.name for d in self.dirs for p in d.iterdir() if p.name.endswith(".j2")}

    def get_source(self, environment: Any, template: str) -> tuple[str, str, Any]:
        for d in self.dirs:
            item = d.joinpath(template)
            if "/" not in template and item.is_file():
                return item.read_text(encoding="utf-8"), template, lambda: True
        raise TemplateNotFound(template)


def _sort_by_port_index(value: Any) -> None:
    """sonic-cfggen's sort_by_port_index filter: sorts a list of EthernetN names in place by N."""
    if isinstance(value, list):
        value.sort(key=lambda name: int(name[8:]) if name[8:].isdigit() else 1 << 20)


def _render(folder: Traversable, template: str, ctx: dict[str, Any]) -> dict[str, Any]:
    loader = _Loader(folder)
    env = SandboxedEnvironment(loader=loader, trim_blocks=True, lstrip_blocks=True)
    names = loader.names()
    env.globals["template_exists"] = lambda name: name in names
    env.globals["is_smartswitch"] = lambda *args: False
    env.filters["sort_by_port_index"] = _sort_by_port_index
    doc = json.loads(env.get_template(template).render(ctx))
    return {t: {k: {f: str(v) for f, v in e.items()} for k, e in tbl.items()} for t, tbl in doc.items()}


def port_table(text: str) -> dict[str, dict[str, str]]:
    """PORT rows of a port_config.ini (columns named by its last `# name ...` comment)."""
    titles = ["name", "lanes", "alias", "index", "speed", "fec"]
    out: dict[str, dict[str, str]] = {}
    for raw in (line.strip() for line in text.splitlines()):
        if raw.startswith("#"):
            words = raw.lstrip("#").split()
            if words[:1] == ["name"]:
                titles = words
            continue
        if raw:
            cols = dict(zip(titles, raw.split(), strict=False))
            out[cols["name"]] = {"lanes": cols["lanes"], "alias": cols.get("alias", cols["name"]),
                                 "index": cols.get("index", str(len(out))), "speed": cols.get("speed", ""),
                                 **({"fec": cols["fec"]} if "fec" in cols else {})}
    return out


def _pg_lookup(text: str) -> dict[tuple[str, str], list[str]]:
    """pg_profile_lookup.ini as buffermgrd reads it: lines starting with '#' skipped."""
    rows = {}
    for line in text.splitlines():
        if line and not line.startswith("#") and line.split():
            cols = line.split()
            rows[(cols[0], cols[1])] = cols[2:]
    return rows


def _ranges(nums: list[int]) -> list[str]:
    """buffermgrd's generateIdListFromMap: runs of consecutive ids as "3-4", single ids as "3"."""
    out: list[str] = []
    run: list[int] = []
    for n in sorted(set(nums)):
        if run and n != run[-1] + 1:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
            run = []
        run.append(n)
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return out


def buffermgrd(db: dict[str, Any], lookup: dict[tuple[str, str], list[str]]) -> None:
    """The lossless PG profiles and BUFFER_PG entries traditional buffermgrd writes into CONFIG_DB."""
    cables = db.get("CABLE_LENGTH", {}).get("AZURE", {})
    pool_mode = db.get("BUFFER_POOL", {}).get("ingress_lossless_pool", {}).get("mode", "dynamic")
    for port, entry in db.get("PORT", {}).items():
        cable, pfc = cables.get(port), db.get("PORT_QOS_MAP", {}).get(port, {}).get("pfc_enable")
        row = lookup.get((entry.get("speed", ""), cable or ""))
        if not cable or cable == "0m" or not pfc or row is None:
            continue
        name = f"pg_lossless_{entry['speed']}_{cable}_profile"
        size, xon, xoff, threshold = row[:4]
        profile = {"pool": "ingress_lossless_pool", "xon": xon, "xoff": xoff, "size": size,
                   f"{pool_mode}_th": threshold}
        if len(row) > 4:
            profile["xon_offset"] = row[4]
        db.setdefault("BUFFER_PROFILE", {}).setdefault(name, profile)
        for pgs in _ranges([int(p) for p in pfc.split(",") if p.isdigit()]):
            db.setdefault("BUFFER_PG", {})[f"{port}|{pgs}"] = {"profile": name}


@lru_cache(maxsize=16)
def _day0(hwsku: str) -> str:
    folder = _folder(hwsku)
    if folder is None:
        return ""
    meta = json.loads(folder.joinpath("sku.json").read_text()) if folder.joinpath("sku.json").is_file() else {}
    ports = {name: {**row, "admin_status": "down", "mtu": "9100"}
             for name, row in port_table(folder.joinpath("port_config.ini").read_text()).items()}
    metadata = {"hwsku": hwsku, "platform": str(meta.get("platform", "")), "type": "LeafRouter",
                "buffer_model": "traditional", "default_pfcwd_status": "disable", "hostname": "sonic"}
    db: dict[str, Any] = {"DEVICE_METADATA": {"localhost": metadata}, "PORT": ports}
    ctx = {"DEVICE_METADATA": {"localhost": dict(metadata)}, "PORT": json.loads(json.dumps(ports))}
    for template in ("buffers.json.j2", "qos.json.j2"):
        if folder.joinpath(template).is_file():
            db.update(_render(folder, template, ctx))
    buffermgrd(db, _pg_lookup(folder.joinpath("pg_profile_lookup.ini").read_text()))
    return json.dumps(db, sort_keys=True)


def day0(hwsku: str) -> dict[str, Any] | None:
    """The factory CONFIG_DB tables of a HWSKU the twin has a folder for, else None (a fresh copy)."""
    text = _day0(hwsku)
    return json.loads(text) if text else None
