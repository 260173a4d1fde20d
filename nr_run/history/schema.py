"""The history database's schema (docs/history.md describes every table), versioned with PRAGMA user_version.

Counters are stored as series (device, port, counter, index) with a row only when the value changed since the
series' previous row (the first reading of a series is always stored): unchanged counters cost nothing, and a
value at any sampled time is the last row at or before it. `run_devices` says when each device was sampled,
so a series' readings between its rows are known to be unchanged.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

VERSION = 2


class HistoryError(RuntimeError):
    """The database cannot be used (written by a newer nr-run, not a history database, unreadable)."""


DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, source TEXT NOT NULL,
    started REAL NOT NULL, finished REAL NOT NULL, checks TEXT NOT NULL,
    devices INTEGER NOT NULL, failed INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS runs_started ON runs(started);
CREATE TABLE IF NOT EXISTS run_devices (
    run_id INTEGER NOT NULL, device TEXT NOT NULL, t REAL NOT NULL, sampled INTEGER NOT NULL, error TEXT,
    PRIMARY KEY (device, run_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS series (
    id INTEGER PRIMARY KEY, device TEXT NOT NULL, port TEXT NOT NULL, counter TEXT NOT NULL,
    idx INTEGER NOT NULL, UNIQUE (device, port, counter, idx));
CREATE TABLE IF NOT EXISTS samples (
    series_id INTEGER NOT NULL, run_id INTEGER NOT NULL, value INTEGER NOT NULL,
    PRIMARY KEY (series_id, run_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state (
    device TEXT NOT NULL, kind TEXT NOT NULL, port TEXT NOT NULL, idx INTEGER NOT NULL,
    value TEXT NOT NULL, since REAL NOT NULL, PRIMARY KEY (device, kind, port, idx)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, t REAL NOT NULL, device TEXT NOT NULL,
    kind TEXT NOT NULL, port TEXT NOT NULL, idx INTEGER NOT NULL, old TEXT, new TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_t ON events(t);
CREATE TABLE IF NOT EXISTS findings (
    id INTEGER PRIMARY KEY, check_name TEXT NOT NULL, device TEXT NOT NULL, target TEXT NOT NULL,
    port TEXT NOT NULL, peer_device TEXT NOT NULL, peer_port TEXT NOT NULL, severity TEXT NOT NULL,
    expected TEXT NOT NULL, observed TEXT NOT NULL, hint TEXT NOT NULL,
    first_seen REAL NOT NULL, last_seen REAL NOT NULL, resolved REAL,
    first_run INTEGER NOT NULL, last_run INTEGER NOT NULL, resolved_run INTEGER,
    fid TEXT NOT NULL DEFAULT '', kind TEXT NOT NULL DEFAULT '', idx INTEGER);
CREATE INDEX IF NOT EXISTS findings_open ON findings(resolved);
CREATE INDEX IF NOT EXISTS findings_seen ON findings(last_seen);
"""

# Schema 1 keyed findings on their wording (target); 2 keys them on Finding.id. An open finding of schema 1 gets
# the id its structured fields give without kind and index: one that has a kind opens anew once, under its
# full id, and the old row is resolved by the next run that judges it.
MIGRATE = {1: """
ALTER TABLE findings ADD COLUMN fid TEXT NOT NULL DEFAULT '';
ALTER TABLE findings ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE findings ADD COLUMN idx INTEGER;
UPDATE findings SET fid = check_name || '/' || device || '/' || port || '/' || peer_device || ':' || peer_port || '//';
"""}


# the tables every reader queries: a database without them is not a history database
TABLES = ("meta", "runs", "run_devices", "series", "samples", "state", "events", "findings")


def connect_readonly(path: Path, site: str) -> sqlite3.Connection:
    """Open the history of `site` at `path` for reading only: nothing is created, migrated or written (a
    read-only file, folder or mount works; a file that is not this site's history is a HistoryError)."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise HistoryError(f"{path}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise HistoryError(f"{path}: not a regular file")
    if info.st_size == 0:
        raise HistoryError(f"{path}: empty (no history recorded in it)")
    # no write-ahead log beside it: no writer is active, and the file alone is the database. Opened immutable,
    # SQLite creates nothing (a WAL reader would add -shm/-wal files, which a read-only folder refuses)
    quiet = not Path(f"{path}-wal").exists()
    try:
        db = sqlite3.connect(f"{Path(path).absolute().as_uri()}?mode=ro{'&immutable=1' if quiet else ''}",
                             uri=True, timeout=5, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise HistoryError(f"{path}: {exc}") from exc
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > VERSION:
            raise HistoryError(f"{path}: history schema {version} is newer than this nr-run's ({VERSION})")
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        missing = [t for t in TABLES if t not in tables]
        if missing:
            raise HistoryError(f"{path}: not a history database (no table {', '.join(missing[:3])})")
        row = db.execute("SELECT value FROM meta WHERE key='site'").fetchone()
        if row is None or row[0] != site:
            raise HistoryError(f"{path} holds the history of site {row[0] if row else '?'!r}, not {site!r}")
    except sqlite3.Error as exc:
        db.close()
        raise HistoryError(f"{path}: {exc}") from exc
    except HistoryError:
        db.close()
        raise
    return db


def connect(path: Path, site: str) -> sqlite3.Connection:
    """Open (creating 0600, WAL) the history of `site` at `path`, at this schema version."""
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))   # never readable by others, not even briefly
    try:
        db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > VERSION:
            db.close()
            raise HistoryError(f"{path}: history schema {version} is newer than this nr-run's ({VERSION})")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        if version < VERSION:
            steps = "".join(MIGRATE[v] for v in range(version, VERSION) if v in MIGRATE) if version else ""
            db.executescript("BEGIN IMMEDIATE;" + steps + DDL + f"PRAGMA user_version={VERSION}; COMMIT;")
        db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('site', ?)", (site,))
        stored = db.execute("SELECT value FROM meta WHERE key='site'").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise HistoryError(f"{path}: {exc}") from exc
    if stored != site:
        db.close()
        raise HistoryError(f"{path} holds the history of site {stored!r}, not {site!r}")
    return db
