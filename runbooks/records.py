"""Run artifacts, the run's log file and the append-only audit log.

Everything is private to its user: folders 0700, files 0600 (backups and diffs hold configs).
The audit log (`<artifacts>/audit.jsonl`) has two lines per device action: a "start" line written
before the action is attempted and an "end" line (same id) after it, so a process killed in between
leaves an unfinished line that the next deploy reconciles by reading the device.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import socket
import threading
import uuid
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


def write_private(path: Path, text: str, append: bool = False) -> Path:
    """Write (or append) text to a file created 0600: it is never readable by others, not even briefly."""
    private_dir(path.parent)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    with os.fdopen(fd, "a" if append else "w", encoding="utf-8") as fh:
        fh.write(text)
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

    def write(self, relative: str, text: str) -> Path:
        return write_private(self.dir / relative, text)

    def write_json(self, relative: str, payload: Any) -> Path:
        return self.write(relative, json.dumps(payload, indent=2, sort_keys=True) + "\n")

    def log(self, text: str) -> None:
        """Append to the run's log file (tracebacks and details that do not belong on the screen)."""
        with _AUDIT_LOCK:
            write_private(self.log_path, f"{utc_now_iso()} {text.rstrip()}\n", append=True)

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

    def audit_start(self, device: str, action: str, diff: str, detail: str = "") -> str:
        """The line written before a device action; returns its id for audit_end."""
        entry = uuid.uuid4().hex[:16]
        self._append({"id": entry, "phase": "start", "time": utc_now_iso(), "user": getpass.getuser(),
                      "host": socket.gethostname(), "pid": os.getpid(), "site": self.site, "device": device,
                      "action": action, "diff_hash": diff_hash(diff), "outcome": "started", "detail": detail,
                      "run": self.dir.name})
        return entry

    def audit_end(self, entry: str, device: str, action: str, diff: str, outcome: str, detail: str = "",
                  run: str | None = None) -> None:
        """Complete the line `entry` with what happened."""
        self._append({"id": entry, "phase": "end", "time": utc_now_iso(), "user": getpass.getuser(),
                      "host": socket.gethostname(), "pid": os.getpid(), "site": self.site, "device": device,
                      "action": action, "diff_hash": diff_hash(diff), "outcome": outcome, "detail": detail,
                      "run": run or self.dir.name})

    def audit(self, device: str, action: str, diff: str, outcome: str, detail: str = "") -> None:
        """A start and end line at once (an action with nothing to wait for)."""
        self.audit_end(self.audit_start(device, action, diff), device, action, diff, outcome, detail)


def read_audit(artifacts: Path | str) -> list[dict[str, Any]]:
    path = Path(artifacts) / AUDIT_FILE
    if not path.exists():
        return []
    lines = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        try:
            lines.append(json.loads(raw))
        except json.JSONDecodeError:     # a line cut by a crash mid-write: the start line it ended is kept
            continue
    return lines


def unfinished(artifacts: Path | str, site: str) -> list[dict[str, Any]]:
    """Start lines of `site` with no end line (the process died before it could say how the action went), or
    whose end says the device was left to its revert timer unverified."""
    lines = read_audit(artifacts)
    starts: dict[str, dict[str, Any]] = {}
    last: dict[str, dict[str, Any]] = {}
    for line in lines:
        if line.get("site") != site or not line.get("id"):
            continue
        if line.get("phase") == "start":
            starts[line["id"]] = line
        last[line["id"]] = line
    return [starts[i] for i, line in last.items() if i in starts and
            (line.get("phase") == "start" or line.get("outcome") == AWAITING_REVERT)]
