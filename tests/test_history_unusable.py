"""`report` on a history database it cannot use: one line and exit 1 within seconds, never a traceback, and
opening it writes nothing (not the schema, not WAL files). A read-only history is read. A bad audit line is
skipped and said."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from nr_run.cli.main import main
from nr_run.history.store import HistoryStore
from tests.conftest import DC1, REPO


def _valid(path: Path, site: str = "dc1") -> None:
    HistoryStore(path, site).close()


def _garbage(path: Path) -> None:
    path.write_bytes(b"\x00\xffnot a database" * 500)


def _truncated(path: Path) -> None:
    _valid(path)
    path.write_bytes(path.read_bytes()[:1500])


def _newer(path: Path) -> None:
    _valid(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version=99")
    db.close()


def _other_site(path: Path) -> None:
    _valid(path, "dc2")


def _foreign_tables(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x)")
    db.close()


def _wrong_columns(path: Path) -> None:
    _valid(path)
    db = sqlite3.connect(path)
    db.execute("DROP TABLE findings")
    db.execute("CREATE TABLE findings (x)")
    db.close()


def _corrupt_pages(path: Path) -> None:
    _valid(path)
    data = bytearray(path.read_bytes())
    data[4096:8192] = b"\xa5" * 4096           # the second page and on: the schema's tables point into noise
    data[8192:len(data)] = b"\x5a" * (len(data) - 8192)
    path.write_bytes(bytes(data))


def _directory(path: Path) -> None:
    path.mkdir()


def _to_proc(path: Path) -> None:
    path.symlink_to("/proc/self/status")


def _to_dev(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _empty(path: Path) -> None:
    path.write_bytes(b"")


UNUSABLE: dict[str, Callable[[Path], None]] = {
    "empty": _empty, "garbage": _garbage, "truncated": _truncated, "newer schema": _newer,
    "another site": _other_site, "foreign tables": _foreign_tables, "wrong columns": _wrong_columns,
    "corrupt pages": _corrupt_pages, "a directory": _directory, "symlink to /proc": _to_proc,
    "symlink to /dev/zero": _to_dev}


def _argv(art: Path) -> list[str]:
    return ["report", "--site", "dc1", "--inventory-dir", str(DC1.parent), "--artifacts", str(art)]


def _report(art: Path, capfd: pytest.CaptureFixture[str] | None = None) -> subprocess.CompletedProcess:
    """`nr-run report` on `art`: in this process when capfd is given (what it prints, at the descriptors too),
    else as a process of its own with a 10 s bound (a device file that could be read forever)."""
    if capfd is None:
        return subprocess.run([sys.executable, "-m", "nr_run.cli.main", *_argv(art)], cwd=REPO, capture_output=True,
                              text=True, timeout=10)
    capfd.readouterr()
    rc = main(_argv(art))
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(_argv(art), rc, out, err)


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.name: (p.read_bytes() if p.is_file() and not p.is_symlink() else b"")
            for p in sorted(folder.iterdir())}


DEVICE_FILES = {"symlink to /proc", "symlink to /dev/zero"}     # their own process: a read could never end


@pytest.mark.parametrize("variant", sorted(UNUSABLE))
def test_an_unusable_history_is_one_line_and_is_not_written(tmp_path, capfd, variant):
    art = tmp_path / "art"
    history = art / "history"
    history.mkdir(parents=True)
    UNUSABLE[variant](history / "dc1.sqlite")
    before = _tree(history)
    done = _report(art, None if variant in DEVICE_FILES else capfd)
    assert "Traceback" not in done.stderr + done.stdout, (done.stdout + done.stderr)[-3000:]
    assert done.returncode == 1, (done.stdout + done.stderr)[-3000:]
    said = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.strip()]
    assert len(said) == 1 and said[0].startswith("history of dc1 unusable: "), said
    assert _tree(history) == before                      # nothing created, migrated or changed


def test_a_read_only_history_is_read_and_left_as_it_was(tmp_path, capfd):
    art = tmp_path / "art"
    history = art / "history"
    history.mkdir(parents=True)
    _valid(history / "dc1.sqlite")
    (history / "dc1.sqlite").chmod(0o400)
    history.chmod(0o500)
    try:
        before = _tree(history)
        done = _report(art, capfd)
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        assert "0 collections" in done.stdout
        assert _tree(history) == before
    finally:
        history.chmod(0o700)


def test_a_bad_audit_line_is_skipped_and_said(tmp_path, capfd):
    art = tmp_path / "art"
    (art / "history").mkdir(parents=True)
    _valid(art / "history" / "dc1.sqlite")
    good = ('{"id": "a1", "phase": "start", "site": "dc1", "device": "rtsw1", "action": "commit", '
            '"outcome": "started", "time": "2026-12-01T00:00:00+00:00"}\n')
    (art / "audit.jsonl").write_bytes(good.encode() + b"\xff\xfe{not json\n" + b'["a", "list"]\n' +
                                      b'{"id": 7, "phase": "end"}\n' + b"[" * 100000 + b"\n")
    done = _report(art, capfd)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "Traceback" not in done.stderr
    assert "audit.jsonl: skipped 4 malformed line(s) (line 2, 3, 4, 5)" in " ".join(done.stdout.split())
