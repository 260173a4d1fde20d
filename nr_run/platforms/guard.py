"""The last line of defence before templating, for every platform: no structured-config string may steer
the output.

The schema already restricts every inventory value to safe patterns; this guard re-checks the structured
config a platform built (keys and values, at any depth), so that a value that slipped through (a new field, a
plug-in from another distribution) can never add a config line or leave a JSON string. Refused: anything
``str.splitlines()`` breaks on (\\n \\r \\v \\f \\x1c-\\x1e \\x85 U+2028 U+2029), every other control or format
character (Unicode categories Cc, Cf), and the two characters that end or escape a quoted string (``"``, ``\\``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from nr_run.intent.errors import Finding, InventoryError

_REFUSED_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs"}
_REFUSED_CHARS = {'"', "\\"}


def unsafe_char(text: str) -> str | None:
    """The first character of `text` the guard refuses, or None."""
    if text.isascii() and text.isprintable() and not (_REFUSED_CHARS & set(text)):
        return None     # the common case, decided in C
    for ch in text:
        if ch in _REFUSED_CHARS or unicodedata.category(ch) in _REFUSED_CATEGORIES:
            return ch
    return None


def _walk(value: Any, path: str) -> tuple[str, str, str] | None:
    """(path, string, refused character) of the first unsafe string in a structured config, or None."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            bad = unsafe_char(item)
            if bad is not None:
                return where, item, bad
        elif isinstance(item, Mapping):
            for key, sub in item.items():
                label = f"{where}.{key}" if where else str(key)
                if isinstance(key, str) and unsafe_char(key) is not None:
                    return where or "(top)", key, unsafe_char(key) or ""
                stack.append((sub, label))
        elif isinstance(item, list | tuple):
            stack.extend((sub, f"{where}[{i}]") for i, sub in enumerate(item))
    return None


def check_structured(structured: Any, device: str, fabric_file: str = "") -> None:
    """Raise InventoryError (exit 3: file, host, field) if any string in `structured` is unsafe to template."""
    found = _walk(structured, "")
    if found is None:
        return
    where, text, bad = found
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:80])
    raise InventoryError([Finding("error", "unsafe-value", fabric_file, device, where,
                                  f"{shown!r} contains {bad!r}: a config value may not hold line breaks, "
                                  "control characters, quotes or backslashes")])
