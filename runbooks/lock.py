"""Per-site deploy lock, host-wide: one deploy per site at a time on this host, whatever artifacts
folder or user runs it, naming the holder when refused.

The lock files live in one folder for the host: NR_RUN_LOCK_DIR, else /run/lock/nr-run (else
<tmp>/nr-run-locks). The folder is world-writable with the sticky bit, like /tmp, so every operator
can take a lock and only its owner can remove it; a lock file is readable, so a refusal names its holder.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import socket
import tempfile
from pathlib import Path

from nr_run.runbooks.records import utc_now_iso


class SiteLocked(Exception):
    """Another deploy holds the site."""


def lock_dir() -> Path:
    override = os.environ.get("NR_RUN_LOCK_DIR")
    if override:
        return Path(override)
    run_lock = Path("/run/lock")
    if run_lock.is_dir():
        return run_lock / "nr-run"
    return Path(tempfile.gettempdir()) / "nr-run-locks"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SiteLock:
    """An O_EXCL lock file in the host's lock folder; a lock left by a dead local process is taken over."""

    def __init__(self, site: str, directory: Path | str | None = None):
        self.dir = Path(directory) if directory is not None else lock_dir()
        self.path = self.dir / f"{site}.lock"
        self.site = site
        self._held = False

    def holder(self) -> dict | None:
        try:
            return json.loads(self.path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def _make_dir(self) -> None:
        if not self.dir.is_dir():
            self.dir.mkdir(parents=True, exist_ok=True)
            # created concurrently by another user: theirs is already shared
            with contextlib.suppress(PermissionError):
                self.dir.chmod(0o1777)

    def acquire(self) -> None:
        self._make_dir()
        info = {"pid": os.getpid(), "user": getpass.getuser(), "host": socket.gethostname(),
                "since": utc_now_iso()}
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
            self._held = True
            return
        raise SiteLocked(f"could not take {self.path}")

    def release(self) -> None:
        holder = self.holder()
        if self._held and holder and holder.get("pid") == os.getpid():
            self.path.unlink(missing_ok=True)
        self._held = False

    def __enter__(self) -> SiteLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
