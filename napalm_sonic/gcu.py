"""What GCU (`config apply-patch`) will refuse on this switch, predicted before anything is sent.

The rules are sonic-utilities' own, per release branch (gcu_rules.json for master, gcu_rules_releases.json
for 202305..202511, each transcribed from that branch's gcu_field_operation_validators.conf.json with its
commit) and chosen by the release the switch reports (`show version`'s build date): GCU diffs the running config against the target (jsonpatch.from_diff), refuses a
removal of a protected path, then runs each table's field-operation validator on every element of that
diff. The RDMA validator maps the HWSKU to an ASIC family, refuses families and releases a scenario does not
list, and allows only the listed fields and operations; BUFFER_POOL lists none, so every pool change is
refused. A change GCU refuses must be applied another way (a drained `config reload`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import jsonpatch
import jsonpointer

VALIDATOR_MODULE = "generic_config_updater.field_operation_validators"
SUPPORTED_FECS = ("rs", "fc", "none", "auto")


RELEASES = ("202305", "202311", "202405", "202411", "202505", "202511")
MASTER = "master"
FIRST_AFTER_RELEASES = "202605"      # a build dated from here on runs rules newer than 202511's: master's


@lru_cache(maxsize=8)
def rules(release: str = MASTER) -> dict[str, Any]:
    """The GCU rules of a release branch (master's for "master" or a release nr-run has no rules for)."""
    if release in RELEASES:
        text = resources.files("napalm_sonic").joinpath("gcu_rules_releases.json").read_text(encoding="utf-8")
        return dict(json.loads(text)["releases"][release])
    return dict(json.loads(resources.files("napalm_sonic").joinpath("gcu_rules.json").read_text(encoding="utf-8")))


def release_of(build_version: str) -> str:
    """The release branch whose GCU a build runs: the newest branch at or before its YYYYMMDD date
    ("SONiC.20240510.12" -> "202405"); "master" for a build without a date (master images) or past 202511."""
    date = branch_of(build_version)
    if date is None or date[:6] >= FIRST_AFTER_RELEASES:
        return MASTER
    return next((r for r in reversed(RELEASES) if r <= date[:6]), RELEASES[0])


def asic_family(hwsku: str, asic_type: str = "vs", release: str = MASTER) -> str:
    """GCU's get_asic_name(): Mellanox lists match the HWSKU exactly, Broadcom lists as a substring; "vs"
    is looked up in both. "unknown" when no list has it (then every RDMA-validated change is refused)."""
    sku = hwsku.lower()
    asics = rules(release)["asics"]
    if asic_type in ("cisco-8000", "marvell-teralynx"):
        return asic_type
    if asic_type in ("mellanox", "vs"):
        for family, skus in asics["mellanox"].items():
            if sku in (s.lower() for s in skus):
                return str(family)
    if asic_type in ("broadcom", "vs"):
        for family, skus in asics["broadcom"].items():
            if any(s.lower() in sku for s in skus):
                return str(family)
    return "unknown"


def branch_of(build_version: str) -> str | None:
    """The release of a build ("SONiC.20240510.12" -> "20240510"); None for a build without one."""
    found = [part for part in build_version.split(".") if re.fullmatch(r"\d{8}", part)]
    return found[-1] if found else None


@dataclass(frozen=True)
class Refusal:
    table: str
    path: str
    op: str
    reason: str          # why, in terms an operator can act on
    message: str         # GCU's own error text


def _rdma(element: dict[str, Any], asic: str, branch: str | None, exact: bool, remove_port: bool,
          release: str = MASTER) -> str | None:
    """None if allowed, else the reason (field_operation_validators.rdma_config_update_validator_common)."""
    if asic == "unknown":
        return "HWSKU is in no ASIC family of GCU's table"
    parts = jsonpointer.JsonPointer(element["path"]).parts
    table, rest = parts[0], parts[1:]
    if remove_port:
        rest = [p for p in rest if not any(ch.isdigit() for ch in p)]
    base = "/".join(rest).lower()
    value = element.get("value")
    fields = ([f"{base}/{k}" if base else k for k in value] if isinstance(value, dict) else [base])
    scenarios = rules(release)["tables"][table]["scenarios"]
    for field in fields:
        def match(gcu_field: str, field: str = field) -> bool:
            return field == gcu_field if exact else field.split("/")[-1] == gcu_field
        scenario = next((s for s in scenarios.values() if any(match(g) for g in s["fields"])), None)
        if scenario is None:
            return f"field {field or '(whole table)'} is not changeable"
        if not scenario["platforms"].get(asic):
            return f"not allowed on ASIC family {asic}"
        if element["op"] not in scenario["operations"]:
            return f"operation {element['op']} not allowed on {field}"
        if branch is not None and branch < scenario["platforms"][asic]:
            return f"needs release {scenario['platforms'][asic]} or later on {asic}"
    return None


def _validator_reason(name: str, element: dict[str, Any], asic: str, branch: str | None,
                      release: str = MASTER) -> str | None:
    if name == "rdma_config_update_validator":
        return _rdma(element, asic, branch, exact=True, remove_port=True, release=release)
    if name == "wred_profile_config_update_validator":            # 202505: field names matched by their end
        return _rdma(element, asic, branch, exact=False, remove_port=False, release=release)
    if name == "buffer_profile_config_update_validator":
        if len(jsonpointer.JsonPointer(element["path"]).parts) == 2:      # a whole profile
            return None if element["op"] in ("add", "remove", "replace") else f"operation {element['op']}"
        return _rdma(element, asic, branch, exact=False, remove_port=False, release=release)
    if name == "port_config_update_validator":
        # speed/fec must be in STATE_DB's supported lists; without them only the default fec list applies
        return None if element["op"] == "remove" else _bad_fec(element)
    return f"unknown validator {name}"


def _bad_fec(element: dict[str, Any]) -> str | None:
    value = element.get("value")
    if element["path"].endswith("/fec"):
        fecs = [value]
    elif isinstance(value, dict):
        entries = [value] if "fec" in value else [v for v in value.values() if isinstance(v, dict)]
        fecs = [e["fec"] for e in entries if "fec" in e]
    else:
        fecs = []
    bad = [f for f in fecs if f not in SUPPORTED_FECS]
    return f"fec {bad[0]} is not supported" if bad else None


def hwsku_of(running: dict[str, Any], target: dict[str, Any]) -> str:
    """The switch's HWSKU as GCU reads it (the running CONFIG_DB), else the target's (a switch without one)."""
    meta = running.get("DEVICE_METADATA", {}).get("localhost", {}) or \
        target.get("DEVICE_METADATA", {}).get("localhost", {})
    return str(meta.get("hwsku", ""))


def refusals(running: dict[str, Any], target: dict[str, Any], hwsku: str, asic_type: str = "vs",
             build_version: str = "") -> list[Refusal]:
    """Every element of the running->target change that GCU would refuse, in GCU's diff order."""
    return _refusals(jsonpatch.JsonPatch.from_diff(running, target).patch, hwsku, asic_type, build_version)


def _refusals(diff: list[dict[str, Any]], hwsku: str, asic_type: str, build_version: str) -> list[Refusal]:
    out: list[Refusal] = []
    release = release_of(build_version)
    for element in diff:
        if element["op"] == "remove" and element["path"] in rules(release)["protected_removes"]:
            out.append(Refusal(element["path"].split("/")[1], element["path"], "remove", "protected path",
                               "Given patch operation is invalid. Operation: remove is illegal on field: "
                               f"{element['path']}"))
    asic = asic_family(hwsku, asic_type, release)
    branch = branch_of(build_version)
    for element in diff:
        table = jsonpointer.JsonPointer(element["path"]).parts[0]
        for name in rules(release)["tables"].get(table, {}).get("validators", []):
            reason = _validator_reason(name, element, asic, branch, release)
            if reason is not None:
                out.append(Refusal(table, element["path"], element["op"], reason,
                                   f"Modification of {table} table is illegal- validating function "
                                   f"{VALIDATOR_MODULE}.{name} returned False"))
    return out


# Tables GCU accepts but that a careful rollout still applies drained: QoS map updates are reported to fail
# on hardware (sonic-utilities PR #4219), and PORT lanes change the port's breakout (DPB), which flaps it.
DRAINED_TABLES = {
    "DSCP_TO_TC_MAP": "QoS map updates through GCU are reported to fail on hardware (sonic-utilities PR #4219)",
    "TC_TO_QUEUE_MAP": "QoS map updates through GCU are reported to fail on hardware (sonic-utilities PR #4219)",
    "TC_TO_PRIORITY_GROUP_MAP": "QoS map updates through GCU are reported to fail on hardware "
                                "(sonic-utilities PR #4219)",
    "MAP_PFC_PRIORITY_TO_QUEUE": "QoS map updates through GCU are reported to fail on hardware "
                                 "(sonic-utilities PR #4219)",
}


def apply_method(running: dict[str, Any], target: dict[str, Any], hwsku: str, asic_type: str = "vs",
                 build_version: str = "") -> tuple[str, str]:
    """("gcu", why) or ("drained apply", why) for the running->target change on this switch."""
    asic = asic_family(hwsku, asic_type, release_of(build_version))
    diff = jsonpatch.JsonPatch.from_diff(running, target).patch      # the costly step: once per decision
    found = _refusals(diff, hwsku, asic_type, build_version)
    if found:
        first = found[0]
        tables = sorted({r.table for r in found})
        return ("drained apply", f"GCU refuses {', '.join(tables)} on {hwsku or 'this HWSKU'} ({asic}): "
                                 f"{first.path} {first.op}: {first.reason}")
    changed = {element["path"].split("/")[1] for element in diff}
    for table in sorted(changed & set(DRAINED_TABLES)):
        return "drained apply", f"{table}: {DRAINED_TABLES[table]}"
    lanes = [k for k, v in target.get("PORT", {}).items()
             if isinstance(v, dict) and k in running.get("PORT", {}) and v.get("lanes") != running["PORT"][k].get("lanes")]
    if lanes:
        return "drained apply", f"PORT lanes change (port breakout) on {', '.join(sorted(lanes)[:3])}"
    if not changed:
        return "gcu", "no change"
    return "gcu", f"GCU may patch {', '.join(sorted(changed))} on {hwsku or 'this HWSKU'} ({asic})"
