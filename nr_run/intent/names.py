"""The safe patterns every inventory name must match (documented in docs/inventory-format.md).

A name that matches can be used as a config token, a JSON string and a file name: ASCII letters, digits,
`_` and `-` (and, in device names, single dots between them); no spaces, quotes, control characters or
path separators, and never `.` or `..`.
No pydantic here: the CLI checks its arguments with these patterns before anything heavy loads (the schema's
constrained types built on them are in nr_run.intent.nametypes).
"""

from __future__ import annotations

import re

# devices, groups, hardware models: a DNS-label-like name, dots only between other characters
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*$"
NAME_MAX = 63
NAME_HINT = "1-63 of A-Z a-z 0-9 _ - and single inner dots, starting with a letter or digit"
# sites: also a folder name under the inventory dir and under the artifacts dir
SITE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$"
# RoCE profiles, BGP peer groups: config identifiers
IDENT_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,31}$"
# free-text facts that reach configs (hardware model, vendor platform string): one token
TOKEN_PATTERN = r"^(?:[A-Za-z0-9][A-Za-z0-9_.+-]{0,63})?$"
# port naming: a fixed prefix, one {n}, an optional suffix that starts with a separator or a letter, never a
# digit (so the number is unambiguous): Ethernet{n}/1, eth{n}, and Linux's RoCE NIC names ens{n}np0 or
# enp65s0f{n}np0 (the predictable name of a PCI function plus the `np<port>` of its phys_port_name)
PORT_NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9/_-]{0,31}\{n\}(?:[A-Za-z/_-][A-Za-z0-9/_-]{0,15})?$"
PORT_PATTERN = r"^[A-Za-z][A-Za-z0-9/_-]{0,63}$"

_NAME = re.compile(NAME_PATTERN)
_SITE = re.compile(SITE_PATTERN)


def is_safe_name(value: object) -> bool:
    """A device/group name matching NAME_PATTERN (fullmatch: `$` alone would accept a trailing newline)."""
    return isinstance(value, str) and len(value) <= NAME_MAX and _NAME.fullmatch(value) is not None


def is_site_name(value: object) -> bool:
    return isinstance(value, str) and _SITE.fullmatch(value) is not None
