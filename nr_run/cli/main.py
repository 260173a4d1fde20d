"""nr-run command line: a thin layer over the runbooks (imports stay lazy so --help is fast).

Exit codes (docs/exit-codes.md): 0 success, 1 failure, 2 differences/pending changes, 3 invalid input,
4 could not check.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from nr_run.analysis.limits import PATTERNS
from nr_run.cli import args as types
from nr_run.cli.common import EXIT_FAIL, EXIT_INVALID, EXIT_OK, UsageError, gc_for_runs, quiet_broken_pipe

TYPE_CHECKING = False   # no typing import at start-up (a tenth of `nr-run --help`)
if TYPE_CHECKING:
    from typing import Any


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--site", required=True, type=types.site, help="site name (a folder under the inventory dir)")
    p.add_argument("--inventory-dir", default="inventory", help="folder holding <site>/ (default: inventory)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.add_argument("-v", "--verbose", action="store_true", help="more detail")
    p.add_argument("-q", "--quiet", action="store_true", help="failures and the verdict only")


def _device_io(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lab", action="store_true", help="talk to the embedded lab twin instead of the real devices")
    p.add_argument("--workers", type=types.workers, default=20,
                   help=f"parallel device connections, 1-{types.MAX_WORKERS} (default 20)")
    p.add_argument("--insecure", action="store_true",
                   help="disable TLS verification and SSH host-key checks (never the default)")
    p.add_argument("--artifacts", type=types.folder, default=".nr-run", help="artifacts folder (default .nr-run)")


def _selection(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hosts", type=types.hosts, help="comma-separated host names")
    p.add_argument("--role", choices=["rtsw", "ctsw", "atsw"], help="only this switch role")


def _filters(p: argparse.ArgumentParser) -> None:
    """Which devices a check or compliance run reads and judges (ANTA's device filters)."""
    p.add_argument("--hosts", type=types.hosts, help="only these devices (comma-separated names)")
    p.add_argument("--role", choices=["rtsw", "ctsw", "gpu"], help="only devices of this role")
    p.add_argument("--tags", type=types.hosts, metavar="TAG[,TAG]",
                   help="only devices with one of these tags (a Nornir group of the host, or its data.tags)")


def _check_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--option", action="append", default=[], metavar="CHECK.KEY=VALUE", dest="options",
                   help="set a check option, repeatable (e.g. counters.interval_s=0.5, rdma.pattern=same_rail); "
                        "unknown options or bad values exit 3. Options per check: docs/json-output.md")


def _cluster(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", type=types.cluster, metavar="local|tcp://HOST:PORT",
                   help="run the site in shards on Dask workers: 'local' starts one worker per core, an address "
                        "uses a running scheduler's (with --lab: the workers reach the lab `lab up` started)")
    p.add_argument("--shard-size", type=types.shard_size, default=256, metavar="N",
                   help="devices per shard with --cluster (whole units stay together; default 256)")


def _retention(p: argparse.ArgumentParser) -> None:
    p.add_argument("--retention", type=types.retention, default=14 * 86400, metavar="DURATION",
                   help="keep the site's history this long (default 14d; older records are pruned hourly)")


def _history_commands(sub: argparse._SubParsersAction) -> None:
    """watch, exporter, report: the site's history (docs/history.md, docs/metrics.md)."""
    wat = sub.add_parser("watch", help="collect counters, state and findings every interval into the history")
    exp = sub.add_parser("exporter", help="serve the site's counters and check results as Prometheus /metrics")
    for p in (wat, exp):
        _common(p)
        _device_io(p)
        _check_options(p)
        _retention(p)
        p.add_argument("--every", type=types.watch_every, default=30, metavar="DURATION",
                       help="collection interval, 1s to 1d (default 30s)")
        p.add_argument("--source", default="poll", help="where collections come from: poll, or gnmi for the counters (default: poll)")
    wat.add_argument("--count", type=types.count, help="stop after N collections (default: until Ctrl-C/SIGTERM)")
    _cluster(wat)
    exp.add_argument("--listen", type=types.listen, required=True, metavar="HOST:PORT",
                     help="address to serve /metrics on, e.g. 127.0.0.1:9464 (loopback unless --allow-remote)")
    exp.add_argument("--allow-remote", action="store_true",
                     help="allow a --listen address other machines reach: /metrics is plain HTTP without "
                          "authentication, so put a firewall or a TLS proxy in front")
    rep = sub.add_parser("report", help="what the history saw: new/resolved findings, rates, pause, timeline")
    _common(rep)
    rep.add_argument("--artifacts", type=types.folder, default=".nr-run", help="artifacts folder (default .nr-run)")
    rep.add_argument("--since", type=types.since, metavar="DURATION",
                     help="the window ending now (default 24h; not with --job, whose window is --from/--to)")
    rep.add_argument("--top", type=types.top, default=10, help="rows per ranking (default 10)")
    rep.add_argument("--job", help="a training job's id: report on its nodes' ports (with --nodes, --from, --to)")
    rep.add_argument("--nodes", help="the job's nodes, Slurm hostlist syntax (gpu[1-4,7])")
    rep.add_argument("--from", dest="start", metavar="TIME", help="the job's start (ISO 8601, UTC unless given)")
    rep.add_argument("--to", dest="end", metavar="TIME", help="the job's end (ISO 8601; default now)")


