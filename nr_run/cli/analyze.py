"""`nr-run analyze`: run every registered whole-fabric analysis on the compiled intent and report.

Exit codes: 0 every proof holds, 1 a proof fails, 3 invalid input (usage, inventory). Formats: a rich table
(default), JSON (docs/analyze.md) and a self-contained HTML page with plots, written to --out.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from nr_run.cli.common import EXIT_FAIL, EXIT_INVALID, EXIT_OK, UsageError, emit_json, gc_paused, make_console

FORMATS = ("table", "json", "html")
SCHEMA_VERSION = 1


def _formats(text: str) -> list[str]:
    wanted = [f.strip() for f in text.split(",") if f.strip()]
    bad = [f for f in wanted if f not in FORMATS]
    if bad or not wanted:
        raise UsageError(f"--format: {', '.join(bad) or 'nothing'} is not one of {', '.join(FORMATS)}")
    return wanted


def _selection(only: str | None) -> list[str]:
    from nr_run.analysis.registry import ANALYSES

    if only is None:            # an empty --only is a mistake, not "everything" (as an empty --hosts)
        return list(ANALYSES)
    names = [n.strip() for n in only.split(",") if n.strip()]
    unknown = [n for n in names if n not in ANALYSES]
    if unknown or not names:
        raise UsageError(f"--only: unknown analysis {', '.join(unknown) or '(none given)'} "
                         f"(known: {', '.join(ANALYSES)})")
    return [n for n in ANALYSES if n in names]


def payload(site: str, results: list[Any], options: dict[str, Any], generated: str) -> dict[str, Any]:
    """The JSON document (schema: docs/analyze.md)."""
    return {"schema": SCHEMA_VERSION, "site": site, "generated": generated, "options": options,
            "ok": all(r.ok for r in results), "seconds": round(sum(r.seconds for r in results), 3),
            "timing": {r.name: round(r.seconds, 3) for r in results},
            "analyses": [r.to_dict() for r in results]}


def run_analyses(fabric: Any, names: list[str], options: Any) -> list[Any]:
    """Each analysis in registry order, timed by the wall time of its call."""
    from nr_run.analysis.registry import load

    results = []
    for name in names:
        start = time.perf_counter()
        result = load(name)(fabric, options)
        result.seconds = time.perf_counter() - start
        results.append(result)
    return results


def collect_views(args: argparse.Namespace, fabric: Any) -> dict[str, Any]:
    """Every device's QoS as collected (twin with --lab, the devices with --live) over its rendered view."""
    from nr_run.cli.lab import device_session
    from nr_run.platforms.qos import STATE_SECTIONS, fabric_device_qos, from_intent, from_state
    from nr_run.platforms.state import DeviceState
    from nr_run.runbooks.check import collect_state

    sections = {name: set(STATE_SECTIONS) for name in fabric.devices}
    with device_session(args, fabric) as nr:
        results = nr.run(task=collect_state, fabric=fabric, sections_by_host=sections)
    views: dict[str, Any] = {}
    for name, dev in sorted(fabric.devices.items()):
        multi = results.get(name)
        state = multi[0].result if multi is not None and not multi.failed else None
        if not isinstance(state, DeviceState):
            why = str(multi[0].exception) if multi is not None and multi[0].exception else "no result"
            state = DeviceState(name, dev.platform, errors={s: why for s in STATE_SECTIONS})
        try:
            base = fabric_device_qos(dev, fabric)
        except (ValueError, KeyError, LookupError):
            base = from_intent(dev)
        views[name] = from_state(dev, state, base)
    return views


def _print(console: Any, site: str, results: list[Any], verbose: int) -> None:
    for r in results:
        if verbose < 0 and r.ok:      # -q: what fails, and the verdict line
            continue
        table = Table(title=f"{r.title} ({r.name}): {'holds' if r.ok else 'FAILS'} in {r.seconds:.2f} s",
                      title_style="bold green" if r.ok else "bold red")
        for col in ("verdict", "subject", "message", "fix"):
            table.add_column(col)
        failed = [f for f in r.findings if not f.passed]
        shown = r.findings if verbose > 0 else failed or r.findings[:10]
        for f in shown:
            style = "green" if f.passed else {"error": "red", "warning": "yellow"}.get(f.severity, "cyan")
            table.add_row(f"[{style}]{'ok' if f.passed else f.severity}[/]", escape(f.subject), escape(f.message),
                          escape(f.fix))
        console.print(table)
        if verbose > 0:
            for t in r.tables:
                sub = Table(title=t.title)
                for col in t.columns:
                    sub.add_column(str(col))
                for row in t.rows[:50]:
                    sub.add_row(*(escape(str(c)) for c in row))
                console.print(sub)
    timing = ", ".join(f"{r.name} {r.seconds:.2f} s" for r in results)
    ok = all(r.ok for r in results)
    console.print(f"{'[green]every proof holds' if ok else '[red]a proof fails'}[/] for {site} ({timing})")


def analyze(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from nr_run.analysis.options import AnalysisOptions
    from nr_run.cli.commands import print_findings
    from nr_run.platforms.site import load_site
    from nr_run.runbooks.inventory import site_dir
    from nr_run.runbooks.records import RunRecords, private_dir, utc_now_iso, write_private

    formats = _formats(args.format)
    names = _selection(args.only)
    if args.lab and args.live:
        raise UsageError("--lab and --live exclude each other")
    try:
        options = AnalysisOptions(failures=args.failures, pattern=args.pattern, qps_per_connection=args.qps)
    except ValidationError as exc:
        raise UsageError(f"analysis options: {exc.errors(include_url=False)[0]['msg']}") from exc
    console = make_console(stderr=args.json)
    with gc_paused():
        fabric, findings = load_site(site_dir(args.site, args.inventory_dir))
    if fabric is None or any(f.severity == "error" for f in findings):
        if args.json:
            emit_json({"schema": SCHEMA_VERSION, "site": args.site, "ok": False,
                       "findings": [f.as_dict() for f in findings], "analyses": []})
        else:
            print_findings(findings, console)
        return EXIT_INVALID
    source = "lab" if args.lab else "live" if args.live else "intent"
    if source != "intent":
        from nr_run.cli.commands import announce_lab
        from nr_run.platforms.qos import use_views

        announce_lab(args, console)
        use_views(fabric, collect_views(args, fabric))
    results = run_analyses(fabric, names, options)
    generated = utc_now_iso()
    doc = {**payload(args.site, results, options.model_dump(), generated), "source": source}
    written: list[Path] = []
    if "json" in formats or "html" in formats:
        # the reports describe the fabric (names, addresses, weak spots): private to their user, like the run folder
        out = private_dir(Path(args.out)) if args.out else RunRecords(args.artifacts, args.site, "analyze").dir
        if "json" in formats:
            written.append(write_private(out / "analyze.json", json.dumps(doc, indent=2, sort_keys=True) + "\n"))
        if "html" in formats:
            from nr_run.analysis.report import to_html

            written.append(write_private(out / "analyze.html",
                                         to_html(args.site, results, options.model_dump(), generated)))
    if args.json:
        emit_json({**doc, "written": [str(p) for p in written]})
    elif "table" in formats or not args.quiet:
        _print(console, args.site, results, 1 if args.verbose else (-1 if args.quiet else 0))
        for path in written:
            console.print(f"wrote {path}", markup=False, highlight=False)
    return EXIT_OK if doc["ok"] else EXIT_FAIL
