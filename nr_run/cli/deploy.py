"""`nr-run deploy`: dry run by default; --commit rolls out in stages with post-checks and rollback."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

from nr_run.cli.commands import load_intent, select_switches
from nr_run.cli.common import EXIT_FAIL, EXIT_INVALID, UsageError, emit_json


def _post_check(intent, options):
    """Stage post-checks through the validators, scoped to links whose both ends are at intent."""
    from nr_run.runbooks.deploy_checks import stage_post_check

    return lambda nr, stage, at_intent: stage_post_check(nr, intent, stage, at_intent, options=options)


def deploy(args: argparse.Namespace) -> int:
    from nr_run.cli.check import parse_options
    from nr_run.cli.lab import device_session
    from nr_run.runbooks.deploy import Deployment, check_policies
    from nr_run.runbooks.lock import SiteLock, SiteLocked
    from nr_run.runbooks.plan import batch_size
    from nr_run.runbooks.progress import DeviceProgress
    from nr_run.runbooks.records import RunRecords
    from nr_run.runbooks.render import config_filename, render_device

    console = Console(stderr=args.json)
    if args.commit and not args.yes and not sys.stdin.isatty():
        raise UsageError("--commit without a TTY requires --yes")
    try:
        batch_size(args.batch, 1)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    options = parse_options(args.options)
    if args.confirm_timeout < 30 and not args.lab:
        raise UsageError("--confirm-timeout below 30 s leaves no time for post-checks on real devices")
    intent, findings = load_intent(args, console)
    if intent is None:
        if args.json:
            emit_json({"site": args.site, "exit_code": EXIT_INVALID, "findings": [f.as_dict() for f in findings]})
        return EXIT_INVALID
    names = select_switches(intent, args.hosts, args.role)
    check_policies({intent.devices[n].platform for n in names})
    configs = {n: render_device(intent.devices[n], intent) for n in names}
    records = RunRecords(args.artifacts, args.site, "deploy" if args.commit else "deploy-dry-run")
    for n, text in configs.items():
        records.write(f"configs/{config_filename(intent.devices[n])}", text)
    lock = SiteLock(args.artifacts, args.site)
    try:
        lock.acquire()
    except SiteLocked as exc:
        console.print(f"[red]refused[/]: {exc}")
        if args.json:
            emit_json({"site": args.site, "exit_code": EXIT_FAIL, "message": str(exc)})
        return EXIT_FAIL
    try:
        with device_session(args) as nr, DeviceProgress(None if args.json else console, names) as progress:
            post_check = None if args.skip_checks else _post_check(intent, options)
            run = Deployment(nr, intent, configs, records, progress, replace=args.replace,
                             revert_in=args.confirm_timeout, post_check=post_check)
            run.dry_run()
            report = run.report
            if args.commit and report.pending and not report.failed:
                _show(report, console, args, diffs=not args.json)
                if args.skip_checks:
                    console.print("[bold red]WARNING: --skip-checks: stages are confirmed without post-checks[/]")
                if not _confirmed(args, console, run.plan(args.canary, args.batch)):
                    console.print("aborted: nothing committed")
                    return EXIT_FAIL
                run.commit(args.canary, args.batch)
                if not report.failed and not args.skip_checks:
                    _final_check(nr, intent, report, console, args)
            records.write_json("results.json", report.as_dict())
    finally:
        lock.release()
    if args.json:
        emit_json({**report.as_dict(), "artifacts": str(records.dir)})
    else:
        _show(report, console, args, diffs=not args.commit)
        console.print(f"artifacts: {records.dir}")
    return report.exit_code()


def _final_check(nr, intent, report, console: Console, args) -> None:
    """Every check (RDMA included) over the whole site once the rollout is done; reported, not rolled back."""
    from nr_run.cli.check import parse_options
    from nr_run.runbooks.check import print_report, run_checks

    checks = run_checks(nr, intent, None, parse_options(args.options))
    data = checks.to_dict()
    report.final_check = {"passed": data["passed"], "summary": data["summary"],
                          "failed": [f for f in data["findings"] if not f["passed"]]}
    if not checks.passed:
        report.message = "rollout confirmed, but the whole-fabric post-check fails (see final_check)"
    if not args.json:
        print_report(checks, console)


def _confirmed(args, console: Console, stages) -> bool:
    """Show the rollout plan; ask unless --yes."""
    plan = Table(title="rollout plan")
    plan.add_column("stage")
    plan.add_column("devices")
    for stage in stages:
        plan.add_row(stage.name, ", ".join(stage.devices))
    if not args.json:
        console.print(plan)
    if args.yes:
        return True
    answer = console.input(f"commit {sum(len(s.devices) for s in stages)} device(s) in {len(stages)} stage(s)? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def _show(report, console: Console, args, diffs: bool) -> None:
    if args.json:
        return
    if diffs:
        for name in sorted(report.devices):
            out = report.devices[name]
            if out.diff:
                console.rule(f"{name} ({out.platform})")
                console.print(Syntax(out.diff, "diff", theme="ansi_dark", word_wrap=True))
    table = Table(title=f"deploy {report.site}: {'commit' if report.commit else 'dry run'}")
    for col in ("device", "platform", "role", "+", "-", "stage", "status", "detail"):
        table.add_column(col)
    for name in sorted(report.devices):
        d = report.devices[name]
        added, removed = d.added_removed()
        table.add_row(name, d.platform, d.role, str(added), str(removed), d.stage, d.state, d.detail[:100])
    console.print(table)
    if report.message:
        console.print(f"[red]{report.message}[/]")
    for finding in report.checks[:20]:
        console.print(f"  [red]x[/] {finding.get('check')} {finding.get('device')} {finding.get('target', '')}: "
                      f"expected {finding.get('expected')}, observed {finding.get('observed')}")
