"""Compliance runbook: configuration drift (the deploy dry run) plus the post-checks, as one result.

Importable in a user's own Nornir script:

    result = run_compliance(nr, fabric, RunRecords(".nr-run", "dc1", "compliance"))
    result.to_dict()        # the check report plus "drift" and "drift_errors"
    result.outcome          # "ok" | "drift" | "failed"

Writing the report files is runbooks.report's job (`formats.write_reports(result.to_dict(), ...)`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from nornir.core import Nornir

from nr_run.intent.models import FabricIntent
from nr_run.runbooks.check import CheckReport, run_checks
from nr_run.runbooks.history import DEFAULT_RETENTION_S, record_report
from nr_run.runbooks.records import RunRecords
from nr_run.validators.base import Selection
from nr_run.validators.probes import Sleep

Outcome = Literal["ok", "drift", "failed"]


@dataclass
class ComplianceResult:
    report: CheckReport
    drift: dict[str, str] = field(default_factory=dict)          # device -> diff ("" at intent)
    drift_errors: dict[str, str] = field(default_factory=dict)   # device -> why it could not be diffed
    history_error: str = ""                                      # why the run is not in the history, if so

    @property
    def outcome(self) -> Outcome:
        """failed: a check failed or a device could not be diffed; drift: checks pass, configs differ."""
        if not self.report.passed or self.drift_errors:
            return "failed"
        return "drift" if any(self.drift.values()) else "ok"

    @property
    def drifted(self) -> list[str]:
        return sorted(n for n, d in self.drift.items() if d)

    def to_dict(self) -> dict[str, Any]:
        return {**self.report.to_dict(), "drift": dict(sorted(self.drift.items())),
                "drift_errors": dict(sorted(self.drift_errors.items()))}


def intended_configs(fabric: FabricIntent) -> dict[str, str]:
    """The rendered candidate config of every switch of the site."""
    from nr_run.runbooks.render import render_device, select_switches

    return {d.name: render_device(d, fabric) for d in select_switches(fabric)}


def run_compliance(nr: Nornir, fabric: FabricIntent, records: RunRecords, *,
                   configs: Mapping[str, str] | None = None, checks: list[str] | None = None,
                   options: Mapping[str, Mapping[str, Any]] | None = None, progress: Any = None,
                   sleep: Sleep = time.sleep, retention_s: float | None = DEFAULT_RETENTION_S,
                   selection: Mapping[str, Selection] | None = None) -> ComplianceResult:
    """Diff every switch against its intended config (a deploy dry run: nothing is committed), then run
    the checks and record them in the site's history (`retention_s` None: not recorded). `configs` default to
    the rendered intent of every switch; `checks`/`options` as for run_checks; `progress` a
    runbooks.progress.DeviceProgress (a silent one by default); `selection` (as for run_checks) narrows the
    run to its devices: only their configs are diffed, only they are read and judged."""
    from nr_run.runbooks.deploy import Deployment
    from nr_run.runbooks.progress import DeviceProgress

    configs = dict(configs) if configs is not None else intended_configs(fabric)
    if selection is not None:
        configs = {n: c for n, c in configs.items() if n in selection}
        nr = nr.filter(filter_func=lambda h: h.name in selection)
    drift_run = Deployment(nr, fabric, configs, records, progress or DeviceProgress(None, sorted(configs)))
    drift_run.dry_run()
    report = run_checks(nr, fabric, checks, options, sleep, progress=progress, selection=selection,
                        keep_connections=False)
    history_error = ""
    if retention_s is not None:
        _, history_error = record_report(records.artifacts, report, "compliance", retention_s)
        if history_error:
            records.log(history_error)
    devices = drift_run.report.devices
    return ComplianceResult(
        report=report,
        drift={n: d.diff for n, d in devices.items()},
        drift_errors={n: d.detail for n, d in devices.items() if d.state in ("failed", "skipped")},
        history_error=history_error,
    )
