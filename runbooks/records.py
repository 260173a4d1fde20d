"""Run artifacts, the run's log file and the append-only audit log.

Everything is private to its user: folders 0700, files 0600 (backups and diffs hold configs).
The audit log (`<artifacts>/audit.jsonl`) has two lines per device action: a "start" line written
before the action is attempted and an "end" line (same id) after it, so a process killed in between
leaves an unfinished line that the next deploy reconciles by reading the device.
"""

from __future__ import annotations

import errno
import getpass
import hashlib
import json
import os
import socket
import threading
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_AUDIT_LOCK = threading.Lock()
AUDIT_FILE = "audit.jsonl"
# The outcome of an action whose device was left to its revert timer without a verified revert
AWAITING_REVERT = "awaiting revert"


def diff_hash(diff: str) -> str:
    return "sha256:" + hashlib.sha256(diff.encode()).hexdigest()[:16]


def private_dir(path: Path) -> Path:
    """Create `path` and any missing parents as 0700 (mkdir's mode is masked by the umask, chmod is not)."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        d.mkdir(exist_ok=True)
        d.chmod(0o700)
    return path


def write_private(path: Path, text: str | Iterable[str], append: bool = False) -> Path:
    """Write (or append) text, or pieces of text one after the other, to a file created 0600: it is never
    readable by others, not even briefly."""
    private_dir(path.parent)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    try:
        fd = os.open(path, flags, 0o600)
        with os.fdopen(fd, "a" if append else "w", encoding="utf-8") as fh:
            if isinstance(text, str):
                fh.write(text)
            else:
                for piece in text:
                    fh.write(piece)
    except OSError as exc:          # a write refused (full disk, size limit) names no file by itself
        if exc.filename is None:
            exc.filename = str(path)
        raise
    return path


def utc_now_iso() -> str:
    """Now, UTC, to the second (ISO 8601): the time stamp of audit lines, logs and results."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class RunRecords:
    """Everything one run writes: `<artifacts>/runs/<site>/<UTC time>-<verb>/` plus `<artifacts>/audit.jsonl`.
    Create it only once the input is valid: its folder appears at construction."""

    def __init__(self, artifacts: Path | str, site: str, verb: str):
        self.artifacts = Path(artifacts)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        self.dir = private_dir(self.artifacts / "runs" / site / f"{stamp}-{verb}")
        self.site = site
        self.log_path = self.dir / "run.log"
        self._handler: Any = None
        # the first write this host refused (full disk, file size limit): set, the run goes on or stops safely
        self.fault = ""

    def write(self, relative: str, text: str | Iterable[str]) -> Path:
        return write_private(self.dir / relative, text)

    def write_json(self, relative: str, payload: Any) -> Path:
        return self.write(relative, json.dumps(payload, indent=2, sort_keys=True) + "\n")

    def refused(self, exc: OSError) -> str:
        """Remember a write the host refused; its one-line description."""
        text = host_fault(exc)
        self.fault = self.fault or text
        return text

    def log(self, text: str) -> None:
        """Append to the run's log file (tracebacks and details that do not belong on the screen). A log line
        the host cannot write is dropped (the fault is kept): it never stops a run."""
        try:
            with _AUDIT_LOCK:
                write_private(self.log_path, f"{utc_now_iso()} {text.rstrip()}\n", append=True)
        except OSError as exc:
            self.refused(exc)

    def capture_logging(self) -> None:
        """Library log records (Nornir's "task failed" tracebacks, NAPALM, netmiko) go to the run's log file,
        never to the screen."""
        import logging

        write_private(self.log_path, "", append=True)
        handler = logging.FileHandler(self.log_path, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        logging.getLogger().addHandler(handler)
        self._handler = handler

    def close(self) -> None:
        """Detach the log file from the logging tree."""
        import logging

        handler = getattr(self, "_handler", None)
        if handler is not None:
            logging.getLogger().removeHandler(handler)
            handler.close()
            self._handler = None

    def _append(self, line: dict[str, Any]) -> None:
        with _AUDIT_LOCK:
            write_private(self.artifacts / AUDIT_FILE, json.dumps(line, sort_keys=True) + "\n", append=True)

    def audit_start(self, device: str, action: str, diff: str, detail: str = "", before: str = "",
                    method: str = "", run: str | None = None, strict: bool = False) -> str:
        """The line written before a device action; returns its id for audit_end. `before` is the device's
        (masked) running config before the action, recorded as its hash: the next run compares the device
        with it, whatever happened after; `method` how the change is applied ("drained apply: ...").
        strict: raise OSError when the host cannot write it (the line that must exist before a change);
        else the fault is kept and the action goes on (a confirm or rollback must still happen)."""
        try:
            return self._start(device, action, diff, detail, before, method, run)
        except OSError as exc:
            if strict:
                raise
            self.refused(exc)
            return uuid.uuid4().hex[:16]

    def _start(self, device: str, action: str, diff: str, detail: str, before: str, method: str,
               run: str | None) -> str:
        entry = uuid.uuid4().hex[:16]
        line = {"id": entry, "phase": "start", "time": utc_now_iso(), "user": getpass.getuser(),
                "host": socket.gethostname(), "pid": os.getpid(), "site": self.site, "device": device,
                "action": action, "diff_hash": diff_hash(diff), "outcome": "started", "detail": detail,
                "run": run or self.dir.name}
        if before:
            line["before"] = state_hash(before)
        if method:
            line["method"] = method
        self._append(line)
        return entry

    def audit_end(self, entry: str, device: str, action: str, diff: str, outcome: str, detail: str = "",
                  run: str | None = None) -> None:
        """Complete the line `entry` with what happened. An end line the host cannot write leaves the action
        unfinished in the log, which the next deploy reconciles by reading the device: the run goes on (the
        fault is kept, and the deploy stops once the stage is safe)."""
        try:
            self._end(entry, device, action, diff, outcome, detail, run)
        except OSError as exc:
            self.refused(exc)

    def _end(self, entry: str, device: str, action: str, diff: str, outcome: str, detail: str,
             run: str | None) -> None:
        self._append({"id": entry, "phase": "end", "time": utc_now_iso(), "user": getpass.getuser(),
                      "host": socket.gethostname(), "pid": os.getpid(), "site": self.site, "device": device,
                      "action": action, "diff_hash": diff_hash(diff), "outcome": outcome, "detail": detail,
                      "run": run or self.dir.name})

    def audit(self, device: str, action: str, diff: str, outcome: str, detail: str = "",
              run: str | None = None) -> None:
        """A start and end line at once (an action with nothing to wait for)."""
        self.audit_end(self.audit_start(device, action, diff, run=run), device, action, diff, outcome, detail,
                       run=run)


def host_fault(exc: OSError) -> str:
    """One line for a file operation this host refused: what, where, why."""
    where = f" {exc.filename}" if exc.filename else ""
    return f"cannot write{where}: {exc.strerror or exc}" if exc.errno in _WRITE_ERRORS else \
        f"file error{where}: {exc.strerror or exc}"


_WRITE_ERRORS = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS)


