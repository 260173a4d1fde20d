"""`nr-run job-check --site S --nodes 'gpu[1-4,7]'`: the fabric under a job's nodes, checked within a budget.

Output only: the work is runbooks.job. stdout is one line ("ok: ...", "drain: <reason>" or "unknown: <switches
not checked>"), or the JSON verdict with --json; exit 0 (ok), 1 (drain), 3 (bad node list, unknown node, bad
inventory or catalog), 4 (some switch not checked, nothing found on the others, and the site's catalog lets that
pass). Nothing is written to the artifacts folder: a prolog runs for every job. Slurm use: docs/slurm.md.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from nr_run.cli.common import (
    EXIT_FAIL,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_UNKNOWN,
    UsageError,
    emit_json,
    make_console,
    verbosity,
)

if TYPE_CHECKING:
    from nr_run.intent.models import FabricIntent
    from nr_run.runbooks.job import JobScope


def job_nodes(expression: str) -> list[str]:
    """The node names of a --nodes hostlist (UsageError when it is not one)."""
    from nr_run.runbooks.hostlist import HostlistError, expand

    try:
        return expand(expression)
    except HostlistError as exc:
        raise UsageError(f"--nodes: {exc}") from None


def scope_of(intent: FabricIntent, nodes: list[str]) -> JobScope:
    """The job's JobScope in the site's intent (UsageError when a node is not one of its servers)."""
    from nr_run.runbooks.job import UnknownNodes, job_scope

    try:
        return job_scope(intent, nodes)
    except UnknownNodes as exc:
        raise UsageError(f"--nodes: {exc}") from None


def job_check(args: argparse.Namespace) -> int:
    from nr_run.cli.check import parse_options
    from nr_run.cli.commands import load_intent
    from nr_run.cli.lab import device_session
    from nr_run.cli.watch import _exit_now
    from nr_run.runbooks.catalog import load_catalog
    from nr_run.runbooks.inventory import site_dir
    from nr_run.runbooks.job import run_job_check

    console = make_console(stderr=True)       # stdout carries the verdict line only
    nodes = job_nodes(args.nodes)
    options = parse_options(args.options)
    catalog = load_catalog(site_dir(args.site, args.inventory_dir))
    intent, _ = load_intent(args, console)
    if intent is None:
        return EXIT_INVALID
    scope = scope_of(intent, nodes)
    budget = args.budget if args.budget is not None else catalog.job_check.budget_s or 10.0
    with device_session(args, intent) as nr:
        verdict = run_job_check(nr, intent, scope, budget, catalog.merged_options(options),
                                unknown_drains=catalog.job_check.unknown == "drain")
        code = {"ok": EXIT_OK, "drain": EXIT_FAIL, "unknown": EXIT_UNKNOWN}[verdict.verdict]
        if args.json:
            emit_json(verdict.as_dict())
        else:
            print(verdict.line(), flush=True)
            if verbosity(args) >= 0 and verdict.unknown:
                for device, why in sorted(verdict.unknown.items()):
                    console.print(f"not checked: {device}: {why}", markup=False, highlight=False)
            if verbosity(args) >= 1:
                for f in verdict.findings:
                    console.print(f"{f.check} {f.device} {f.target}: {f.observed} (expected {f.expected})",
                                  markup=False, highlight=False)
        if verdict.timed_out:     # device calls still run in worker threads: do not wait for them
            _exit_now(code)
    return code
