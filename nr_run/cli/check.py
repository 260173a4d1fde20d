"""`nr-run check` (post-checks now) and `nr-run compliance` (drift + checks, reports, optionally repeated).

Argument parsing and output only: the work is runbooks.check.run_checks and runbooks.compliance.run_compliance.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from nr_run.cli.commands import load_intent
from nr_run.cli.common import EXIT_DIFF, EXIT_FAIL, EXIT_INVALID, EXIT_OK, UsageError, emit_json

_OPTION = re.compile(r"(?P<check>[A-Za-z0-9_-]+)\.(?P<key>[A-Za-z0-9_]+)=(?P<value>.*)", re.S)


def _checks(args: argparse.Namespace) -> list[str] | None:
    return [c.strip() for c in args.checks.split(",") if c.strip()] if getattr(args, "checks", None) else None


def parse_options(specs: list[str]) -> dict[str, dict[str, str]]:
    """`--option CHECK.KEY=VALUE` values -> {check: {key: value}}, validated by each check's Options model
    (values stay strings here; the model converts them). Any problem is a UsageError naming the option."""
    from nr_run.validators.base import InvalidOption, validate_options

    options: dict[str, dict[str, str]] = {}
    for spec in specs:
        m = _OPTION.fullmatch(spec.strip())
        if not m:
            raise UsageError(f"--option {spec!r}: use CHECK.KEY=VALUE, e.g. counters.interval_s=0.5")
        options.setdefault(m["check"], {})[m["key"]] = m["value"].strip()
    try:
        validate_options(options)
    except InvalidOption as exc:
        raise UsageError(f"--option: {exc}") from None
    return options


def check(args: argparse.Namespace) -> int:
    from nr_run.cli.lab import device_session
    from nr_run.runbooks.check import print_report, run_checks
    from nr_run.runbooks.records import RunRecords
    from nr_run.validators.base import UnknownCheck

    console = Console(stderr=args.json)
    options = parse_options(args.options)
    intent, findings = load_intent(args, console)
    if intent is None:
        return EXIT_INVALID
    try:
        with device_session(args) as nr:
            report = run_checks(nr, intent, _checks(args), options)
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


def _formats(spec: str) -> list[str]:
    from nr_run.runbooks.report.formats import WRITERS

    formats = [f.strip() for f in spec.split(",") if f.strip()]
    unknown = [f for f in formats if f != "table" and f not in WRITERS]
    if unknown:
        raise UsageError(f"unknown format(s): {', '.join(unknown)}")
    return formats


_EXIT = {"ok": EXIT_OK, "drift": EXIT_DIFF, "failed": EXIT_FAIL}


def _compliance_once(args: argparse.Namespace, console: Console, options: dict[str, Any]) -> int:
    from nr_run.cli.lab import device_session
    from nr_run.runbooks.check import print_report
    from nr_run.runbooks.compliance import run_compliance
    from nr_run.runbooks.records import RunRecords
    from nr_run.runbooks.report.formats import write_reports

    formats = _formats(args.format)
    intent, _ = load_intent(args, console)
    if intent is None:
        return EXIT_INVALID
    records = RunRecords(args.artifacts, args.site, "compliance")
    with device_session(args) as nr:
        result = run_compliance(nr, intent, records, options=options)
    out = Path(args.out) if args.out else records.dir
    write_reports(result.to_dict(), [f for f in formats if f != "table"], out)
    if args.json:
        emit_json(result.to_dict())
    elif "table" in formats:
        print_report(result.report, console)
        console.print(f"drift: {', '.join(result.drifted) or 'none'}; reports in {out}")
    return _EXIT[result.outcome]


def compliance(args: argparse.Namespace) -> int:
    console = Console(stderr=args.json)
    options = parse_options(args.options)
    if not args.every:
        return _compliance_once(args, console, options)
    period = _interval(args.every)
    while True:
        started = time.monotonic()
        rc = _compliance_once(args, console, options)
        console.print(f"compliance run exit {rc}; next in {args.every}")
        time.sleep(max(0.0, period - (time.monotonic() - started)))
