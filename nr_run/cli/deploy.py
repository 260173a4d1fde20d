"""`nr-run deploy`: dry run by default; --commit rolls out in stages gated on what each stage broke.

Output only: the work is runbooks.deploy.Deployment. Ctrl-C/SIGTERM stop the rollout (runbooks.interrupt);
the results are written and the process exits without waiting for device calls still in flight.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from typing import Any

from nr_run.cli.commands import announce_lab, load_intent, select_switches
from nr_run.cli.common import (
    EXIT_FAIL,
    EXIT_INVALID,
    UsageError,
    emit_json,
    gc_paused,
    make_console,
    verbosity,
)

# A dry run prints its diffs in full up to this many lines; beyond, a summary and the artifacts' path
DIFF_LINES_SHOWN = 200


def deploy(args: argparse.Namespace) -> int:
    from nr_run.cli.check import site_options
    from nr_run.cli.lab import device_session
    from nr_run.platforms.base import marker_name
    from nr_run.runbooks.check import print_report
    from nr_run.runbooks.deploy import Deployment, check_policies
    from nr_run.runbooks.deploy_checks import StageGate
    from nr_run.runbooks.interrupt import Stop
    from nr_run.runbooks.lock import SiteLock, SiteLocked
    from nr_run.runbooks.plan import batch_size
    from nr_run.runbooks.progress import DeviceProgress
    from nr_run.runbooks.records import RunRecords
    from nr_run.runbooks.render import config_filename, render_device

    console = make_console(stderr=args.json)
    level = verbosity(args)
    if args.commit and not args.yes and not sys.stdin.isatty():
        raise UsageError("--commit without a TTY requires --yes")
    try:
        batch_size(args.batch, 1)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    options = site_options(args)
    if args.confirm_timeout < 30 and not args.lab:
        raise UsageError("--confirm-timeout below 30 s leaves no time for post-checks on real devices")
    intent, findings = load_intent(args, console)
    if intent is None:
        if args.json:
            emit_json({"site": args.site, "exit_code": EXIT_INVALID, "findings": [f.as_dict() for f in findings]})
        return EXIT_INVALID
    names = select_switches(intent, args.hosts, args.role)
    check_policies({intent.devices[n].platform for n in names}, commit=args.commit)
    with gc_paused():
        configs = {n: render_device(intent.devices[n], intent) for n in names}
    lock = SiteLock(args.site)
    try:
        lock.acquire()
    except SiteLocked as exc:   # refused before anything is written
        console.print(f"[red]refused[/]: {exc}")
        if args.json:
            emit_json({"site": args.site, "exit_code": EXIT_FAIL, "message": str(exc)})
        return EXIT_FAIL
    stop = Stop()
    stop.install()
    records = None
    try:
        announce_lab(args, console)
        show_progress = None if (args.json and level < 1) or level < 0 else console
        # the session checks credentials and the lab: a refusal there leaves no run folder behind
        with device_session(args, intent) as nr, DeviceProgress(show_progress, names) as progress:
            records = RunRecords(args.artifacts, args.site, "deploy" if args.commit else "deploy-dry-run")
            records.capture_logging()
            for n, text in configs.items():
                records.write(f"configs/{config_filename(intent.devices[n])}", text)
            gate = None if args.skip_checks else StageGate(intent, options, recorder=_recorder(args, console, records))
            # the devices' marker carries the run folder's time stamp: one finds the other
            started = datetime.strptime(records.dir.name.split("-")[0], "%Y%m%dT%H%M%S%fZ").replace(tzinfo=UTC)
            run = Deployment(nr, intent, configs, records, progress, replace=args.replace,
                             revert_in=args.confirm_timeout, gate=gate, stop=stop,
                             marker=marker_name(args.site, started), break_lock=args.break_lock)
            report = run.report
            run.reconcile()
            _show_reconciled(report, console, args)
            run.dry_run()
            if args.commit and report.pending and not report.failed and not stop.is_set():
                _show(report, console, args, records, diffs=level >= 0)
                if args.skip_checks:
                    console.print("[bold red]WARNING: --skip-checks: stages are confirmed without post-checks[/]")
                if not _confirmed(args, console, run.plan(args.canary, args.batch), report, intent):
                    console.print("aborted: nothing committed")
                    return EXIT_FAIL
                run.commit(args.canary, args.batch)
                if not report.failed and not stop.is_set():
                    final = run.final_check()
                    if final is not None and not args.json and verbosity(args) >= 1:
                        print_report(final, console)
            records.write_json("results.json", _results(report, args))
            if stop.is_set():
                _finish(report, records, console, args, intent)
                lock.release()
                # device calls still in flight hold worker threads: do not wait for them (or for the session)
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(report.exit_code())
    finally:
        stop.restore()
        lock.release()
        if records is not None:
            records.close()
    _finish(report, records, console, args, intent)
    return report.exit_code()


def _recorder(args, console, records):
    """Record the deploy's whole-site checks (baseline, final) in the site's history, so `report` sees what the
    deploy fixed; a history that cannot be written is one line, never the deploy's failure."""
    from nr_run.runbooks.history import record_report

    def record(report: Any, kind: str) -> None:
        _, error = record_report(args.artifacts, report, kind)
        if error:
            records.log(error)
            if verbosity(args) >= 0 and not args.json:
                console.print(f"[yellow]{error}[/]", highlight=False)
    return record


