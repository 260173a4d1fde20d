"""`nr-run report`: what the site's history saw in a window, or on a training job's ports during the job.

Reads only the history database and the audit log: no device is contacted. Exit codes: 0 report shown,
1 no history recorded for the site yet, 3 invalid input. JSON schema: docs/history.md ("nr-run.report/1").
"""

from __future__ import annotations

import argparse
import re
import time
from typing import Any

from rich.console import Console

from nr_run.cli.common import EXIT_FAIL, EXIT_INVALID, EXIT_OK, UsageError, emit_json, make_console, verbosity

ROWS = 20        # findings per table unless -v
DEFAULT_SINCE_S = 86400
_JOB = re.compile(r"[A-Za-z0-9_.+-]{1,64}")


def _window(args: argparse.Namespace) -> tuple[float, float, dict[str, Any] | None]:
    """(since, until, job) from --since or from --job/--nodes/--from/--to."""
    from nr_run.history.report import parse_iso

    now = time.time()
    if not args.job:
        if args.nodes or args.start or args.end:
            raise UsageError("--nodes, --from and --to go with --job")
        return now - (args.since or DEFAULT_SINCE_S), now, None
    if args.since is not None:
        raise UsageError("--since does not go with --job: the job's window is --from/--to")
    if not _JOB.fullmatch(args.job):
        raise UsageError(f"--job {args.job[:40]!r}: 1-64 of A-Z a-z 0-9 _ . + -")
    if not args.nodes or not args.start:
        raise UsageError("--job needs --nodes and --from (and --to, default now)")
    start = parse_iso(args.start)
    if start is None:
        raise UsageError(f"--from {args.start[:40]!r} is not an ISO 8601 time from 1970 on (e.g. 2026-12-01T08:00:00Z)")
    end = parse_iso(args.end) if args.end else now
    if end is None:
        raise UsageError(f"--to {args.end[:40]!r} is not an ISO 8601 time from 1970 on (e.g. 2026-12-01T09:30:00Z)")
    if end <= start:
        raise UsageError("--to must be after --from")
    return start, end, {"id": args.job, "nodes": args.nodes}


def report(args: argparse.Namespace) -> int:
    from nr_run.cli.commands import load_intent
    from nr_run.cli.job import job_nodes, scope_of
    from nr_run.history.report import site_report
    from nr_run.runbooks.history import history_path, open_store
    from nr_run.runbooks.records import read_audit

    console = make_console(stderr=args.json)
    since, until, job = _window(args)
    ports = devices = None
    intent = None
    if job is not None:
        nodes = job_nodes(job["nodes"])
        intent, _ = load_intent(args, console)
        if intent is None:
            return EXIT_INVALID
        scope = scope_of(intent, nodes)
        ports = scope.port_set()
        devices = set(nodes)
        job.update(nodes_expanded=nodes, ports=[{"device": d, "port": p} for d, p in sorted(ports)],
                   span=scope.span.as_dict())
    path = history_path(args.artifacts, args.site)
    if not path.exists():
        console.print(f"no history for {args.site} yet ({path}): run check, compliance or watch first")
        return EXIT_FAIL
    with open_store(args.artifacts, args.site) as store:
        doc = site_report(store, since, until, read_audit(args.artifacts), ports=ports, devices=devices,
                          top=args.top, peers=_peers(args, intent))
    if job is not None:
        doc["job"] = job
    if args.json:
        emit_json(doc)
    else:
        print_report(doc, console, verbose=verbosity(args) >= 1, quiet=verbosity(args) < 0)
    return EXIT_OK


def _peers(args: argparse.Namespace, intent: Any) -> dict[tuple[str, str], str]:
    """(device, port) -> the cabled far device, from the site's intent: the timeline relates an event to a
    deploy step on its link's far end. An inventory that does not compile gives none (the report still runs)."""
    if intent is None:
        from nr_run.intent import compile_site
        from nr_run.runbooks.inventory import site_dir

        try:
            intent = compile_site(site_dir(args.site, args.inventory_dir))
        except Exception:          # the history report does not depend on the inventory being valid today
            return {}
    out: dict[tuple[str, str], str] = {}
    for lk in intent.links:
        out[(lk.a_device, lk.a_port)] = lk.b_device
        out[(lk.b_device, lk.b_port)] = lk.a_device
    return out


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    return f"{x:,.1f}" if isinstance(x, float) else str(x)


