"""Pure CONFIG_DB document helpers: merge, GCU patch generation and a readable diff.

A config_db document is ``{TABLE: {KEY: {field: value}}}`` (DEVICE_METADATA, PORT, BGP_NEIGHBOR, ...).
Everything here is deterministic (sorted tables, keys and fields) so diffs and patches are stable.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import jsonpatch
from jsonpointer import escape

ConfigDb = dict[str, dict[str, Any]]

# bgpcfgd applies only admin_status changes to an existing neighbor ("Can't update the peer");
# any other field change must be a delete followed by an add in a separate GCU transaction.
BGP_NEIGHBOR_TABLES = ("BGP_NEIGHBOR", "BGP_INTERNAL_NEIGHBOR", "BGP_MONITORS", "BGP_VOQ_CHASSIS_NEIGHBOR")
BGP_UPDATABLE_FIELDS = frozenset({"admin_status"})

# Keys SONiC's show/cfggen add to the running config that are not CONFIG_DB tables.
NON_TABLE_KEYS = ("bgpraw",)


def normalize(doc: dict[str, Any]) -> ConfigDb:
    """Drop non-table keys and make every field value a string, as CONFIG_DB stores them."""
    out: ConfigDb = {}
    for table, entries in doc.items():
        if table in NON_TABLE_KEYS or not isinstance(entries, dict):
            continue
        out[table] = {}
        for key, fields in entries.items():
            if isinstance(fields, dict):
                out[table][key] = {f: _as_str(v) for f, v in fields.items()}
            else:
                out[table][key] = fields
    return out


def _as_str(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value


# Tables keyed "<port>|<index or range>" (sonic-buffer-pg.yang, sonic-buffer-queue.yang, sonic-queue.yang): a
# factory switch has "Ethernet0|3-4" where a target may say "Ethernet0|3"; both at once overlap, which
# buffermgrd/qosorch apply in key order with one range silently overriding the other.
RANGE_TABLES = ("BUFFER_PG", "BUFFER_QUEUE", "QUEUE")
_RANGE = re.compile(r"^(?P<port>.+)\|(?P<lo>\d+)(?:-(?P<hi>\d+))?$")


def _span(key: str) -> tuple[str, int, int] | None:
    m = _RANGE.match(key)
    if m is None:
        return None
    lo = int(m.group("lo"))
    return m.group("port"), lo, int(m.group("hi") or lo)


def overlapped_keys(running: dict[str, Any], fragment: dict[str, Any]) -> list[str]:
    """Keys of one range table in ``running`` that a different key of ``fragment`` overlaps (same port)."""
    spans: dict[str, list[tuple[int, int]]] = {}
    for key in fragment:
        span = _span(key)
        if span is not None:
            spans.setdefault(span[0], []).append(span[1:])
    out = []
    for key in running:
        span = _span(key)
        if span is None or key in fragment:
            continue
        port, lo, hi = span
        if any(lo <= b and a <= hi for a, b in spans.get(port, ())):
            out.append(key)
    return sorted(out)


def hardware_mismatches(running: ConfigDb, candidate: ConfigDb) -> list[str]:
    """Why `candidate` was built for other hardware than the switch runs: another HWSKU in DEVICE_METADATA, or
    a PORT the switch's own table lacks or names with another alias or index (lanes may differ: a breakout
    changes them). Empty when the switch has no PORT table yet or the candidate names none."""
    out = []
    have = str(running.get("DEVICE_METADATA", {}).get("localhost", {}).get("hwsku", ""))
    want = str(candidate.get("DEVICE_METADATA", {}).get("localhost", {}).get("hwsku", ""))
    if have and want and have != want:
        out.append(f"the switch is HWSKU {have}, the config is for {want}")
    ports = running.get("PORT", {})
    for name, entry in sorted(candidate.get("PORT", {}).items()):
        if not ports or not isinstance(entry, dict):
            break
        mine = ports.get(name)
        if not isinstance(mine, dict):
            out.append(f"{name} is not a port of the switch's PORT table")
            continue
        for field in ("alias", "index"):
            if field in entry and field in mine and entry[field] != mine[field]:
                out.append(f"{name} {field} is {mine[field]} on the switch, {entry[field]} in the config")
    return out


def deep_merge(running: ConfigDb, fragment: ConfigDb) -> ConfigDb:
    """Merge ``fragment`` into a copy of ``running`` at table/key/field granularity; in the range-keyed tables
    a fragment key replaces the running keys it overlaps (the target's ``|3`` replaces a factory ``|3-4``)."""
    merged = copy.deepcopy(running)
    for table in RANGE_TABLES:
        if isinstance(fragment.get(table), dict) and isinstance(merged.get(table), dict):
            for key in overlapped_keys(merged[table], fragment[table]):
                del merged[table][key]
    for table, entries in fragment.items():
        target = merged.setdefault(table, {})
        for key, fields in entries.items():
            if isinstance(fields, dict) and isinstance(target.get(key), dict):
                target[key].update(copy.deepcopy(fields))
            else:
                target[key] = copy.deepcopy(fields)
    return merged


def _ptr(*parts: str) -> str:
    return "".join("/" + escape(p) for p in parts)


def _bgp_rebuild(table: str, old: Any, new: Any) -> bool:
    """True when a BGP neighbor changes in a way bgpcfgd cannot apply in place."""
    if table not in BGP_NEIGHBOR_TABLES or not isinstance(old, dict) or not isinstance(new, dict):
        return False
    changed = {f for f in set(old) | set(new) if old.get(f) != new.get(f)}
    return bool(changed - BGP_UPDATABLE_FIELDS)


def make_patch_phases(running: ConfigDb, candidate: ConfigDb) -> list[list[dict[str, Any]]]:
    """RFC 6902 operations turning ``running`` into ``candidate``, as one or two GCU transactions.

    Phase 1 (only when needed) removes BGP neighbors whose non-admin fields change; phase 2 does
    everything else, including re-adding them. GCU would otherwise fold remove+add of one key into
    a field update, which bgpcfgd ignores. Only add/remove/replace are emitted (no move/copy), and a
    table is added or removed whole so no patch leaves an empty table (GCU refuses those).
    """
    rebuild: list[dict[str, Any]] = []
    ops: list[dict[str, Any]] = []
    for table in sorted(set(running) | set(candidate)):
        old_t, new_t = running.get(table), candidate.get(table)
        if old_t is None:
            ops.append({"op": "add", "path": _ptr(table), "value": new_t})
            continue
        if new_t is None:
            ops.append({"op": "remove", "path": _ptr(table)})
            continue
        if not new_t:
            ops.append({"op": "remove", "path": _ptr(table)})
            continue
        for key in sorted(set(old_t) | set(new_t)):
            old, new = old_t.get(key), new_t.get(key)
            if old == new:
                continue
            if old is None:
                ops.append({"op": "add", "path": _ptr(table, key), "value": new})
            elif new is None:
                ops.append({"op": "remove", "path": _ptr(table, key)})
            elif _bgp_rebuild(table, old, new):
                rebuild.append({"op": "remove", "path": _ptr(table, key)})
                ops.append({"op": "add", "path": _ptr(table, key), "value": new})
            elif not isinstance(old, dict) or not isinstance(new, dict):
                ops.append({"op": "replace", "path": _ptr(table, key), "value": new})
            else:
                ops.extend(_field_ops(table, key, old, new))
    # Removing every neighbor of a table in phase 1 would leave it empty: remove the table instead,
    # and then phase 2 re-adds that table whole (its per-key ops would point into a missing table).
    rebuild = _collapse_emptied(running, rebuild)
    dropped = {op["path"] for op in rebuild if op["path"].count("/") == 1}
    if dropped:
        ops = [op for op in ops if "/" + op["path"].split("/")[1] not in dropped]
        ops += [{"op": "add", "path": path, "value": candidate[path[1:]]} for path in sorted(dropped)]
    ops = _order(ops)
    return [p for p in (rebuild, ops) if p]


def _field_ops(table: str, key: str, old: dict, new: dict) -> list[dict[str, Any]]:
    if not new:
        # An entry with no fields ({} / NULL) cannot be reached by removing fields one by one.
        return [{"op": "replace", "path": _ptr(table, key), "value": new}]
    ops: list[dict[str, Any]] = []
    for field in sorted(set(old) | set(new)):
        if field not in new:
            ops.append({"op": "remove", "path": _ptr(table, key, field)})
        elif field not in old:
            ops.append({"op": "add", "path": _ptr(table, key, field), "value": new[field]})
        elif old[field] != new[field]:
            ops.append({"op": "replace", "path": _ptr(table, key, field), "value": new[field]})
    return ops


def _collapse_emptied(running: ConfigDb, removes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_table: dict[str, list[dict[str, Any]]] = {}
    for op in removes:
        by_table.setdefault(op["path"].split("/")[1], []).append(op)
    out: list[dict[str, Any]] = []
    for table, table_ops in sorted(by_table.items()):
        if len(table_ops) == len(running.get(table, {})):
            out.append({"op": "remove", "path": _ptr(table)})
        else:
            out.extend(table_ops)
    return out


def _order(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Removes first, then replaces, then adds; stable within each group."""
    rank = {"remove": 0, "replace": 1, "add": 2}
    return sorted(ops, key=lambda o: rank[o["op"]])


def make_patch(running: ConfigDb, candidate: ConfigDb) -> list[dict[str, Any]]:
    """All phases flattened (for display and dry runs)."""
    return [op for phase in make_patch_phases(running, candidate) for op in phase]


def apply_patch(doc: ConfigDb, ops: list[dict[str, Any]]) -> ConfigDb:
    """Apply RFC 6902 operations with the jsonpatch library (raises jsonpatch/jsonpointer errors)."""
    return jsonpatch.JsonPatch(ops).apply(copy.deepcopy(doc))


def _fmt(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def diff_text(running: ConfigDb, candidate: ConfigDb) -> str:
    """Readable, deterministic diff by TABLE|KEY and field; '' when the documents are equal.

    Added entries are prefixed '+', removed ones '-', changed entries get a context header line
    followed by the -/+ field lines.
    """
    lines: list[str] = []
    for table in sorted(set(running) | set(candidate)):
        old_t, new_t = running.get(table, {}), candidate.get(table, {})
        for key in sorted(set(old_t) | set(new_t)):
            old, new = old_t.get(key), new_t.get(key)
            if old == new:
                continue
            name = f"{table}|{key}"
            if old is None or new is None:
                sign, entry = ("+", new) if old is None else ("-", old)
                lines.append(f"{sign} {name}")
                if isinstance(entry, dict):
                    lines += [f"{sign}     {f}: {_fmt(v)}" for f, v in sorted(entry.items())]
                else:
                    lines.append(f"{sign}     {_fmt(entry)}")
                continue
            lines.append(f"  {name}")
            if not isinstance(old, dict) or not isinstance(new, dict):
                lines += [f"-     {_fmt(old)}", f"+     {_fmt(new)}"]
                continue
            for field in sorted(set(old) | set(new)):
                if old.get(field) == new.get(field):
                    continue
                if field in old:
                    lines.append(f"-     {field}: {_fmt(old[field])}")
                if field in new:
                    lines.append(f"+     {field}: {_fmt(new[field])}")
    return "\n".join(lines)


# Fields that hold secrets (TACPLUS/RADIUS passkey, BGP password, MACsec keys, ...)
SECRET_FIELD = re.compile(r"(passkey|password|secret|_key|^key)$")


def sanitize(doc: ConfigDb) -> ConfigDb:
    """A copy with every secret field value replaced, as get_config(sanitized=True) promises."""
    return {table: {key: ({f: ("<removed>" if SECRET_FIELD.search(f) else v) for f, v in entry.items()}
                          if isinstance(entry, dict) else entry)
                    for key, entry in entries.items()}
            for table, entries in doc.items()}


def dumps(doc: ConfigDb) -> str:
    """Canonical JSON text of a config_db document (sorted keys, indent 4, like sonic-cfggen)."""
    return json.dumps(doc, indent=4, sort_keys=True)


# CONFIG_DB table -> the APPL_DB table its daemon fills (buffermgrd, portmgrd): where a drained apply is
# seen to have reached the forwarding layer. Keys use ':' where CONFIG_DB uses '|'.
APPL_DB_TABLES = {"BUFFER_POOL": "BUFFER_POOL_TABLE", "BUFFER_PROFILE": "BUFFER_PROFILE_TABLE",
                  "BUFFER_PG": "BUFFER_PG_TABLE", "BUFFER_QUEUE": "BUFFER_QUEUE_TABLE", "PORT": "PORT_TABLE"}


def appl_db_changes(running: ConfigDb, target: ConfigDb) -> dict[str, dict[str, str]]:
    """APPL_DB key -> the fields it must hold once `target` is applied, for the entries that change."""
    out: dict[str, dict[str, str]] = {}
    for table, appl in sorted(APPL_DB_TABLES.items()):
        old, new = running.get(table, {}), target.get(table, {})
        for key in sorted(new):
            if isinstance(new[key], dict) and old.get(key) != new[key]:
                out[f"{appl}:{key.replace('|', ':')}"] = {f: str(v) for f, v in new[key].items()}
    return out