# the `lab` epilog: the twin's fault kinds, loaded only when that help is printed (not on every start)
_FAULT_KINDS = "<fault kinds>"


class _LabHelp(argparse.RawDescriptionHelpFormatter):
    def add_text(self, text: str | None) -> None:
        if text == _FAULT_KINDS:
            from nr_run.lab.twin.faults import help_text

            text = help_text()
        super().add_text(text)


class _Ignored:
    """Stands in for the parser of a subcommand that is not being run: every call does nothing."""

    def __getattr__(self, name: str) -> Callable[..., _Ignored]:
        return lambda *args, **kwargs: self


class _OnlyOne:
    """The subcommands, of which only `only` gets its options (None: none, for `nr-run --help`); the others are
    listed by name and help. Building every subcommand's options is most of the CPU a start-up costs."""

    def __init__(self, action: argparse._SubParsersAction, only: str | None) -> None:
        self.action, self.only = action, only
        self.unused = argparse.ArgumentParser(add_help=False)     # never parses: main runs only `only`

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        if name == self.only:
            return self.action.add_parser(name, **kwargs)
        # what argparse records of a subcommand for its choices and help, without building its parser
        self.action.choices[name] = self.unused
        self.action._choices_actions.append(self.action._ChoicesPseudoAction(name, (), kwargs.get("help", "")))
        ignored: argparse.ArgumentParser = _Ignored()  # type: ignore[assignment]
        return ignored


_ALL = "*"


def _command(argv: Sequence[str]) -> str | None:
    """The subcommand an argument list runs: its first word that is no option (top-level options take no value)."""
    return next((a for a in argv if not a.startswith("-")), None)


def _export_kinds() -> list[str]:
    """`export`'s kinds, from its registry (loaded only when the export command is parsed)."""
    from nr_run.runbooks.export import EXPORTERS

    return sorted(EXPORTERS)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nr-run")
    except PackageNotFoundError:      # run from a source tree that was never installed
        return "unknown (not installed)"


