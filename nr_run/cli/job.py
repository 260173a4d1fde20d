"""`nr-run job-check --site S --nodes 'gpu[1-4,7]'`: the fabric under a job's nodes, checked within a budget.

Output only: the work is runbooks.job. stdout is one line ("ok: ..." or "drain: <reason>"), or the JSON
verdict with --json; exit 0 (ok), 1 (drain), 3 (bad node list, unknown node, bad inventory). Nothing is
written to the artifacts folder: a prolog runs for every job. Slurm use: docs/slurm.md.
"""

from __future__ import annotations

import argparse
import os
import sys

from nr_run.cli.common import EXIT_FAIL, EXIT_INVALID, EXIT_OK, UsageError, emit_json, make_console, verbosity

BUDGET_RANGE = (1.0, 600.0)


def budget(text: str) -> float:
    """--budget seconds, within BUDGET_RANGE."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--budget must be a number of seconds, not {text[:40]!r}") from None
    low, high = BUDGET_RANGE
    if not low <= value <= high:           # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"--budget must be between {low:g} and {high:g} s, not {text[:40]}")
    return value


def add_parser(sub: argparse._SubParsersAction, common, device_io, check_options) -> None:
    p = sub.add_parser("job-check", help="check the fabric under a job's nodes (Slurm prolog): exit 0 ok, 1 drain")
    common(p)
    device_io(p)
    check_options(p)
    p.add_argument("--nodes", required=True,
                   help="the job's nodes, Slurm hostlist syntax (e.g. 'gpu[1-4,7]', $SLURM_JOB_NODELIST)")
    p.add_argument("--budget", type=budget, default=10.0, help="seconds the check may take (default 10)")


def job_check(args: argparse.Namespace) -> int:
    from nr_run.cli.check import parse_options
    from nr_run.cli.commands import load_intent
    from nr_run.cli.lab import device_session
    from nr_run.runbooks.hostlist import HostlistError, expand
    from nr_run.runbooks.job import UnknownNodes, job_scope, run_job_check

    console = make_console(stderr=True)       # stdout carries the verdict line only
    try:
        nodes = expand(args.nodes)
    except HostlistError as exc:
        raise UsageError(f"--nodes: {exc}") from None
    options = parse_options(args.options)
    intent, _ = load_intent(args, console)
    if intent is None:
        return EXIT_INVALID
    try:
        scope = job_scope(intent, nodes)
    except UnknownNodes as exc:
        raise UsageError(f"--nodes: {exc}") from None
    with device_session(args) as nr:
        verdict = run_job_check(nr, intent, scope, args.budget, options)
        code = EXIT_FAIL if verdict.drain else EXIT_OK
        if args.json:
            emit_json(verdict.as_dict())
        else:
            print(verdict.line(), flush=True)
            if verbosity(args) >= 0 and verdict.unknown:
                for device, why in sorted(verdict.unknown.items()):
                    console.print(f"unreadable: {device}: {why}")
            if verbosity(args) >= 1:
                for f in verdict.findings:
                    console.print(f"{f.check} {f.device} {f.target}: {f.observed} (expected {f.expected})")
        if verdict.timed_out:     # device calls still run in worker threads: do not wait for them
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    return code
