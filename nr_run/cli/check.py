"""`nr-run check` (post-checks now) and `nr-run compliance` (drift + checks, reports, optionally repeated)."""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from rich.console import Console

from nr_run.cli.commands import load_intent
from nr_run.cli.common import EXIT_DIFF, EXIT_FAIL, EXIT_INVALID, EXIT_OK, UsageError, emit_json


def _checks(args) -> list[str] | None:
    return [c.strip() for c in args.checks.split(",") if c.strip()] if getattr(args, "checks", None) else None


def check(args: argparse.Namespace) -> int:
    from nr_run.cli.lab import device_session
    from nr_run.runbooks.check import print_report, run_checks
    from nr_run.runbooks.records import RunRecords
    from nr_run.validators.base import UnknownCheck

    console = Console(stderr=args.json)
    intent, findings = load_intent(args, console)
    if intent is None:
        return EXIT_INVALID
    try:
        with device_session(args) as nr:
            report = run_checks(nr, intent, _checks(args))
    except UnknownCheck as exc:
        raise UsageError(str(exc)) from exc
    RunRecords(args.artifacts, args.site, "check").write_json("results.json", report.to_dict())
    if args.json:
        emit_json(report.to_dict())
    else:
        print_report(report, console)
    return EXIT_OK if report.passed else EXIT_FAIL


def _interval(spec: str) -> float:
    match = re.fullmatch(r"(\d+)([smh])", spec.strip())
    if not match:
        raise UsageError(f"--every {spec!r}: use e.g. 90s, 15m, 1h")
    return int(match.group(1)) * {"s": 1, "m": 60, "h": 3600}[match.group(2)]


def _compliance_once(args: argparse.Namespace, console: Console) -> int:
    from nr_run.cli.commands import select_switches
    from nr_run.cli.lab import device_session
    from nr_run.runbooks.check import print_report, run_checks
    from nr_run.runbooks.deploy import Deployment
    from nr_run.runbooks.progress import DeviceProgress
    from nr_run.runbooks.records import RunRecords
    from nr_run.runbooks.render import render_device
    from nr_run.runbooks.report.formats import WRITERS

    formats = [f.strip() for f in args.format.split(",") if f.strip()]
    unknown = [f for f in formats if f != "table" and f not in WRITERS]
    if unknown:
        raise UsageError(f"unknown format(s): {', '.join(unknown)}")
    intent, _ = load_intent(args, console)
    if intent is None:
        return EXIT_INVALID
    names = select_switches(intent, None, None)
    configs = {n: render_device(intent.devices[n], intent) for n in names}
    records = RunRecords(args.artifacts, args.site, "compliance")
    with device_session(args) as nr:
        drift_run = Deployment(nr, intent, configs, records, DeviceProgress(None, names))
        drift_run.dry_run()
        report = run_checks(nr, intent, None)
    drift = {n: d.diff for n, d in drift_run.report.devices.items()}
    unreachable = {n: d.detail for n, d in drift_run.report.devices.items() if d.state in ("failed", "skipped")}
    payload = {**report.to_dict(), "drift": drift, "drift_errors": unreachable}
    out = Path(args.out) if args.out else records.dir
    out.mkdir(parents=True, exist_ok=True)
    for fmt in formats:
        if fmt in WRITERS:
            filename, writer = WRITERS[fmt]
            (out / filename).write_text(writer(payload), encoding="utf-8")
    if args.json:
        emit_json(payload)
    elif "table" in formats:
        print_report(report, console)
        drifted = sorted(n for n, d in drift.items() if d)
        console.print(f"drift: {', '.join(drifted) or 'none'}; reports in {out}")
    if not report.passed or unreachable:
        return EXIT_FAIL
    return EXIT_DIFF if any(drift.values()) else EXIT_OK


def compliance(args: argparse.Namespace) -> int:
    console = Console(stderr=args.json)
    if not args.every:
        return _compliance_once(args, console)
    period = _interval(args.every)
    while True:
        started = time.monotonic()
        rc = _compliance_once(args, console)
        console.print(f"compliance run exit {rc}; next in {args.every}")
        time.sleep(max(0.0, period - (time.monotonic() - started)))
