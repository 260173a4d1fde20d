"""Generic Config Updater semantics over a CONFIG_DB document, with GCU's console text.

What a real switch's GCU refuses, in its order (sonic-utilities generic_updater.py PatchApplier.apply):
the field-operation validators on the running->target diff (gu_common.py validate_field_operation, rules in
gcu_rules.json transcribed from gcu_field_operation_validators.conf.json), then empty tables, then the YANG
models (the twin's own checker; an outside validator such as yanglint only when $NR_RUN_SONIC_YANG names it).
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonpatch
import jsonpointer

from nr_run.lab.twin.sonic.checker import check, empty_tables

PREFIX = "Patch Applier: "
VALIDATORS = "generic_config_updater.field_operation_validators"
FECS = ("rs", "fc", "none", "auto")
YANG_ENV = "NR_RUN_SONIC_YANG"


class GcuError(Exception):
    """A refused GCU operation; str() is the reason GCU prints."""


RELEASES = ("202305", "202311", "202405", "202411", "202505", "202511")


@lru_cache(maxsize=8)
def _rules(release: str = "master") -> dict[str, Any]:
    """The release branch's rules (gcu_rules_releases.json), master's (gcu_rules.json) otherwise."""
    if release in RELEASES:
        text = (Path(__file__).parent / "gcu_rules_releases.json").read_text(encoding="utf-8")
        return dict(json.loads(text)["releases"][release])
    return dict(json.loads((Path(__file__).parent / "gcu_rules.json").read_text(encoding="utf-8")))


def release_of(build: str) -> str:
    """The branch a build's GCU comes from: its YYYYMMDD date's newest branch at or before it, else master."""
    date = next((p for p in reversed(build.split(".")) if re.fullmatch(r"\d{8}", p)), None)
    if date is None or date[:6] > RELEASES[-1]:
        return "master"
    return next((r for r in reversed(RELEASES) if r <= date[:6]), RELEASES[0])


def asic_family(hwsku: str, asic_type: str = "vs", release: str = "master") -> str:
    """field_operation_validators.get_asic_name() for a virtual switch: both vendors' lists are searched."""
    sku, asics = hwsku.lower(), _rules(release)["asics"]
    if asic_type in ("mellanox", "vs"):
        for family, skus in asics["mellanox"].items():
            if sku in (s.lower() for s in skus):
                return str(family)
    if asic_type in ("broadcom", "vs"):
        for family, skus in asics["broadcom"].items():
            if any(s.lower() in sku for s in skus):
                return str(family)
    return "unknown"


def _rdma_ok(element: dict[str, Any], asic: str, branch: str | None, exact: bool, remove_port: bool,
             release: str) -> bool:
    if asic == "unknown":
        return False
    parts = jsonpointer.JsonPointer(element["path"]).parts
    rest = [p for p in parts[1:] if not (remove_port and any(ch.isdigit() for ch in p))]
    base = "/".join(rest).lower()
    value = element.get("value")
    fields = [f"{base}/{k}" if base else k for k in value] if isinstance(value, dict) else [base]
    for field in fields:
        scenario = next((s for s in _rules(release)["tables"][parts[0]]["scenarios"].values()
                         if any((field == g) if exact else (field.split("/")[-1] == g) for g in s["fields"])), None)
        if scenario is None or not scenario["platforms"].get(asic) or element["op"] not in scenario["operations"]:
            return False
        if branch is not None and branch < scenario["platforms"][asic]:
            return False
    return True


def _validator_ok(name: str, element: dict[str, Any], asic: str, branch: str | None, release: str) -> bool:
    if name == "rdma_config_update_validator":
        return _rdma_ok(element, asic, branch, exact=True, remove_port=True, release=release)
    if name == "wred_profile_config_update_validator":
        return _rdma_ok(element, asic, branch, exact=False, remove_port=False, release=release)
    if name == "buffer_profile_config_update_validator":
        if len(jsonpointer.JsonPointer(element["path"]).parts) == 2:
            return element["op"] in ("add", "remove", "replace")
        return _rdma_ok(element, asic, branch, exact=False, remove_port=False, release=release)
    if name == "port_config_update_validator":       # no STATE_DB supported lists on the twin: fec defaults
        if element["op"] == "remove":
            return True
        value = element.get("value")
        if element["path"].endswith("/fec"):
            return value in FECS
        if isinstance(value, dict):
            entries = [value] if "fec" in value else [v for v in value.values() if isinstance(v, dict)]
            return all(e.get("fec", "rs") in FECS for e in entries)
        return True
    return False


