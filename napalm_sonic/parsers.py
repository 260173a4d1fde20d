"""Parsers for community SONiC show-command text (sonic-utilities tabulate output)."""

from __future__ import annotations

import itertools
import re

_RULE = re.compile(r"\s*-+(\s+-+)*\s*")


def parse_table(text: str, first_header: str | None = None) -> list[dict[str, str]]:
    """Rows of a tabulate 'simple' table: header line, dashed rule, rows.

    The first table in `text`, or the first whose header starts with `first_header` (some commands print
    several, e.g. `show pfc counters`). Column extents come from the dashed rule, each widened to the start
    of the next, so cells containing spaces, empty cells and right-aligned columns all work. Rows end at a
    blank or all-dashes line (a footer such as "Total entries displayed" is ignored).
    """
    lines = text.splitlines()
    for i in range(1, len(lines)):
        header, rule = lines[i - 1], lines[i]
        if not header.strip() or not is_rule(rule):
            continue
        if first_header and not header.strip().startswith(first_header):
            continue
        names, columns = table_columns(header, rule)
        return table_rows(lines, i + 1, names, columns)
    return []


def is_rule(line: str) -> bool:
    """Whether the line is a table's dashed rule (the cheap test first: a switch's counter tables run to
    thousands of rows, none of them a rule)."""
    return "-" in line and _RULE.fullmatch(line) is not None


def table_columns(header: str, rule: str) -> tuple[list[str], list[slice]]:
    """The column names and extents of a table from its header and dashed rule (see parse_table)."""
    starts = [m.start() for m in re.finditer(r"-+", rule)]
    columns = [slice(0 if j == 0 else s, starts[j + 1] if j + 1 < len(starts) else None)
               for j, s in enumerate(starts)]
    return [header[c].strip() for c in columns], columns


def table_rows(lines: list[str], first: int, names: list[str], columns: list[slice]) -> list[dict[str, str]]:
    """The rows from lines[first] up to a blank or all-dashes line, cut at `columns`."""
    rows: list[dict[str, str]] = []
    for line in itertools.islice(lines, first, None):
        text = line.strip()
        if not text.strip("-"):
            break
        rows.append(dict(zip(names, [line[c].strip() for c in columns], strict=True)))
    return rows


def parse_show_version(text: str) -> dict[str, str]:
    """'Key: value' lines of `show version` up to 'Docker images:'."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("Docker images"):
            break
        key, sep, value = line.partition(":")
        if sep and key.strip():
            out[key.strip()] = value.strip()
    return out


def parse_speed_mbps(speed: str) -> float:
    """'400G' / '40G' / '100M' / '400000' -> Mbit/s."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([GMK]?)", speed.strip())
    if not m:
        return 0.0
    value, unit = float(m.group(1)), m.group(2)
    return value * {"G": 1000.0, "M": 1.0, "K": 0.001, "": 1.0}[unit]


def parse_interfaces_status(text: str) -> dict[str, dict[str, str]]:
    """`show interfaces status` -> {Interface: row}."""
    return {r["Interface"]: r for r in parse_table(text) if r.get("Interface")}


def parse_lldp_table(text: str) -> dict[str, list[dict[str, str]]]:
    """`show lldp table` -> NAPALM get_lldp_neighbors shape."""
    out: dict[str, list[dict[str, str]]] = {}
    for row in parse_table(text):
        port = row.get("LocalPort", "")
        if port:
            out.setdefault(port, []).append({"hostname": row.get("RemoteDevice", ""), "port": row.get("RemotePortID", "")})
    return out


def parse_uptime_seconds(text: str) -> float:
    """First field of /proc/uptime."""
    try:
        return float(text.split()[0])
    except (IndexError, ValueError):
        return -1.0


def parse_frr_uptime(value: str) -> int:
    """FRR peerUptime ('never', '00:01:02', '1d21h11m', '2w3d04h') -> seconds."""
    if not value or value == "never":
        return 0
    if ":" in value:
        parts = [int(p) for p in value.split(":")]
        secs = 0
        for p in parts:
            secs = secs * 60 + p
        return secs
    units = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
    return sum(int(n) * units[u] for n, u in re.findall(r"(\d+)([wdhms])", value))


def parse_db_hash(text: str) -> dict[str, str]:
    """`sonic-db-cli DB HGETALL KEY` output: a Python dict literal of strings ({} when the key is absent)."""
    import ast
    try:
        value = ast.literal_eval(text.strip() or "{}")
    except (ValueError, SyntaxError):
        return {}
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}
