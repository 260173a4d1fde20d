"""Per-site deploy lock: one deploy per site at a time, naming the holder when refused."""

from __future__ import annotations

import getpass
import json
import os
import socket
from datetime import UTC, datetime
from pathlib import Path


class SiteLocked(Exception):
    """Another deploy holds the site."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SiteLock:
    """An O_EXCL lock file under the artifacts folder; a lock left by a dead local process is taken over."""

    def __init__(self, artifacts: Path | str, site: str):
        self.path = Path(artifacts) / "locks" / f"{site}.lock"
        self.site = site

    def holder(self) -> dict | None:
        try:
            return json.loads(self.path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        info = {"pid": os.getpid(), "user": getpass.getuser(), "host": socket.gethostname(),
                "since": datetime.now(UTC).isoformat(timespec="seconds")}
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = self.holder() or {}
                stale = holder.get("host") == socket.gethostname() and not _alive(int(holder.get("pid", 0) or 0))
                if stale:
                    self.path.unlink(missing_ok=True)
                    continue
                raise SiteLocked(
                    f"site {self.site} is locked by {holder.get('user', '?')}@{holder.get('host', '?')} "
                    f"pid {holder.get('pid', '?')} since {holder.get('since', '?')} ({self.path})"
                ) from None
            with os.fdopen(fd, "w") as fh:
                json.dump(info, fh)
            return
        raise SiteLocked(f"could not take {self.path}")

    def release(self) -> None:
        holder = self.holder()
        if holder and holder.get("pid") == os.getpid():
            self.path.unlink(missing_ok=True)

    def __enter__(self) -> SiteLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