def validate_field_operations(running: dict[str, Any], target: dict[str, Any], build: str = "") -> None:
    """gu_common.ConfigWrapper.validate_field_operation: GcuError with GCU's message on the first refusal."""
    diff = jsonpatch.JsonPatch.from_diff(running, target).patch
    release = release_of(build)
    for path in _rules(release)["protected_removes"]:
        if any(op["op"] == "remove" and op["path"] == path for op in diff):
            raise GcuError(f"Given patch operation is invalid. Operation: remove is illegal on field: {path}")
    hwsku = running.get("DEVICE_METADATA", {}).get("localhost", {}).get("hwsku", "")   # sonic-cfggen -d
    asic = asic_family(hwsku, release=release)
    branch = next((p for p in reversed(build.split(".")) if re.fullmatch(r"\d{8}", p)), None)
    for element in diff:
        table = jsonpointer.JsonPointer(element["path"]).parts[0]
        for name in _rules(release)["tables"].get(table, {}).get("validators", []):
            if not _validator_ok(name, element, asic, branch, release):
                raise GcuError(f"Modification of {table} table is illegal- validating function "
                               f"{VALIDATORS}.{name} returned False")


def yang_validator() -> Path | None:
    """An outside YANG models checker, opt-in: the file $NR_RUN_SONIC_YANG names (a script taking a CONFIG_DB
    JSON path, exit 0 when valid, 2 when its tool is missing). Never searched for: the twin behaves the same
    wherever its tree sits, with its own checker unless told otherwise."""
    env = os.environ.get(YANG_ENV)
    return Path(env) if env and Path(env).is_file() else None


def yang_errors(target: dict[str, Any]) -> list[str]:
    """The YANG models' verdict on a full config (libyang's wording through yanglint); [] when valid."""
    validator = yang_validator()
    if validator is None:
        return check(target)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(target, fh)
        path = fh.name
    try:
        proc = subprocess.run([sys.executable, str(validator), path], capture_output=True, text=True, timeout=120)
    finally:
        os.unlink(path)
    if proc.returncode == 0:
        return []
    if proc.returncode == 2:                       # yanglint missing: the in-process checker still applies
        return check(target)
    return [ln for ln in proc.stdout.splitlines() if ln.startswith("ERROR")] or [proc.stdout.strip()]


def validate(target: dict[str, Any]) -> None:
    if empty := empty_tables(target):
        raise GcuError("given patch is not valid because it will result in empty tables "
                       f"which is not allowed in ConfigDb. Table{'s' if len(empty) > 1 else ''}: {', '.join(empty)}")
    if errs := check(target) or yang_errors(target):
        raise GcuError("Given patch will produce invalid config. Error: Data Loading Failed\n" + "\n".join(errs))