def print_report(doc: dict[str, Any], console: Console, verbose: bool = False, quiet: bool = False) -> None:
    """Tables and the timeline, then one line with the counts; -q: the new findings and that line. What came
    from devices and inventories is printed as text, never as markup."""
    from rich.markup import escape
    from rich.table import Table

    job = doc.get("job")
    scope = f"job {job['id']} ({job['nodes']}, {len(job['ports'])} ports)" if job else doc["site"]
    runs = doc["runs"]
    span = job.get("span") if job else None
    if span:
        zones = ", ".join(f"z{z}" for z in span["zones"])
        console.print(f"job spans {('zone(s) ' + zones + '; ') if zones else ''}CTSWs {', '.join(span['ctsws']) or '-'}"
                      + (f"; {span['warning']}" if span["warning"] else ""), highlight=False, markup=False)
    f = doc["findings"]
    last = (f"{scope}: {doc['since']} .. {doc['until']}: {runs['count']} collections "
            f"({', '.join(f'{k} {v}' for k, v in runs['by_kind'].items()) or 'none'}); findings: {len(f['new'])} new, "
            f"{len(f['resolved'])} resolved, {len(f['open'])} open")
    tables = (("new findings", f["new"], "first_seen"),) if quiet else (
        ("new findings", f["new"], "first_seen"), ("resolved findings", f["resolved"], "resolved"))
    for title, rows, col in tables:
        if rows:
            t = Table(title=title)
            for c in (col, "check", "device", "target", "observed"):
                t.add_column(c, overflow="fold")
            shown = rows if verbose else rows[:ROWS]
            for r in shown:
                t.add_row(*(escape(str(r[c])) for c in (col, "check", "device", "target", "observed")))
            console.print(t)
            if len(shown) < len(rows):
                console.print(f"... and {len(rows) - len(shown)} more (-v or --json shows all)")
    if quiet:
        console.print(last, highlight=False, markup=False)
        return
    pause = doc["top_pause"]
    if pause["ports"]:
        t = Table(title=f"most pause ({pause['measure'].replace('_', ' ')})"
                        + (f": {pause['note']}" if pause["note"] else ""))
        for c in ("device", "port", "priority", "rx", "tx", "total"):
            t.add_column(c, justify="right" if c in ("rx", "tx", "total") else "left")
        for r in pause["ports"]:
            t.add_row(escape(r["device"]), escape(r["port"]), _fmt(r["priority"]), f"{r['rx']:,}", f"{r['tx']:,}",
                      f"{r['total']:,}")
        console.print(t)
    if doc["rates"]:
        t = Table(title="counters that grew (per second: window average, peak, last 5m, last 1h)")
        for c in ("counter", "device", "port", "index", "increase", "avg/s", "peak/s", "5m/s", "1h/s", "resets"):
            t.add_column(c, justify="right" if c not in ("counter", "device", "port") else "left")
        for r in doc["rates"]:
            t.add_row(escape(r["counter"]), escape(r["device"]), escape(r["port"]), _fmt(r["index"]), f"{r['increase']:,}",
                      _fmt(r["per_second"]), _fmt(r["peak_per_second"]), _fmt(r["windows"]["5m"]),
                      _fmt(r["windows"]["1h"]), str(r["resets"]))
        console.print(t)
    if doc["link_flaps"]:
        console.print("link flaps: " + ", ".join(f"{r['device']} {r['port']} x{r['flaps']}" for r in doc["link_flaps"]),
                      highlight=False, markup=False)
    if doc["timeline"]:
        console.print("timeline:")
        for it in doc["timeline"]:
            console.print(f"  {it['time']}  [{it['source']}] {it['text']}", highlight=False, markup=False)
    elif verbose:
        console.print("timeline: nothing happened")
    console.print(last, highlight=False, markup=False)