def _results(report, args) -> dict[str, Any]:
    """results.json / --json: the report, and the verdict line the run ended with."""
    from nr_run.runbooks.deploy_summary import verdict

    return {**report.as_dict(), "verdict": verdict(report, bool(args.commit))}


def _finish(report, records, console, args, intent=None) -> None:
    from nr_run.runbooks.deploy_summary import verdict

    if args.json:
        emit_json({**_results(report, args), "artifacts": str(records.dir)})
    else:
        _show(report, console, args, records, diffs=not report.commit, intent=intent)
        if verbosity(args) >= 0:
            console.print(f"artifacts: {records.dir} (log: {records.log_path.name})")
        line = verdict(report, bool(args.commit))
        console.print(line, style="red" if report.failed else None, markup=False, highlight=False)


def _confirmed(args, console, stages, report=None, intent=None) -> bool:
    """Show the rollout plan; ask unless --yes (the question says which switches leave the fabric for a while)."""
    from rich.table import Table

    from nr_run.runbooks.deploy_summary import apply_paths, prompt_note

    plan = Table(title="rollout plan")
    plan.add_column("stage")
    plan.add_column("devices")
    for stage in stages:
        plan.add_row(stage.name, ", ".join(stage.devices))
    if not args.json and verbosity(args) >= 0:
        console.print(plan)
    if args.yes:
        return True
    note = prompt_note(apply_paths(report, intent)) if report is not None else ""
    answer = console.input(f"{note}commit {sum(len(s.devices) for s in stages)} device(s) in {len(stages)} stage(s)? "
                           "[y/N] ", markup=False)
    return answer.strip().lower() in ("y", "yes")


def _show_reconciled(report, console, args) -> None:
    if args.json or not report.reconciled:
        return
    console.print(f"[yellow]{len(report.reconciled)} unfinished device action(s) from earlier runs, read back:[/]")
    for item in report.reconciled:
        console.print(f"  {item['device']}: {item['action']} by {item['user']} at {item['since']} "
                      f"(run {item['run']}): {item['outcome']}")


def print_diff(console, name: str, platform: str, diff: str) -> None:
    """A diff whose wrapped lines keep their +/- marker (each continuation repeats it)."""
    from rich.text import Text

    console.rule(f"{name} ({platform})")
    width = max(20, console.width - 1)
    style = {"+": "green", "-": "red", "@": "cyan"}
    for line in diff.splitlines():
        marker = line[:1] if line[:1] in ("+", "-", " ") else ""
        body = line[len(marker):]
        chunk = width - len(marker)
        pieces = [body[i:i + chunk] for i in range(0, len(body), chunk)] or [""]
        for piece in pieces:
            console.print(Text(marker + piece, style=style.get(marker or line[:1], "")), soft_wrap=True)


