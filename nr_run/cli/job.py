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
                    console.print(f"unreadable: {device}: {why}", markup=False, highlight=False)
            if verbosity(args) >= 1:
                for f in verdict.findings:
                    console.print(f"{f.check} {f.device} {f.target}: {f.observed} (expected {f.expected})",
                                  markup=False, highlight=False)
        if verdict.timed_out:     # device calls still run in worker threads: do not wait for them
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    return code
