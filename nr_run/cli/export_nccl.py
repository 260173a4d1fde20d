"""`nr-run export nccl --site S`: the NCCL/UCX environment matching the site's intent (runbooks.nccl).

Output only: `export NAME=value` lines on stdout (source them in a job's environment, or a Slurm TaskProlog),
or with --json {"site", "variables": [{"name", "value", "why"}]}; exit 0, or 3 for a bad inventory or a site
without GPU server NICs. Reads the inventory only: no device is contacted.
"""

from __future__ import annotations

import argparse

from nr_run.cli.common import EXIT_INVALID, EXIT_OK, UsageError, emit_json, make_console


def export_nccl(args: argparse.Namespace) -> int:
    from nr_run.cli.commands import load_intent
    from nr_run.runbooks.nccl import as_shell, nccl_environment

    console = make_console(stderr=True)
    intent, _ = load_intent(args, console)
    if intent is None:
        return EXIT_INVALID
    try:
        env = nccl_environment(intent)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        emit_json({"site": intent.site, "variables": [{"name": v.name, "value": v.value, "why": v.why}
                                                      for v in env]})
    else:
        print(as_shell(env), end="", flush=True)
    return EXIT_OK
