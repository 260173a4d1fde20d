"""Slurm hostlist expressions, parsed strictly: `gpu[1-4,7]`, `gpu[01-04]`, `rack[1-2]-gpu[1-3]`, `a1,b[2-3]`.

Grammar (what `scontrol show hostnames` expands, without its leniencies):
    list    := item ("," item)*                     commas outside brackets separate items
    item    := (word | "[" ranges "]")+             brackets multiply: rack[1-2]-gpu[1-3] is 6 names
    ranges  := range ("," range)*
    range   := digits | digits "-" digits           low <= high; the low bound's digits set the width
                                                     (01-04 -> 01..04; 8-10 -> 8, 9, 10)
    word    := [A-Za-z0-9._-]+
Anything else (spaces, empty items, nested or unbalanced brackets, a step, a sign, a range whose bounds
are reversed or wider than MAX_DIGITS, more than MAX_HOSTS names in all) is refused with HostlistError.
"""

from __future__ import annotations

import re
from itertools import product

MAX_HOSTS = 100_000           # names one expression may expand to (a cluster, not a typo's billion)
MAX_DIGITS = 9
MAX_LENGTH = 65_536           # characters of the expression itself
_WORD = re.compile(r"[A-Za-z0-9._-]+")
# ASCII digits only: a str pattern's \d also takes other scripts' digits, which int() would read as 0-9
_RANGE = re.compile(rf"(\d{{1,{MAX_DIGITS}}})(?:-(\d{{1,{MAX_DIGITS}}}))?", re.ASCII)


class HostlistError(ValueError):
    """The expression is not a hostlist this parser accepts (the message says where)."""


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets; refuse unbalanced or nested brackets."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            if depth:
                raise HostlistError(f"nested '[' at position {i + 1}")
            depth = 1
        elif ch == "]":
            if not depth:
                raise HostlistError(f"']' without '[' at position {i + 1}")
            depth = 0
        elif ch == "," and not depth:
            items.append(text[start:i])
            start = i + 1
    if depth:
        raise HostlistError("'[' is never closed")
    items.append(text[start:])
    return items


def _ranges(body: str, where: str) -> list[str]:
    if not body:
        raise HostlistError(f"empty brackets in {where!r}")
    out: list[str] = []
    for part in body.split(","):
        m = _RANGE.fullmatch(part)
        if m is None:
            raise HostlistError(f"bad range {part!r} in {where!r} (expected N or N-M with digits only)")
        low, high = m.group(1), m.group(2)
        if high is None:
            out.append(low)
            continue
        if int(high) < int(low):
            raise HostlistError(f"range {part!r} in {where!r} runs backwards")
        width = len(low)
        if int(high) - int(low) + 1 > MAX_HOSTS:
            raise HostlistError(f"range {part!r} in {where!r} expands to more than {MAX_HOSTS} names")
        out.extend(str(n).zfill(width) for n in range(int(low), int(high) + 1))
    return out


def _item(item: str) -> list[str]:
    if not item:
        raise HostlistError("empty name (two commas in a row, or a leading/trailing comma)")
    pieces: list[list[str]] = []
    pos = 0
    while pos < len(item):
        if item[pos] == "[":
            end = item.index("]", pos)          # balanced: _split_top checked
            pieces.append(_ranges(item[pos + 1:end], item))
            pos = end + 1
            continue
        m = _WORD.match(item, pos)
        if m is None:
            raise HostlistError(f"unexpected {item[pos]!r} in {item!r}")
        pieces.append([m.group(0)])
        pos = m.end()
    total = 1
    for p in pieces:
        total *= len(p)
        if total > MAX_HOSTS:
            raise HostlistError(f"{item!r} expands to more than {MAX_HOSTS} names")
    return ["".join(parts) for parts in product(*pieces)]


def expand(expression: str) -> list[str]:
    """The host names of a Slurm hostlist expression, in its order, each once."""
    if len(expression) > MAX_LENGTH:
        raise HostlistError(f"expression longer than {MAX_LENGTH} characters")
    if not expression:
        raise HostlistError("empty host list")
    names: list[str] = []
    for item in _split_top(expression):
        names.extend(_item(item))
        if len(names) > MAX_HOSTS:
            raise HostlistError(f"more than {MAX_HOSTS} names")
    return list(dict.fromkeys(names))
