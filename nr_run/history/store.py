"""HistoryStore: record collections, prune by age, and the queries the reports read."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nr_run.history.model import Collection, counter_values
from nr_run.history.schema import connect, connect_readonly

SeriesKey = tuple[str, str, str, int]               # device, port, counter, idx
# An observation value that is an abnormal state: its first sighting is an event too (a storm already going on
# when the history starts is shown, a healthy link is not)
NORMAL = {"storm": "clear", "link": "up", "bgp": "Established"}
PRUNE_EVERY_S = 3600.0


@dataclass(frozen=True)
class Recorded:
    run_id: int
    new_findings: int
    resolved_findings: int
    events: int
    samples: int


class HistoryStore:
    """One site's history database. Thread-safe for one process (a lock around each transaction); several
    processes may write it (WAL, busy timeout)."""

    def __init__(self, path: Path | str, site: str, readonly: bool = False):
        self.path = Path(path)
        self.site = site
        # a reader (report, exporter start-up) never writes: not even the schema or WAL mode
        self.db = connect_readonly(self.path, site) if readonly else connect(self.path, site)
        self._lock = threading.Lock()
        self._series: dict[SeriesKey, int] | None = None
        self._last: dict[int, int] = {}
        self._cached_run: int | None = None      # the last run these caches saw (another writer invalidates)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------ recording

    def _load_series(self) -> dict[SeriesKey, int]:
        if self._series is None:
            self._series = {(d, p, c, i): sid for sid, d, p, c, i in
                            self.db.execute("SELECT id, device, port, counter, idx FROM series")}
            self._last = dict(self.db.execute(
                "SELECT s.series_id, s.value FROM samples s JOIN "
                "(SELECT series_id, MAX(run_id) AS run_id FROM samples GROUP BY series_id) m "
                "ON s.series_id = m.series_id AND s.run_id = m.run_id"))
        return self._series

    def record(self, c: Collection) -> Recorded:
        """Store one collection in one transaction."""
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                # another process may have written since this one loaded its caches: then reload them
                latest = self.db.execute("SELECT MAX(id) FROM runs").fetchone()[0]
                if latest != self._cached_run:
                    self._series = None
                out = self._record(c)
                self.db.execute("COMMIT")
                self._cached_run = out.run_id
            except BaseException:
                self.db.execute("ROLLBACK")
                self._series = None
                raise
        return out

    def _record(self, c: Collection) -> Recorded:
        cur = self.db.execute(
            "INSERT INTO runs(kind, source, started, finished, checks, devices, failed) VALUES (?,?,?,?,?,?,?)",
            (c.kind, c.source, c.started, c.finished, json.dumps(sorted(c.checks)), len(c.devices), c.failed))
        run = int(cur.lastrowid or 0)
        self.db.executemany(
            "INSERT INTO run_devices(run_id, device, t, sampled, error) VALUES (?,?,?,?,?)",
            [(run, d, c.sample_times.get(d, c.started), int(d in c.samples),
              json.dumps(dict(sorted(c.errors[d].items()))) if d in c.errors else None) for d in c.devices])
        samples = self._record_samples(run, c)
        events = self._record_observations(run, c)
        new, resolved = self._record_findings(run, c)
        return Recorded(run, new, resolved, events, samples)

    def _record_samples(self, run: int, c: Collection) -> int:
        series = self._load_series()
        rows: list[tuple[int, int, int]] = []
        for device in sorted(c.samples):
            for port, name, idx, value in counter_values(c.samples[device]):
                key = (device, port, name, idx)
                sid = series.get(key)
                if sid is None:
                    sid = int(self.db.execute("INSERT INTO series(device, port, counter, idx) VALUES (?,?,?,?)",
                                              key).lastrowid or 0)
                    series[key] = sid
                if self._last.get(sid) != value:
                    rows.append((sid, run, value))
                    self._last[sid] = value
        self.db.executemany("INSERT INTO samples(series_id, run_id, value) VALUES (?,?,?)", rows)
        return len(rows)

    def _record_observations(self, run: int, c: Collection) -> int:
        known = {(d, k, p, i): v for d, k, p, i, v in
                 self.db.execute("SELECT device, kind, port, idx, value FROM state")}
        events: list[tuple[Any, ...]] = []
        upserts: list[tuple[Any, ...]] = []
        for o in c.observations:
            key = (o.device, o.kind, o.port, o.idx)
            t = c.sample_times.get(o.device, c.started)
            old = known.get(key)
            if old == o.value:
                continue
            if old is not None or o.value != NORMAL.get(o.kind):
                events.append((run, t, o.device, o.kind, o.port, o.idx, old, o.value))
            upserts.append((*key, o.value, t))
        self.db.executemany("INSERT INTO events(run_id, t, device, kind, port, idx, old, new) "
                            "VALUES (?,?,?,?,?,?,?,?)", events)
        self.db.executemany("INSERT OR REPLACE INTO state(device, kind, port, idx, value, since) "
                            "VALUES (?,?,?,?,?,?)", upserts)
        return len(events)

    def _record_findings(self, run: int, c: Collection) -> tuple[int, int]:
        """Failed findings open (first seen) or stay open (last seen); an open one is resolved when the same
        expectation passes now, or when its check ran on its device without collection errors and did not
        report it again. A check that did not run, or a device it could not read, resolves nothing."""
        t = c.started
        # a finding's identity across runs is its id (what and where, from structured fields): neither its
        # wording nor the observed value (a counter rate changes); the latest wording is kept
        open_ = {r[1]: (r[0], r[2], r[3]) for r in self.db.execute(
            "SELECT id, fid, check_name, device FROM findings WHERE resolved IS NULL")}
        failed = {f.id: f for f in c.findings if not f.passed}
        passed = {f.id for f in c.findings if f.passed}
        evaluated = {(f.check, f.device) for f in c.findings if f.device not in c.errors}
        new = 0
        for key, f in sorted(failed.items()):
            if key in open_:
                self.db.execute("UPDATE findings SET last_seen=?, last_run=?, severity=?, target=?, expected=?, "
                                "observed=?, hint=? WHERE id=?",
                                (t, run, f.severity, f.target, f.expected, f.observed, f.hint, open_[key][0]))
            else:
                self.db.execute(
                    "INSERT INTO findings(fid, check_name, device, target, port, peer_device, peer_port, kind, idx, "
                    "severity, expected, observed, hint, first_seen, last_seen, first_run, last_run) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (key, f.check, f.device, f.target, f.port, f.peer_device, f.peer_port, f.kind, f.index,
                     f.severity, f.expected, f.observed, f.hint, t, t, run, run))
                new += 1
        gone = [row for key, (row, check, device) in open_.items()
                if key not in failed and (key in passed or (check, device) in evaluated)]
        self.db.executemany("UPDATE findings SET resolved=?, resolved_run=? WHERE id=?",
                            [(t, run, fid) for fid in gone])
        return new, len(gone)

    # ------------------------------------------------------------ retention

    def prune(self, retention_s: float, now: float | None = None) -> dict[str, int]:
        """Delete what is older than the retention: runs and their device rows, events, resolved findings, and
        counter rows, keeping for each series its last row before the cutoff (the value in force after it)."""
        cutoff = (time.time() if now is None else now) - retention_s
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                first = self.db.execute("SELECT MIN(id) FROM runs WHERE started >= ?", (cutoff,)).fetchone()[0]
                first = first if first is not None else (self.db.execute(
                    "SELECT COALESCE(MAX(id), 0) + 1 FROM runs").fetchone()[0])
                counts = {
                    "samples": self.db.execute(
                        "DELETE FROM samples WHERE run_id < ? AND run_id < (SELECT MAX(s2.run_id) FROM samples s2 "
                        "WHERE s2.series_id = samples.series_id AND s2.run_id < ?)", (first, first)).rowcount,
                    "run_devices": self.db.execute("DELETE FROM run_devices WHERE run_id < ?", (first,)).rowcount,
                    "runs": self.db.execute("DELETE FROM runs WHERE id < ?", (first,)).rowcount,
                    "events": self.db.execute("DELETE FROM events WHERE t < ?", (cutoff,)).rowcount,
                    "findings": self.db.execute("DELETE FROM findings WHERE resolved IS NOT NULL AND resolved < ?",
                                                (cutoff,)).rowcount,
                }
                self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('last_prune', ?)",
                                (repr(time.time() if now is None else now),))
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self._series = None
        return counts

    def maybe_prune(self, retention_s: float, now: float | None = None) -> dict[str, int] | None:
        """prune() at most once an hour (a watch records every 30 s; pruning each time would only cost)."""
        row = self.db.execute("SELECT value FROM meta WHERE key='last_prune'").fetchone()
        t = time.time() if now is None else now
        if row is not None and t - float(row[0]) < PRUNE_EVERY_S:
            return None
        return self.prune(retention_s, t)

    # ------------------------------------------------------------ queries

    def runs(self, since: float, until: float) -> list[dict[str, Any]]:
        cols = ("id", "kind", "source", "started", "finished", "checks", "devices", "failed")
        rows = self.db.execute(f"SELECT {', '.join(cols)} FROM runs WHERE started >= ? AND started <= ? "
                               "ORDER BY id", (since, until))
        return [dict(zip(cols, r, strict=True)) | {"checks": json.loads(r[5])} for r in rows]

    _FINDING_COLS = ("id", "fid", "check_name", "device", "target", "port", "peer_device", "peer_port", "kind",
                     "idx", "severity", "expected", "observed", "hint", "first_seen", "last_seen", "resolved")

    def findings(self, where: str, params: Iterable[Any]) -> list[dict[str, Any]]:
        rows = self.db.execute(f"SELECT {', '.join(self._FINDING_COLS)} FROM findings WHERE {where} "
                               "ORDER BY first_seen, check_name, device, target", tuple(params))
        out = []
        for r in rows:
            d = dict(zip(self._FINDING_COLS, r, strict=True))
            d["check"], d["index"] = d.pop("check_name"), d.pop("idx")
            out.append(d)
        return out

    def events(self, since: float, until: float) -> list[dict[str, Any]]:
        cols = ("t", "device", "kind", "port", "idx", "old", "new")
        rows = self.db.execute(f"SELECT {', '.join(cols)} FROM events WHERE t >= ? AND t <= ? ORDER BY t, id",
                               (since, until))
        return [dict(zip(cols, r, strict=True)) for r in rows]

    def sample_times(self, since: float, until: float) -> dict[str, list[tuple[int, float]]]:
        """Per device, (run id, time) of every run that sampled its counters, from the last one before
        `since` (the baseline of the window) to `until`."""
        out: dict[str, list[tuple[int, float]]] = {}
        # SQLite takes the bare run_id of a MAX() aggregate from the row holding the maximum
        for device, run, t in self.db.execute(
                "SELECT device, run_id, MAX(t) FROM run_devices WHERE sampled = 1 AND t < ? GROUP BY device "
                "ORDER BY device", (since,)):
            out[device] = [(run, t)]
        for device, run, t in self.db.execute(
                "SELECT device, run_id, t FROM run_devices WHERE sampled = 1 AND t >= ? AND t <= ? "
                "ORDER BY device, run_id", (since, until)):
            out.setdefault(device, []).append((run, t))
        return out

    def series_rows(self, first_run: int, last_run: int, counters: Iterable[str] | None = None
                    ) -> dict[SeriesKey, list[tuple[int, int]]]:
        """Per series, (run id, value) rows from its last row at or before `first_run` to `last_run`."""
        names = sorted(counters) if counters is not None else None
        filt = f"AND s.counter IN ({','.join('?' * len(names))})" if names else ""
        sql = (f"SELECT s.device, s.port, s.counter, s.idx, x.run_id, x.value FROM samples x "
               f"JOIN series s ON s.id = x.series_id WHERE x.run_id <= ? {filt} AND x.run_id >= COALESCE("
               f"(SELECT MAX(y.run_id) FROM samples y WHERE y.series_id = x.series_id AND y.run_id <= ?), 0) "
               f"ORDER BY x.series_id, x.run_id")
        out: dict[SeriesKey, list[tuple[int, int]]] = {}
        for d, p, c, i, run, value in self.db.execute(sql, (last_run, *(names or []), first_run)):
            out.setdefault((d, p, c, i), []).append((run, value))
        return out

    def size_bytes(self) -> int:
        """The database's size on disk, its write-ahead log included."""
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database file."""
        with self._lock:
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