def _show(report, console, args, records, diffs: bool, intent=None) -> None:
    from rich.table import Table

    if args.json:
        return
    level = verbosity(args)
    table = Table(title=f"deploy {report.site}: {'commit' if args.commit else 'dry run'}")
    rows = sorted(report.devices)
    # how each change is applied, where a platform tells (SONiC: "gcu" or "drained apply"); the why is in detail
    methods = any(report.devices[n].method for n in rows)
    for col in ("device", "platform", *(("method",) if methods else ()), "role", "+", "-", "stage", "status",
                "detail"):
        table.add_column(col, overflow="fold")
    # -q: only the devices that need a look; a run where every device is fine says so in one line
    shown = [n for n in rows if level >= 0 or report.devices[n].state not in ("no change", "confirmed")]
    for name in shown:
        d = report.devices[name]
        added, removed = d.added_removed()
        method = (d.method.split(":", 1)[0] or "-",) if methods else ()
        # the method column names the path; the detail then says why (not the method again)
        detail = d.detail.split(":", 1)[1].strip() if methods and d.method and d.detail == d.method else d.detail
        table.add_row(name, d.platform, *method, d.role, str(added), str(removed), d.stage, d.state, detail)
    if shown:
        console.print(table)
        if not report.commit and level >= 0:
            _show_paths(console, report, intent)
    elif rows:
        states = sorted({report.devices[n].state for n in rows})
        console.print(f"{len(rows)} device(s): {', '.join(states)}")
    else:
        console.print("no switches selected")
    if diffs and (level >= 0 or getattr(args, "show_diff", False)):
        changed = [report.devices[n] for n in rows if report.devices[n].diff]
        total = sum(len(d.diff.splitlines()) for d in changed)
        if changed and (total <= DIFF_LINES_SHOWN or getattr(args, "show_diff", False) or level >= 1):
            for d in changed:
                print_diff(console, d.name, d.platform, d.diff)
        elif changed:
            console.print(f"{total} diff lines on {len(changed)} device(s): full diffs in {records.dir / 'diffs'} "
                          "(or --show-diff)")
    # a stopped rollout: the table gives each device's reason and the last line the states; the message would
    # say the same failure a second time
    if report.message and not (report.failed and report.stopped_at and report.commit):
        console.print(f"[red]{report.message}[/]" if report.failed else f"[yellow]{report.message}[/]",
                      highlight=False)
    _print_findings(console, "new since the deploy started", [f.to_dict() for f in report.checks], "red")
    final = report.final_check or {}
    _print_findings(console, "new in the final whole-site check", final.get("new", []), "red")
    known = {f.id for f in report.preexisting}
    old = [f.to_dict() for f in report.preexisting] + [f for f in final.get("preexisting", []) if f["id"] not in known]
    if level >= 0:
        _print_findings(console, "pre-existing (failing before the deploy)", old, "yellow")


def _show_paths(console, report, intent) -> None:
    """Per switch whose platform tells how its change is applied: the path, its traffic and its time."""
    from nr_run.runbooks.deploy_summary import apply_paths

    paths = apply_paths(report, intent)
    if not paths:
        return
    console.print("how each change is applied:")
    for p in paths:      # the why is the table's detail column
        console.print(f"  {p.device}: {p.method}: {p.traffic}; expected: {p.duration}", markup=False,
                      highlight=False)


def _print_findings(console, title: str, findings: list[dict[str, Any]], colour: str) -> None:
    if not findings:
        return
    console.print(f"[{colour}]{title}: {len(findings)}[/]")
    for f in findings[:20]:
        console.print(f"  [{colour}]x[/] {f.get('check')} {f.get('device')} {f.get('target', '')}: "
                      f"expected {f.get('expected')}, observed {f.get('observed')}")
    if len(findings) > 20:
        console.print(f"  ... and {len(findings) - 20} more (results.json)")
