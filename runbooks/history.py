"""Recording runs into the site's history database (`<artifacts>/history/<site>.sqlite`, nr_run.history).

    record_report(artifacts, report, "check")        after run_checks (the CLI's check, compliance, watch)

Recording never fails the run it records: a database that cannot be written is returned as a message for the
caller to show (and log), and the run's own results stand.
"""

from __future__ import annotations

import time
from pathlib import Path

from nr_run.history.model import Collection, wall_time
from nr_run.history.store import HistoryStore, Recorded
from nr_run.runbooks.check import CheckReport
from nr_run.runbooks.records import private_dir

DEFAULT_RETENTION_S = 14 * 86400


def history_path(artifacts: Path | str, site: str) -> Path:
    return Path(artifacts) / "history" / f"{site}.sqlite"


def open_store(artifacts: Path | str, site: str) -> HistoryStore:
    """The site's history database, created (folder 0700, file 0600) when missing."""
    path = history_path(artifacts, site)
    private_dir(path.parent)
    return HistoryStore(path, site)


def collection_of(report: CheckReport, kind: str, source: str = "poll") -> Collection:
    """The history's part of a check report: its latest counter samples, observations and findings."""
    now_wall, now_mono = time.time(), time.monotonic()
    return Collection(kind=kind, source=source, started=report.started, finished=report.finished or now_wall,
                      samples=report.samples,
                      sample_times={n: wall_time(s.taken_at, now_wall, now_mono) for n, s in report.samples.items()},
                      observations=list(report.observations), findings=list(report.findings),
                      checks=list(report.checks),
                      errors={n: dict(e) for n, e in report.collection_errors.items()}, devices=list(report.hosts))


def record_collection(artifacts: Path | str, site: str, collection: Collection,
                      retention_s: float = DEFAULT_RETENTION_S) -> tuple[Recorded | None, str]:
    """Record one collection (pruning at most hourly); (what was recorded, "") or (None, why not)."""
    recorder = HistoryRecorder(artifacts, site, retention_s)
    try:
        return recorder(collection)
    finally:
        recorder.close()


class HistoryRecorder:
    """Records a watch's collections into one store kept open between them (reopened after a failure)."""

    def __init__(self, artifacts: Path | str, site: str, retention_s: float = DEFAULT_RETENTION_S):
        self.artifacts, self.site, self.retention_s = artifacts, site, retention_s
        self._store: HistoryStore | None = None

    def __call__(self, collection: Collection) -> tuple[Recorded | None, str]:
        try:
            if self._store is None:
                self._store = open_store(self.artifacts, self.site)
            recorded = self._store.record(collection)
            self._store.maybe_prune(self.retention_s)
            return recorded, ""
        except Exception as exc:    # HistoryError, a full disk: the run's results stand, a watch goes on and
            # its next collection tries a fresh connection
            self.close()
            return None, f"history not recorded ({history_path(self.artifacts, self.site)}): {type(exc).__name__}: {exc}"

    def close(self) -> None:
        if self._store is not None:
            try:
                self._store.close()
            finally:
                self._store = None


def record_report(artifacts: Path | str, report: CheckReport, kind: str,
                  retention_s: float = DEFAULT_RETENTION_S) -> tuple[Recorded | None, str]:
    """Record a check report (its device states and findings) as a run of `kind`."""
    return record_collection(artifacts, report.site, collection_of(report, kind), retention_s)