def state_hash(text: str) -> str:
    """The identity of a device's (masked) running config, as the audit log records it."""
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


# the string fields an audit line must carry to be read at all
_AUDIT_KEYS = ("id", "phase", "site", "device", "action", "outcome")


def _audit_line(raw: bytes) -> dict[str, Any] | None:
    """One audit line, or None when it is not one (cut by a crash mid-write, edited, another tool's)."""
    try:
        line = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(line, dict) or not all(isinstance(line.get(k), str) for k in _AUDIT_KEYS):
        return None
    return {k: v for k, v in line.items() if isinstance(v, (str, int, float, bool)) or v is None}


def read_audit(artifacts: Path | str, skipped: list[int] | None = None) -> list[dict[str, Any]]:
    """Every well-formed line of the audit log. A line that is not one (a crash cut it, a hand edit broke it)
    is skipped, never fatal; its line number goes to `skipped` when given, so a caller can say so."""
    path = Path(artifacts) / AUDIT_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    lines = []
    for number, raw in enumerate(data.splitlines(), 1):
        line = _audit_line(raw) if raw.strip() else None
        if line is not None:
            lines.append(line)
        elif raw.strip() and skipped is not None:
            skipped.append(number)
    return lines


# the outcomes after which a device is known to be where a deploy left it on purpose (a marker release
# changes no config)
SETTLED = ("confirmed", "rolled back", "reverted", "released")


def settled(outcome: str) -> bool:
    return outcome in SETTLED or outcome.startswith("reconciled")


def unfinished(artifacts: Path | str, site: str) -> list[dict[str, Any]]:
    """Devices of `site` a deploy run left unsettled, whatever its last audit line says: the run died between
    a "start" and its "end", or after a commit that was never confirmed, rolled back or verified reverted (its
    last line is "committed", "failed", "awaiting revert", "not reverted", ...). One entry per (run, device):
    the first start line of that device's actions in that run (its `before` state), plus `open` (the ids
    with no end line) and `last` (the outcome of the last line)."""
    chains: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for line in read_audit(artifacts):
        if line.get("site") == site and line["id"]:
            chains.setdefault((str(line.get("run", "")), line["device"]), []).append(line)
    out = []
    for lines in chains.values():
        last = lines[-1]
        if last["phase"] == "end" and settled(last["outcome"]):
            continue
        starts = [ln for ln in lines if ln["phase"] == "start"]
        if not starts:
            continue
        ended = {ln["id"] for ln in lines if ln["phase"] == "end"}
        first = next((ln for ln in starts if ln.get("before")), starts[0])
        method = next((ln["method"] for ln in starts if isinstance(ln.get("method"), str)), "")
        out.append({**first, "open": [ln["id"] for ln in starts if ln["id"] not in ended],
                    "last": last["outcome"], "method": method})
    return out
