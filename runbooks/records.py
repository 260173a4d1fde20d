"""Run artifacts and the append-only audit log (who, when, site, device, diff hash, outcome)."""

from __future__ import annotations

import getpass
import hashlib
import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_AUDIT_LOCK = threading.Lock()


def diff_hash(diff: str) -> str:
    return "sha256:" + hashlib.sha256(diff.encode()).hexdigest()[:16]


class RunRecords:
    """Everything one run writes: `<artifacts>/runs/<site>/<UTC time>-<verb>/` plus `<artifacts>/audit.jsonl`."""

    def __init__(self, artifacts: Path | str, site: str, verb: str):
        self.artifacts = Path(artifacts)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        self.dir = self.artifacts / "runs" / site / f"{stamp}-{verb}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.site = site

    def write(self, relative: str, text: str) -> Path:
        path = self.dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def write_json(self, relative: str, payload: Any) -> Path:
        return self.write(relative, json.dumps(payload, indent=2, sort_keys=True) + "\n")

    def audit(self, device: str, action: str, diff: str, outcome: str, detail: str = "") -> None:
        line = {"time": datetime.now(UTC).isoformat(timespec="seconds"), "user": getpass.getuser(),
                "site": self.site, "device": device, "action": action, "diff_hash": diff_hash(diff),
                "outcome": outcome, "detail": detail, "run": self.dir.name}
        path = self.artifacts / "audit.jsonl"
        with _AUDIT_LOCK, path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(line, sort_keys=True) + "\n")