class _Version(argparse.Action):
    """--version, looked up when asked for (importlib.metadata costs a start-up more than the rest of --help)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit", default=argparse.SUPPRESS)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        sys.stdout.write(f"nr-run {_version()}\n")         # on stdout, as argparse's own version action
        parser.exit()


def build_parser(only: str | None = _ALL) -> argparse.ArgumentParser:
    """The whole parser; with `only` (a subcommand, or None), the options of that subcommand alone."""
    parser = argparse.ArgumentParser(prog="nr-run", description="Runbook for lossless RoCEv2 AI back-end fabrics.",
                                     epilog="Exit codes (every command): 0 success, 1 failure, 2 differences pending, "
                                            "3 invalid input, 4 could not check (docs/exit-codes.md)")
    parser.add_argument("--version", action=_Version)
    action = parser.add_subparsers(dest="command", required=True)
    sub: Any = action if only == _ALL else _OnlyOne(action, only)

    inv = sub.add_parser("inventory", help="inventory commands")
    inv_sub = inv.add_subparsers(dest="action", required=True)
    val = inv_sub.add_parser("validate", help="compile the site and run every preflight rule")
    _common(val)
    mig = inv_sub.add_parser("migrate", help="rewrite fabric.yaml to the current inventory format (comments kept)")
    _common(mig)

    ren = sub.add_parser("render", help="render one config per switch")
    _common(ren)
    _selection(ren)
    ren.add_argument("--out", type=types.folder, help="output folder (default: artifacts run folder)")
    ren.add_argument("--artifacts", type=types.folder, default=".nr-run", help="artifacts folder (default .nr-run)")

    dep = sub.add_parser("deploy", help="dry-run diffs (default) or a staged commit with automatic rollback")
    _common(dep)
    _selection(dep)
    _device_io(dep)
    _check_options(dep)
    dep.add_argument("--commit", action="store_true", help="commit (default is a dry run)")
    dep.add_argument("--yes", action="store_true", help="do not ask before committing (required without a TTY)")
    dep.add_argument("--replace", action="store_true", help="replace the whole config (default: merge)")
    dep.add_argument("--canary", type=types.canary, default=1, help="canary devices per role (default 1)")
    dep.add_argument("--batch", default="25%", help="batch size after the canary: N or P%% (default 25%%)")
    low, high = types.CONFIRM_TIMEOUT_RANGE
    dep.add_argument("--confirm-timeout", type=types.confirm_timeout, default=300,
                     help=f"revert timer in seconds, {low}-{high} (default 300)")
    dep.add_argument("--show-diff", action="store_true",
                     help="print every diff in full (default: a summary; full diffs are in the artifacts)")
    dep.add_argument("--skip-checks", action="store_true", help="do not post-check stages (DANGEROUS)")
    dep.add_argument("--break-lock", action="store_true",
                     help="remove another deploy's device markers (nr-run-<site>-<time>) instead of refusing "
                          "those devices; only when that deploy is known to be dead")

    chk = sub.add_parser("check", help="post-checks: PFC/ECN, fabric health, RDMA reachability")
    _common(chk)
    _device_io(chk)
    chk.add_argument("--checks", help="comma-separated check names or tags (default: the catalog's, else all)")
    chk.add_argument("--format", default="table", help="table or csv (findings, one row each, on stdout)")
    _filters(chk)
    _check_options(chk)
    _cluster(chk)

    job = sub.add_parser("job-check", help="check the fabric under a job's nodes (Slurm prolog): exit 0 ok, 1 drain, "
                                           "4 not checked")
    _common(job)
    _device_io(job)
    _check_options(job)
    job.add_argument("--nodes", required=True,
                     help="the job's nodes, Slurm hostlist syntax (e.g. 'gpu[1-4,7]', $SLURM_JOB_NODELIST)")
    job.add_argument("--budget", type=types.budget, default=None,
                     help="seconds the check may take (default: the catalog's job_check.budget_s, else 10)")

    com = sub.add_parser("compliance", help="scheduled compliance: drift + checks, reports")
    _common(com)
    _device_io(com)
    com.add_argument("--format", default="table", help="table,json,junit,md,html,prom,csv")
    com.add_argument("--checks", help="comma-separated check names or tags (default: the catalog's, else all)")
    _filters(com)
    com.add_argument("--out", type=types.folder, help="report folder")
    com.add_argument("--every", type=types.every, help="repeat every interval, 10s to 7d (e.g. 15m)")
    _check_options(com)
    _retention(chk)
    _retention(com)
    _history_commands(sub)

    ana = sub.add_parser("analyze", help="prove the fabric lossless, deadlock-free and balanced (whole-fabric analyses)")
    _common(ana)
    _device_io(ana)      # --lab: judge every hop by the state collected from the lab twin
    ana.add_argument("--live", action="store_true", help="judge every hop by the state collected from the devices")
    ana.add_argument("--failures", type=types.failures, default=1, metavar="K",
                     help="link or switch failures to enumerate, {}-{} (default 1)".format(*types.FAILURES_RANGE))
    ana.add_argument("--pattern", choices=PATTERNS, default="alltoall",
                     help="collective traffic pattern for ECMP load (default alltoall)")
    ana.add_argument("--qps", type=types.qps, default=1, metavar="N",
                     help="RoCE QPs per connection, {}-{} (default 1)".format(*types.QPS_RANGE))
    ana.add_argument("--format", default="table", help="table,json,html (json/html are written to --out)")
    ana.add_argument("--out", type=types.folder, help="report folder (default: artifacts run folder)")
    ana.add_argument("--only", help="comma-separated analysis names (default: all registered)")

    ex = sub.add_parser("export", help="write the fabric for a scheduler: Slurm topology files, Kubernetes labels, "
                                       "the NCCL/UCX environment")
    ex.add_argument("kind", choices=_export_kinds() if only in (_ALL, "export") else [],
                    help="slurm: topology.conf (tree) and a topology/block file; "
                         "k8s-labels: node labels per tier; nccl: nccl.env")
    _common(ex)
    ex.add_argument("--out", type=types.folder, help="output folder (default: artifacts run folder)")
    ex.add_argument("--artifacts", type=types.folder, default=".nr-run", help="artifacts folder (default .nr-run)")

    lab = sub.add_parser("lab", help="the embedded lab twin (serves a containerlab topology file)",
                         epilog=_FAULT_KINDS, formatter_class=_LabHelp)
    lab.add_argument("action", choices=["up", "down", "status", "reset", "fault", "topology"],
                     help="reset: every device back to day 0, faults cleared; a running lab keeps running")
    _common(lab)
    lab.add_argument("--workers", type=types.workers, default=20, help=argparse.SUPPRESS)
    lab.add_argument("--insecure", action="store_true", help=argparse.SUPPRESS)
    lab.add_argument("--latency-ms", type=types.latency_ms, default=0, help="added latency per device call")
    lab.add_argument("--topology", help="up: the containerlab topology file to serve (default: generate the site's)")
    lab.add_argument("--out", type=types.folder,
                     help="topology: output folder for <site>.clab.yml and <site>/ (default ./clab)")
    lab.add_argument("--base-port", type=types.base_port, help="up: device i listens on BASE+i (default 16000, or free ports "
                     "when those are taken); a given BASE that is taken is refused")
    lab.add_argument("--shards", type=types.lab_shards,
                     help="up: processes serving the devices (default: NR_RUN_LAB_SHARDS, else one per 512 devices, "
                     "at most one per core)")
    lab.add_argument("fault_args", nargs="*", help="for 'fault': KIND [key=value ...] (drift: lines='a;b') | clear [KIND]")
    return parser


# command -> "module:function" of its handler, imported lazily: each command pulls in only what it needs
HANDLERS = {
    "inventory": "nr_run.cli.commands:inventory",
    "render": "nr_run.cli.commands:render",
    "deploy": "nr_run.cli.deploy:deploy",
    "check": "nr_run.cli.check:check",
    "job-check": "nr_run.cli.job:job_check",
    "compliance": "nr_run.cli.check:compliance",
    "watch": "nr_run.cli.watch:watch",
    "exporter": "nr_run.cli.exporter:exporter",
    "report": "nr_run.cli.report:report",
    "analyze": "nr_run.cli.analyze:analyze",
    "lab": "nr_run.cli.lab:lab",
    "export": "nr_run.cli.export:export",
}


def _handler(args: argparse.Namespace) -> Callable[[argparse.Namespace], int]:
    import importlib

    module, _, name = HANDLERS[args.command].partition(":")
    handler: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(module), name)
    return handler


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    command = _command(words)
    parser = build_parser(command if command in HANDLERS else None)
    try:
        args, extra = parser.parse_known_args(words)
        # `lab fault KIND key=value ...` may come after the options; argparse alone would refuse it
        if extra and args.command == "lab" and args.action == "fault" and not any(e.startswith("-") for e in extra):
            args.fault_args = [*args.fault_args, *extra]
        elif extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        problem = types.check_site_folder(args.site, args.inventory_dir)
        if problem:
            parser.error(problem)
    except SystemExit as exc:  # argparse exits 2 on usage errors; DESIGN.md says 3
        return EXIT_INVALID if exc.code else EXIT_OK
    import logging

    # library warnings and tracebacks never reach the screen (Python's last-resort handler prints them);
    # a run that has a log file attaches it (RunRecords.capture_logging)
    logging.getLogger().addHandler(logging.NullHandler())
    from nr_run.intent.errors import InventoryError
    from nr_run.platforms.policy import PolicyMissing
    from nr_run.platforms.registry import MissingCapability, UnknownPlatform
    from nr_run.platforms.templates import TemplateMissing
    from nr_run.runbooks.inventory import CredentialsMissing

    gc_for_runs()
    try:
        return _handler(args)(args)
    except BrokenPipeError:
        quiet_broken_pipe()
        return EXIT_OK
    except (UsageError, CredentialsMissing, PolicyMissing, TemplateMissing, UnknownPlatform, MissingCapability,
            InventoryError) as exc:
        print(f"nr-run: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except OSError as exc:      # a fault of this host (full disk, `ulimit -f`, an unreadable file): one line
        from nr_run.runbooks.records import host_fault

        print(f"nr-run: {host_fault(exc)}", file=sys.stderr)
        return EXIT_FAIL
    except MemoryError:
        print("nr-run: out of memory", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:   # a second Ctrl-C: device calls may still hold worker threads, do not wait
        import os

        print("nr-run: interrupted", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_FAIL)


if __name__ == "__main__":
    sys.exit(main())
