"""The last line of defence before templating, for every platform: no structured-config string may steer
the output.

The schema already restricts every inventory value to safe patterns; this guard re-checks the structured
config a platform built (keys and values, at any depth), so that a value that slipped through (a new field, a
plug-in from another distribution) can never add a config line or leave a JSON string. Refused: anything
``str.splitlines()`` breaks on (\\n \\r \\v \\f \\x1c-\\x1e \\x85 U+2028 U+2029), every other control or format
character (Unicode categories Cc, Cf), and the two characters that end or escape a quoted string (``"``, ``\\``).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from typing import Any

from nr_run.intent.errors import Finding, InventoryError

_REFUSED_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs"}
_REFUSED_CHARS = {'"', "\\"}


def unsafe_char(text: str) -> str | None:
    """The first character of `text` the guard refuses, or None."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return None     # the common case, decided in C
    for ch in text:
        if ch in _REFUSED_CHARS or unicodedata.category(ch) in _REFUSED_CATEGORIES:
            return ch
    return None


# Where a value sits, as a chain of (kind, parent, key or index) built per value; the dotted text is made only
# for a refused value (making it for each of a large site's ~2 million values cost more than the checks).
_SCALARS = (int, float, bool, type(None))


def _label(where: Any) -> str:
    parts: list[tuple[str, Any]] = []
    while not isinstance(where, str):
        kind, where, part = where
        parts.append((kind, part))
    text = where
    for kind, part in reversed(parts):
        text = (f"{text}.{part}" if text else str(part)) if kind == "key" else f"{text}[{part}]"
    return text


def _walk(value: Any, path: str) -> tuple[str, str, str] | None:
    """(path, string, refused character) of the first unsafe string in a structured config, or None."""
    stack: list[tuple[Any, Any]] = [(value, path)]
    safe: set[str] = set()        # strings already passed: port names, speeds and the like repeat a lot
    while stack:
        item, where = stack.pop()
        if type(item) in _SCALARS:
            continue
        if isinstance(item, str):
            if item in safe:
                continue
            bad = unsafe_char(item)
            if bad is not None:
                return _label(where), item, bad
            safe.add(item)
        elif isinstance(item, dict | Mapping):
            for key, sub in item.items():
                if isinstance(key, str) and key not in safe:
                    if unsafe_char(key) is not None:
                        return _label(where) or "(top)", key, unsafe_char(key) or ""
                    safe.add(key)
                stack.append((sub, ("key", where, key)))
        elif isinstance(item, list | tuple):
            stack.extend((sub, ("index", where, i)) for i, sub in enumerate(item))
    return None


def _json_safe(value: Any) -> bool:
    """True when every key and string of a JSON-shaped `value` is printable ASCII without quote or backslash,
    decided by json's C encoder: with ensure_ascii it escapes (with a backslash) every quote, backslash, control
    and non-ASCII character, so escape-free text leaves only DEL (0x7f) to look for. False is "not proven":
    the walk decides (also for values JSON cannot encode)."""
    try:
        text = json.dumps(value, ensure_ascii=True, check_circular=False)
    except (TypeError, ValueError, RecursionError):
        return False
    return escaped_json_safe(text)


def _all_safe(value: Any) -> bool:
    """Whether every string in a structured config passes: the common case, checked without tracking paths.
    Strings are gathered (each distinct one once: port names, speeds and the like repeat a lot) and checked
    after; numbers are skipped where they are met; only containers go on the stack."""
    stack: list[Any] = [value]
    strings: set[str] = set()
    add = strings.add
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            add(item)
        elif isinstance(item, dict | Mapping):
            for key, sub in item.items():
                if isinstance(key, str):
                    add(key)
                kind = type(sub)
                if kind is str:
                    add(sub)
                elif kind not in _SCALARS:
                    stack.append(sub)
        elif isinstance(item, list | tuple):
            for sub in item:
                kind = type(sub)
                if kind is str:
                    add(sub)
                elif kind not in _SCALARS:
                    stack.append(sub)
    return all(unsafe_char(text) is None for text in strings)


def escaped_json_safe(text: str) -> bool:
    """Whether the JSON text an ASCII-escaping encoder wrote (json.dumps with ensure_ascii, or its
    encode_basestring_ascii) proves every string in it safe: the encoder escapes, with a backslash, every quote,
    backslash, control and non-ASCII character, and JSON's structure has no backslash of its own, so a text
    without one holds only printable ASCII strings (DEL aside, which is looked for). False is "not proven"."""
    return "\\" not in text and "\x7f" not in text


# id -> (the object, proven): structured configs a builder shares between devices (equal servers' NIC settings),
# proven once; holding the object keeps its id from being reused while the entry lives (bounded)
_SHARED: dict[int, tuple[Any, bool]] = {}
_SHARED_MAX = 256


def shared(structured: Any) -> Any:
    """Mark a structured config the builder hands to several devices and never modifies: the guard proves it
    once, not once per device."""
    if _SHARED.get(id(structured), (None,))[0] is not structured:
        if len(_SHARED) >= _SHARED_MAX:
            _SHARED.clear()
        _SHARED[id(structured)] = (structured, False)
    return structured


def check_structured(structured: Any, device: str, fabric_file: str = "") -> None:
    """Raise InventoryError (exit 3: file, host, field) if any string in `structured` is unsafe to template."""
    mark = _SHARED.get(id(structured))
    if mark is not None and mark[0] is structured and mark[1]:
        return
    if _json_safe(structured) or _all_safe(structured):
        if mark is not None and mark[0] is structured:
            _SHARED[id(structured)] = (structured, True)
        return
    found = _walk(structured, "")     # again, in its order, to name the first refused value and its path
    if found is None:
        return
    where, text, bad = found
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:80])
    raise InventoryError([Finding("error", "unsafe-value", fabric_file, device, where,
                                  f"{shown!r} contains {bad!r}: a config value may not hold line breaks, "
                                  "control characters, quotes or backslashes")])
