"""Per-site deploy lock, host-wide: one deploy per site at a time on this host, whatever artifacts
folder or user runs it, naming the holder when refused.

The lock files live in one folder for the host: NR_RUN_LOCK_DIR, else /run/lock/nr-run (else
<tmp>/nr-run-locks). The folder is world-writable with the sticky bit, like /tmp, so every operator
can take a lock and only its owner can remove it.

A lock is an flock(2) on `<site>.lock`, not the file's existence: the kernel drops it when its process dies, so
a dead holder's lock is free at once and taking it over is the same atomic flock as taking a fresh one (no
"is it stale?" read followed by an unlink that a second process could race). The file carries the holder's
pid, user, host and time, so a refusal names them; it is removed (by its owner) on release, and a process
that locked a file removed meanwhile tries again on the new one.

The folder also lists the device markers of the deploys running on this host (`<site>.markers/<marker>`,
one small file each, with the pid and the process's start time): a marker found on a device whose run here
is dead is released by the next deploy of any operator on this host (runbooks.deploy_marker).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import getpass
import json
import os
import socket
import tempfile
from pathlib import Path
from typing import Any

from nr_run.runbooks.records import utc_now_iso

# bytes of a lock or marker file read back (they hold one small JSON object)
_INFO_MAX = 4096


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
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_start(pid: int) -> str:
    """The process's start time in clock ticks since boot (/proc/<pid>/stat field 22): with the pid, it names
    one process even after the pid is reused. "" when unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return ""
    fields = stat[stat.rfind(")") + 2:].split()
    return fields[19] if len(fields) > 19 else ""


def process_alive(pid: int, start: str) -> bool:
    """Is the process `pid` that started at `start` (process_start) still running?"""
    if not _alive(pid):
        return False
    now = process_start(pid)
    return not start or not now or now == start


def _read_info(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(_INFO_MAX)
        data = json.loads(raw.decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class SiteLock:
    """An flock on `<site>.lock` in the host's lock folder, held for the life of the run."""

    def __init__(self, site: str, directory: Path | str | None = None):
        self.dir = Path(directory) if directory is not None else lock_dir()
        self.path = self.dir / f"{site}.lock"
        self.site = site
        self._fd: int | None = None

    def holder(self) -> dict | None:
        return _read_info(self.path)

    def _make_dir(self) -> None:
        if not self.dir.is_dir():
            self.dir.mkdir(parents=True, exist_ok=True)
            # created concurrently by another user: theirs is already shared
            with contextlib.suppress(PermissionError):
                self.dir.chmod(0o1777)

    def _open(self) -> int:
        """The lock file, opened (created if missing). A file another user owns in a sticky folder is opened
        without O_CREAT (the kernel's protected_regular refuses O_CREAT there)."""
        while True:
            try:
                return os.open(self.path, os.O_RDWR | os.O_NOFOLLOW)
            except FileNotFoundError:
                pass
            except PermissionError:
                return os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            except FileExistsError:
                continue
            with contextlib.suppress(OSError):
                os.fchmod(fd, 0o666)       # a later holder of another user writes its name into it
            return fd

    def acquire(self) -> None:
        self._make_dir()
        for _ in range(50):
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                holder = self.holder() or {}
                raise SiteLocked(
                    f"site {self.site} is locked by {holder.get('user', '?')}@{holder.get('host', '?')} "
                    f"pid {holder.get('pid', '?')} since {holder.get('since', '?')} ({self.path})"
                ) from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path, follow_symlinks=False).st_ino
            except FileNotFoundError:
                same = False
            if not same:            # released (and removed) between our open and our flock: use the new file
                os.close(fd)
                continue
            info = {"pid": os.getpid(), "user": getpass.getuser(), "host": socket.gethostname(),
                    "since": utc_now_iso(), "start": process_start(os.getpid())}
            with contextlib.suppress(OSError):      # read-only (another user's file): held, unnamed
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps(info).encode(), 0)
            self._fd = fd
            return
        raise SiteLocked(f"could not take {self.path}")

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            # removed while still locked: a process waiting on this file sees it gone and takes a new one
            try:
                self.path.unlink()
            except PermissionError:         # another user's file: emptied instead
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
            except FileNotFoundError:
                pass
        finally:
            os.close(fd)

    def __enter__(self) -> SiteLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


# ---------------------------------------------------------------- markers of the deploys running here

def _marker_dir(site: str, directory: Path | None = None) -> Path:
    return (directory or lock_dir()) / f"{site}.markers"


def register_marker(site: str, marker: str, directory: Path | None = None) -> Path:
    """Record that this process placed `marker` on devices of `site` (removed by unregister_marker)."""
    folder = _marker_dir(site, directory)
    if not folder.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(PermissionError):
            folder.chmod(0o1777)
    path = folder / marker
    info = {"pid": os.getpid(), "start": process_start(os.getpid()), "user": getpass.getuser(),
            "host": socket.gethostname(), "since": utc_now_iso()}
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w") as fh:
        json.dump(info, fh)
    return path


def unregister_marker(site: str, marker: str, directory: Path | None = None) -> None:
    with contextlib.suppress(OSError):
        (_marker_dir(site, directory) / marker).unlink()


def dead_markers(site: str, directory: Path | None = None) -> dict[str, dict[str, Any]]:
    """Markers placed by deploys of `site` on this host whose process is gone: marker -> its record."""
    folder = _marker_dir(site, directory)
    if not folder.is_dir():
        return {}
    here = socket.gethostname()
    dead: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.iterdir())[:1000]:
        info = _read_info(path)
        if info is None or info.get("host") != here:
            continue
        pid = info.get("pid")
        if isinstance(pid, int) and not process_alive(pid, str(info.get("start", ""))):
            dead[path.name] = info
    return dead
