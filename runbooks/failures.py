"""Device failures as one sentence: the real cause (the device's own rejection text, a refused host
key), not the exception type of the outermost wrapper. Full tracebacks belong in the run's log file."""

from __future__ import annotations

import re
import traceback
from collections.abc import Iterator
from typing import Any

# A refused SSH host key, as paramiko and netmiko word it
_HOST_KEY = re.compile(r"not found in known_hosts|host key.*(unknown|mismatch|not verif)|BadHostKey", re.I)
# Wrappers whose own message only repeats "could not connect" and hides the cause they were raised from
_GENERIC = re.compile(r"^(cannot connect|could not connect|connection (failed|error)|"
                      r"task failed|subtask|traceback)", re.I)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _clean(text: str) -> str:
    """One line: a trailing traceback cut; a long help text (netmiko's "Common causes...") cut to its first
    line, or to the first line and the reason a click-based CLI (SONiC's `config`) prints as "Error: ...";
    whitespace collapsed."""
    text = text.split("Traceback (most recent call last)")[0]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    reason = next((ln[len("Error:"):].strip() for ln in lines[1:] if ln.startswith("Error:")), "")
    if reason and len(lines) > 2:
        lines = [lines[0].rstrip(" :") + ":", reason]
    elif len(lines) > 3:
        lines = lines[:1]
    return " ".join(" ".join(lines).split()).strip(" :")


def cause(exc: BaseException) -> str:
    """The most specific one-line reason an exception chain holds."""
    chain = list(_chain(exc))
    for e in chain:
        if _HOST_KEY.search(f"{type(e).__name__} {e}"):
            host = re.search(r"'?\[?([\w.:-]+)\]?(?::(\d+))?'? not found in known_hosts", str(e))
            where = f" ({host.group(1)}{':' + host.group(2) if host and host.group(2) else ''})" if host else ""
            return f"host key not in known_hosts{where}: add it (ssh-keyscan) or pass --insecure in a lab"
    if any(isinstance(e, TimeoutError) or "timed out" in str(e).lower() for e in chain):
        text = next((_clean(str(e)) for e in chain if "timed out" in str(e).lower()), "")
        return f"timed out: {text}" if text else "timed out"
    # the outermost specific message: a wrapper that says more than "cannot connect" carries the cause's text
    for e in chain:
        msg = _clean(str(e))
        if msg and not _GENERIC.match(msg) and type(e).__name__ != "NornirSubTaskError":
            return _device_words(msg)
    return type(chain[-1]).__name__


# Network CLIs start their error lines with "%"; an API error that quotes them (eAPI's "CLI command 3 of 3
# '...' failed: ... errors: ['% ...']") is reduced to the refused command and the device's own words
_CLI_ERROR = re.compile(r"""['"](%[^'"]+)['"]""")
_FAILED_COMMAND = re.compile(r"CLI command \d+ of \d+ '([^']+)' failed")


def _device_words(msg: str) -> str:
    errors = _CLI_ERROR.findall(msg)
    if not errors:
        return msg
    command = _FAILED_COMMAND.search(msg)
    return (f"{command.group(1)}: " if command else "") + "; ".join(e.strip() for e in errors)


def result_cause(multi: Any) -> str:
    """One line for a failed Nornir MultiResult: the first real exception's cause."""
    for result in multi:
        exc = getattr(result, "exception", None)
        if exc is not None and type(exc).__name__ != "NornirSubTaskError":
            return cause(exc)
    text = str(multi[0].result or "failed") if len(multi) else "failed"
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return _clean(lines[-1]) if lines else "failed"


def result_traceback(multi: Any) -> str:
    """The full traceback text of a failed MultiResult (for the run's log file)."""
    parts = []
    for result in multi:
        exc = getattr(result, "exception", None)
        if exc is not None:
            parts.append("".join(traceback.format_exception(exc)))
    return "\n".join(parts) or str(multi[0].result if len(multi) else "")