def simulate(running: dict[str, Any], patch_text: str, build: str = "") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The full config after the patch, or GcuError; nothing is changed."""
    try:
        ops = json.loads(patch_text)
        patch = jsonpatch.JsonPatch(ops)
        target = patch.apply(copy.deepcopy(running))
    except (ValueError, jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        raise GcuError(str(exc)) from exc
    validate_field_operations(running, target, build)
    validate(target)
    return target, ops




def changes(running: dict[str, Any], target: dict[str, Any]) -> list[dict[str, Any]]:
    """GCU reduces a patch to the minimal per-key changes between current and target."""
    return jsonpatch.make_patch(running, target).patch


def success_text(ops: list[dict[str, Any]], sorted_changes: list[dict[str, Any]], dry_run: bool) -> str:
    lines = ["** DRY RUN EXECUTION **"] if dry_run else []
    p = PREFIX + "localhost: "
    lines += [p + "Patch application starting.", p + f"Patch: {json.dumps(ops)}",
              PREFIX + "localhost getting current config db.",
              p + "simulating the target full config after applying the patch.",
              p + "validating all JsonPatch operations are permitted on the specified fields",
              p + "validating target config does not have empty tables, since they do not show up in ConfigDb.",
              p + "sorting patch updates.",
              PREFIX + f"The localhost patch was converted into {len(sorted_changes)} change"
              f"{'' if len(sorted_changes) == 1 else 's'}:"]
    lines += [p + f"  * {json.dumps([c])}" for c in sorted_changes]
    lines += [p + f"applying {len(sorted_changes)} change{'' if len(sorted_changes) == 1 else 's'} in order:"]
    lines += [p + f"  * {json.dumps([c])}" for c in sorted_changes]
    lines += [p + "verifying patch updates are reflected on ConfigDB.",
              PREFIX + "localhost patch application completed.", "Patch applied successfully."]
    return "\n".join(lines) + "\n"


def failure_text(what: str, reason: str) -> str:
    """stderr of a refused GCU command (exit code 2)."""
    if what == "apply patch":
        return (f"Failed to apply patch due to: Failed to apply patch on the following scopes:\n"
                f"- localhost: {reason}\nUsage: config apply-patch [OPTIONS] PATCH_FILE_PATH\n"
                f"Try \"config apply-patch -h\" for help.\n\nError: {reason}\n")
    return f"Failed to {what} due to: {reason}\nError: {reason}\n"


# ---------------------------------------------------------------- beyond GCU: drained applies
# `config reload -y FILE` (flush CONFIG_DB, load FILE, restart the services that read it), TSA/TSB/TSC
# (BGP traffic shift away/back, its state) and `sonic-db-cli` reads of APPL_DB, the layer the daemons fill
# from CONFIG_DB. The `appl_lag` fault delays that fill by its ms; `commit_rejected` refuses any apply that
# moves the switch away from its saved config (restoring the saved config still works).

# CONFIG_DB tables and the APPL_DB tables their daemons fill (buffermgrd, portmgrd/portsyncd)
APPL_TABLES = {"BUFFER_POOL": "BUFFER_POOL_TABLE", "BUFFER_PROFILE": "BUFFER_PROFILE_TABLE",
               "BUFFER_PG": "BUFFER_PG_TABLE", "BUFFER_QUEUE": "BUFFER_QUEUE_TABLE", "PORT": "PORT_TABLE"}


def rejected(dev: Any, target: dict[str, Any]) -> bool:
    """The commit_rejected fault: true for a change away from the saved (startup) config."""
    if not dev.fabric.faults.commit_rejected(dev.node.name):
        return False
    try:
        saved = json.loads(dev.files.get("/etc/sonic/config_db.json", "{}"))
    except ValueError:
        saved = {}
    return bool(target != saved)


def reload(dev: Any, path: str) -> tuple[int, str, str]:
    """`config reload -y FILE`: the whole CONFIG_DB replaced by FILE, no GCU validation (as on a switch)."""
    if path not in dev.files:
        return 2, "", f"Error: Invalid value for 'FILENAME': Path '{path}' does not exist.\n"
    try:
        target = json.loads(dev.files[path])
    except ValueError as exc:
        return 1, "", f"Failed to load {path}: {exc}\n"
    if not isinstance(target, dict):
        return 1, "", f"Failed to load {path}: not a config_db document\n"
    if rejected(dev, target):
        return 1, "", "Error: config reload failed: configuration rejected by the system\n"
    dev.set_running(target)
    return 0, (f"Disabling container monitoring ...\nStopping SONiC target ...\nRunning command: "
               f"/usr/local/bin/sonic-cfggen -j {path} --write-to-db\nRestarting SONiC target ...\n"
               "Enabling container monitoring ...\nReloading Monit configuration ...\n"), ""


def traffic_shift(dev: Any, command: str) -> tuple[int, str, str]:
    """TSA (isolate: BGP stops attracting transit traffic), TSB (back), TSC (show the state)."""
    shifted = bool(dev.traffic_shifted)
    if command == "TSC":
        return 0, f"System Mode: {'Maintenance' if shifted else 'Normal'}\n", ""
    if command == "TSA":
        dev.traffic_shifted = True
        return 0, ("System Mode: Normal -> Maintenance\n" if not shifted else "System Mode: Maintenance\n"), ""
    dev.traffic_shifted = False
    return 0, ("System Mode: Maintenance -> Normal\n" if shifted else "System Mode: Normal\n"), ""


def _appl_view(dev: Any) -> dict[str, Any]:
    """The CONFIG_DB the daemons have caught up with: the previous one until `appl_lag` ms have passed."""
    import time
    slow = sum(int(f.params["ms"]) for f in dev.fabric.faults.of("appl_lag", device=dev.node.name))
    if slow and time.time() - dev.appl_changed < slow / 1000:
        return dict(dev.appl_prev)
    return dict(dev.running)


def appl_db(dev: Any) -> dict[str, dict[str, str]]:
    """APPL_DB key -> fields, for the tables in APPL_TABLES ("BUFFER_PG_TABLE:Ethernet0:3")."""
    view = _appl_view(dev)
    out: dict[str, dict[str, str]] = {}
    for table, appl in APPL_TABLES.items():
        for key, fields in view.get(table, {}).items():
            if isinstance(fields, dict):
                out[f"{appl}:{key.replace('|', ':')}"] = dict(fields)
    return out


def db_cli(dev: Any, args: list[str]) -> tuple[int, str, str]:
    """`sonic-db-cli APPL_DB HGETALL KEY | HGET KEY FIELD | KEYS PATTERN` (redis-cli style output)."""
    import fnmatch
    if len(args) < 2:
        return 1, "", "usage: sonic-db-cli [-h] [-s] [-n NAMESPACE] db_or_op [cmd ...]\n"
    op, rest = args[1].upper(), args[2:]      # args[0] is APPL_DB: SonicDevice sends the other databases elsewhere
    data = appl_db(dev)
    if op == "KEYS" and rest:
        return 0, "".join(k + "\n" for k in sorted(data) if fnmatch.fnmatchcase(k, rest[0])), ""
    if op == "HGETALL" and rest:
        return 0, repr(dict(sorted(data.get(rest[0], {}).items()))) + "\n", ""
    if op == "HGET" and len(rest) > 1:
        value = data.get(rest[0], {}).get(rest[1])
        return 0, ("" if value is None else value + "\n"), ""
    return 1, "", f"(error) ERR unknown command '{args[1]}'\n"
