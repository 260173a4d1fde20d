"""Generic Config Updater semantics over a CONFIG_DB document, with GCU's console text."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonpatch
import jsonpointer

from nr_run.lab.twin.sonic.checker import check, empty_tables

PREFIX = "Patch Applier: "
PROTECTED = ("/PFC_WD/GLOBAL", "/PFC_WD/GLOBAL/POLL_INTERVAL", "/LOOPBACK_INTERFACE/Loopback0")


class GcuError(Exception):
    """A refused GCU operation; str() is the reason GCU prints."""


def validate(target: dict[str, Any]) -> None:
    if empty := empty_tables(target):
        raise GcuError("given patch is not valid because it will result in empty tables "
                       f"which is not allowed in ConfigDb. Table{'s' if len(empty) > 1 else ''}: {', '.join(empty)}")
    if errs := check(target):
        raise GcuError("Given patch will produce invalid config. Error: Data Loading Failed\n" + "\n".join(errs))


def simulate(running: dict[str, Any], patch_text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The full config after the patch, or GcuError; nothing is changed."""
    try:
        ops = json.loads(patch_text)
        patch = jsonpatch.JsonPatch(ops)
        target = patch.apply(copy.deepcopy(running))
    except (ValueError, jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        raise GcuError(str(exc)) from exc
    for op in ops:
        if op.get("op") == "remove" and any(op.get("path") == p or p.startswith(op.get("path", "") + "/")
                                            for p in PROTECTED) and _exists(running, op["path"]):
            raise GcuError(f"Modification of {op['path'].split('/')[1]} table is illegal- "
                           f"removing {op['path']} is not allowed")
    validate(target)
    return target, ops


def _exists(doc: dict, path: str) -> bool:
    try:
        jsonpointer.resolve_pointer(doc, path)
        return True
    except jsonpointer.JsonPointerException:
        return False


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
