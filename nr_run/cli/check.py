"""`nr-run check` (post-checks now) and `nr-run compliance` (drift + checks, reports, optionally repeated).

Argument parsing and output only: the work is runbooks.check.run_checks and runbooks.compliance.run_compliance.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from nr_run.cli import args as types
from nr_run.cli.commands import announce_lab, load_intent
from nr_run.cli.common import (
    EXIT_DIFF,
    EXIT_FAIL,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_UNKNOWN,
    UsageError,
    emit_json,
    emit_text,
    make_console,
    verbosity,
)

_OPTION = re.compile(r"(?P<check>[A-Za-z0-9_-]+)\.(?P<key>[A-Za-z0-9_]+)=(?P<value>.*)", re.S)


def _checks(args: argparse.Namespace, catalog: Any = None) -> list[str] | None:
    """--checks, else the site catalog's selection, else every check (None)."""
    if getattr(args, "checks", None):
        return [c.strip() for c in args.checks.split(",") if c.strip()]
    return list(catalog.checks) if catalog is not None and catalog.checks is not None else None


def _split(text: str | None) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()] if text else []


def device_filter(args: argparse.Namespace, intent: Any, nr: Any) -> set[str] | None:
    """The devices --hosts, --role and --tags select (None: no filter). A tag is one of the host's Nornir
    groups or an entry of its data.tags. An unknown host, or a filter that matches nothing, is a usage error."""
    hosts, tags = _split(getattr(args, "hosts", None)), _split(getattr(args, "tags", None))
    role = getattr(args, "role", None)
    if not hosts and not tags and not role:
        return None
    names = set(intent.devices)
    if hosts:
        unknown = [h for h in hosts if h not in intent.devices]
        if unknown:
            raise UsageError(f"--hosts: not a device of site {intent.site}: {', '.join(unknown[:5])}")
        names &= set(hosts)
    if role:
        names = {n for n in names if intent.devices[n].role == role}
    if tags:
        def tagged(name: str) -> bool:
            host = nr.inventory.hosts.get(name)
            if host is None:
                return False
            have = {str(g) for g in host.groups} | {str(t) for t in (host.data.get("tags") or [])
                                                    if isinstance(host.data.get("tags"), list)}
            return bool(have & set(tags))
        names = {n for n in names if tagged(n)}
    if not names:
        raise UsageError(f"no device matches --hosts {args.hosts or '-'} --role {role or '-'} --tags {args.tags or '-'}")
    return names


def selection_of(names: set[str] | None, checks: list[str] | None, options: Any) -> Any:
    """run_checks' selection for the filtered devices: every selected check on each of them."""
    if names is None:
        return None
    from nr_run.validators.base import Selection, select

    chosen = frozenset(c.name for c in select(checks, options))
    return {n: Selection(chosen) for n in sorted(names)}


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


def site_options(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The check options of a run: the site catalog's thresholds with --option values over them, key by key."""
    from nr_run.runbooks.catalog import load_catalog
    from nr_run.runbooks.inventory import site_dir

    return load_catalog(site_dir(args.site, args.inventory_dir)).merged_options(parse_options(args.options))


def _progress(args: argparse.Namespace, console: Console, intent: Any, title: str) -> Any:
    """Live progress on the console (lines when not a terminal); none with -q, or with --json unless -v."""
    from nr_run.runbooks.progress import DeviceProgress

    level = verbosity(args)
    show = None if level < 0 or (args.json and level < 1) else console
    return DeviceProgress(show, sorted(intent.devices), title=title)


def _interrupted(stop: Any, console: Console) -> None:
    """Stop now: device calls still in flight hold worker threads, so the process does not wait for them."""
    import os
    import sys

    console.print(f"[red]interrupted ({stop.reason})[/]: no results written")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(EXIT_FAIL)


def check(args: argparse.Namespace) -> int:
    from nr_run.cli.lab import device_session
    from nr_run.runbooks.catalog import load_catalog
    from nr_run.runbooks.check import print_report, run_checks, verdict_line
    from nr_run.runbooks.history import record_report
    from nr_run.runbooks.interrupt import Interrupted, Stop, bounded
    from nr_run.runbooks.inventory import site_dir
    from nr_run.runbooks.records import RunRecords
    from nr_run.validators.base import UnknownCheck

    csv = _formats(args.format, allowed=("table", "csv")) == ["csv"]
    console = make_console(stderr=args.json or csv)
    catalog = load_catalog(site_dir(args.site, args.inventory_dir))
    options = catalog.merged_options(parse_options(args.options))
    intent, findings = load_intent(args, console)
    if intent is None:
        return EXIT_INVALID
    announce_lab(args, console)
    checks = _checks(args, catalog)
    try:
        if getattr(args, "cluster", None):
            if getattr(args, "tags", None):
                raise UsageError("--tags reads the Nornir inventory on this host: not with --cluster (use --hosts/--role)")
            chosen = selection_of(device_filter(args, intent, None), checks, options)
            with Stop() as stop:
                report = bounded(lambda: _distributed(args, intent, options, checks, chosen), stop)
        else:
            with Stop() as stop, device_session(args, intent) as nr, \
                    _progress(args, console, intent, f"check {args.site}") as progress:
                chosen = selection_of(device_filter(args, intent, nr), checks, options)
                report = bounded(lambda: run_checks(nr, intent, checks, options, progress=progress,
                                                    selection=chosen, keep_connections=False), stop)
    except UnknownCheck as exc:
        raise UsageError(str(exc)) from exc
    except Interrupted:
        _interrupted(stop, console)
    records = RunRecords(args.artifacts, args.site, "check")
    records.write("results.json", report.json_chunks())     # a finding's dict exists only while it is written
    _history(args, console, records, record_report(args.artifacts, report, "check", args.retention)[1])
    if args.json:
        emit_text(report.json_chunks())
    elif csv:
        from nr_run.runbooks.report.formats import to_csv

        sys.stdout.write(to_csv(report.to_dict()))
        sys.stdout.flush()
        console.print(verdict_line(report))
    else:
        print_report(report, console, show_passed=verbosity(args) >= 1, quiet=verbosity(args) < 0, verdict=False)
        if verbosity(args) >= 0:
            console.print(f"results: {records.dir / 'results.json'}")
        console.print(verdict_line(report))
    return report_exit(report)


def report_exit(report: Any) -> int:
    """0 passed; 4 when the only failures are devices or sections that could not be read (could not check);
    1 when anything that was read failed."""
    from nr_run.validators.correlate import UNREAD

    known = report.declared_ids()
    failed = [f for f in report.findings if not f.passed and f.id not in known]
    if not failed:
        return EXIT_OK
    return EXIT_UNKNOWN if all(f.kind in UNREAD for f in failed) else EXIT_FAIL


@contextlib.contextmanager
def cluster_checks(args: argparse.Namespace, options: dict[str, dict[str, str]],
                   checks: list[str] | None = None) -> Iterator[Any]:
    """--cluster: a runbooks.distributed.DistributedChecks over the Dask workers, for the run's duration."""
    from nr_run.cli.lab import running_lab_addresses
    from nr_run.runbooks.distributed import DistributedChecks, ShardJob, open_client

    job = ShardJob(site=args.site, inventory_dir=str(Path(args.inventory_dir).resolve()),
                   checks=tuple(checks) if checks else None, options=options, lab=args.lab, insecure=args.insecure,
                   address_map=running_lab_addresses(args) if args.lab else None, workers=args.workers)
    with open_client(args.cluster) as client:
        yield DistributedChecks(client, job, per_shard=args.shard_size)


def _distributed(args: argparse.Namespace, intent: Any, options: dict[str, dict[str, str]],
                 checks: list[str] | None, selection: Any) -> Any:
    """check --cluster: the site in shards on Dask workers (runbooks.distributed)."""
    with cluster_checks(args, options, checks) as run:
        return run(None, intent, checks, options, selection=selection)


def _history(args: argparse.Namespace, console: Console, records: Any, error: str) -> None:
    """Say (and log) that the run could not be recorded in the history; its results stand."""
    if not error:
        return
    if records is not None:
        records.log(error)
    if verbosity(args) >= 0:
        console.print(f"[yellow]{error}[/]")


def _formats(spec: str, allowed: tuple[str, ...] | None = None) -> list[str]:
    from nr_run.runbooks.report.formats import WRITERS

    formats = [f.strip() for f in spec.split(",") if f.strip()]
    unknown = [f for f in formats if (f not in allowed if allowed else f != "table" and f not in WRITERS)]
    if unknown:
        raise UsageError(f"unknown format(s): {', '.join(unknown)}")
    return formats


_EXIT = {"ok": EXIT_OK, "drift": EXIT_DIFF, "failed": EXIT_FAIL}


def _compliance_once(args: argparse.Namespace, console: Console, options: dict[str, Any],
                     outer: Any = None) -> int:
    """One compliance run. `outer`: the Stop of a --every loop, installed for the whole loop (a signal that
    arrives between or at the end of runs is not lost when one run's handlers are put back)."""
    from nr_run.cli.lab import device_session
    from nr_run.runbooks.catalog import load_catalog
    from nr_run.runbooks.check import print_report
    from nr_run.runbooks.compliance import run_compliance
    from nr_run.runbooks.interrupt import Interrupted, Stop, bounded
    from nr_run.runbooks.inventory import site_dir
    from nr_run.runbooks.records import RunRecords, utc_now_iso
    from nr_run.runbooks.report.formats import write_reports

    formats = _formats(args.format)
    catalog = load_catalog(site_dir(args.site, args.inventory_dir))
    options = catalog.merged_options(options)
    checks = _checks(args, catalog)
    intent, _ = load_intent(args, console)
    if intent is None:
        return EXIT_INVALID
    announce_lab(args, console)
    started = time.monotonic()
    records: Any = None
    try:
        with (outer.borrowed() if outer is not None else Stop()) as stop, device_session(args, intent) as nr, \
                _progress(args, console, intent, f"compliance {args.site}") as progress:
            # created once the session is up (credentials, lab): a refusal leaves no run folder behind
            chosen = selection_of(device_filter(args, intent, nr), checks, options)
            records = RunRecords(args.artifacts, args.site, "compliance")
            records.capture_logging()
            result = bounded(lambda: run_compliance(nr, intent, records, checks=checks, options=options,
                                                    progress=progress, retention_s=args.retention,
                                                    selection=chosen), stop)
    except Interrupted:
        _interrupted(stop, console)
    finally:
        if records is not None:
            records.close()
    _history(args, console, None, result.history_error)     # run_compliance logged it
    out = Path(args.out) if args.out else records.dir
    payload = {**result.to_dict(), "outcome": result.outcome, "time": utc_now_iso(),
               "duration_s": round(time.monotonic() - started, 3)}
    written = write_reports(payload, [f for f in formats if f != "table"], out, private=not args.out)
    if args.json:
        emit_json(payload)
    else:
        if "table" in formats:
            print_report(result.report, console, show_passed=verbosity(args) >= 1, quiet=verbosity(args) < 0,
                         verdict=False)
        if written and verbosity(args) >= 0:
            console.print("reports: " + ", ".join(str(p) for p in written))
        console.print(compliance_line(args.site, result))
    code = _EXIT[result.outcome]
    if code == EXIT_FAIL and report_exit(result.report) != EXIT_FAIL:
        return EXIT_UNKNOWN         # nothing read failed: devices that could not be read or diffed
    return code


def compliance_line(site: str, result: Any) -> str:
    """The last line of a compliance run: its outcome, the checks' verdict and counts, the drift."""
    from nr_run.runbooks.check import verdict_line

    drifted = result.drifted
    drift = (f"drift on {len(drifted)} device(s): {', '.join(drifted[:5])}" + (" ..." if len(drifted) > 5 else "")
             if drifted else "no drift")
    return f"compliance {site}: {result.outcome}; {drift}; checks: {verdict_line(result.report)}"


def compliance(args: argparse.Namespace) -> int:
    console = make_console(stderr=args.json)
    options = parse_options(args.options)
    if not args.every:
        return _compliance_once(args, console, options)
    from nr_run.runbooks.interrupt import Stop

    period = types.duration_seconds(args.every)     # already range-checked by the parser
    with Stop() as stop:
        while True:
            started = time.monotonic()
            console.print(f"{_utc()} compliance run started")
            rc = _compliance_once(args, console, options, stop)
            if stop.is_set():
                console.print(f"{_utc()} compliance run exit {rc}; stopped ({stop.reason})")
                return rc
            wait = max(0.0, period - (time.monotonic() - started))
            console.print(f"{_utc()} compliance run exit {rc} after {time.monotonic() - started:.0f} s; "
                          f"next at {_utc(wait)}")
            if stop.wait(wait):
                console.print(f"{_utc()} stopped ({stop.reason}) while waiting for the next run")
                return rc


def _utc(offset_s: float = 0.0) -> str:
    from datetime import UTC, datetime, timedelta

    return (datetime.now(UTC) + timedelta(seconds=offset_s)).strftime("%Y-%m-%d %H:%M:%S UTC")
