"""CLI command implementations (one function per verb; each returns an exit code)."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from nr_run.cli.common import EXIT_FAIL, EXIT_INVALID, EXIT_OK, UsageError, emit_json, gc_paused, make_console
from nr_run.intent.errors import Finding, InventoryError


def load_intent(args: argparse.Namespace, console: Console):
    """Load the site (runbooks.site.load_site: compile, platform preflight, safety proofs) or print its
    findings; returns (intent or None, findings)."""
    from nr_run.runbooks.inventory import site_dir
    from nr_run.runbooks.site import load_site

    directory = site_dir(args.site, args.inventory_dir)
    if not directory.is_dir():
        raise UsageError(f"no site {args.site!r}: {directory} is not a folder")
    with gc_paused():
        site = load_site(directory)
    if not site.ok:
        if not getattr(args, "json", False):
            print_findings(site.findings, console)
        return None, site.findings
    return site.intent, site.findings


def announce_lab(args: argparse.Namespace, console: Console) -> None:
    """Say when --lab will start a temporary twin (none is running for the site): it lives for this run only."""
    if not getattr(args, "lab", False) or getattr(args, "quiet", False):
        return
    from nr_run.cli.lab import _state_dir, saved_state
    from nr_run.lab.twin.status import lab_status

    state = _state_dir(args)
    status = lab_status(state)
    if not status["running"]:
        start = (f"from the device state saved in {state} by an earlier {status.get('site') or args.site} lab "
                 f"(`nr-run lab reset --site {args.site}` goes back to day 0)") if saved_state(state) else "from day 0"
        console.print(f"no lab twin running for {args.site}: starting a temporary one for this run, {start} "
                      f"(`nr-run lab up --site {args.site}` keeps one running)")


CELL_MAX = 300       # characters of an inventory-echoed value a table cell shows (JSON carries it whole)


def _cell(text: str) -> str:
    """One table cell from inventory text: control characters shown escaped, clipped (a key of a million
    newlines must not take seconds to lay out)."""
    head = text[:CELL_MAX]
    if not head.isprintable():
        head = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in head)[:CELL_MAX]
    return head + (f"... ({len(text)} characters)" if len(text) > CELL_MAX else "")


def print_findings(findings: list[Finding], console: Console) -> None:
    table = Table(title="Preflight findings", show_lines=False)
    for col in ("severity", "rule", "file", "host", "field", "message"):
        table.add_column(col)
    for f in findings:
        style = "red" if f.severity == "error" else "yellow"
        # inventory text is not rich markup: a pattern like "[/_-]" in a message must print as written
        table.add_row(f"[{style}]{f.severity}[/]", *(escape(_cell(v)) for v in (f.rule, f.file, f.host or "-",
                                                                                f.field or "-", f.message)))
    console.print(table)


def inventory(args: argparse.Namespace) -> int:
    return inventory_migrate(args) if args.action == "migrate" else inventory_validate(args)


def inventory_migrate(args: argparse.Namespace) -> int:
    """Rewrite the site's fabric.yaml to the current format, then validate it as every command would."""
    from nr_run.intent.formats import CURRENT
    from nr_run.runbooks.inventory import site_dir
    from nr_run.runbooks.migrate import migrate_site

    console = make_console(stderr=args.json)
    changes = migrate_site(site_dir(args.site, args.inventory_dir))
    for line in changes if not args.json else []:
        console.print(f"  {line}", markup=False, highlight=False)
    intent, findings = load_intent(args, console)
    errors = [f for f in findings if f.severity == "error"]
    if args.json:
        emit_json({"site": args.site, "format": CURRENT, "changes": changes, "valid": not errors,
                   "findings": [f.as_dict() for f in findings]})
    else:
        console.print(f"site {args.site}: fabric.yaml {'migrated to' if changes else 'already at'} format {CURRENT}"
                      + ("" if not errors else f"; {len(errors)} error(s) remain (see above)"),
                      markup=False, highlight=False)
    return EXIT_INVALID if errors or intent is None else EXIT_OK


def inventory_validate(args: argparse.Namespace) -> int:
    console = make_console(stderr=args.json)
    intent, findings = load_intent(args, console)
    errors = [f for f in findings if f.severity == "error"]
    if args.json:
        emit_json({"site": args.site, "valid": not errors, "findings": [f.as_dict() for f in findings],
                   "devices": sorted(intent.devices) if intent else [], "links": len(intent.links) if intent else 0})
        return EXIT_INVALID if errors else EXIT_OK
    if errors:
        console.print(f"[red]site {args.site} invalid: {len(errors)} error(s)[/]: nothing may be rendered or pushed")
        return EXIT_INVALID
    if findings and not getattr(args, "quiet", False):        # -q: the verdict only (warnings do not fail)
        print_findings(findings, console)
    console.print(f"[green]site {args.site} valid[/]: {len(intent.devices)} devices, {len(intent.links)} links, "
                  f"{len(findings)} warning(s)")
    return EXIT_OK


def select_switches(intent, hosts: str | None, role: str | None) -> list[str]:
    """Names of the rendered devices (switches, and GPU servers for their NICs) selected by --hosts/--role."""
    from nr_run.runbooks.render import builder
    from nr_run.runbooks.render import select_switches as rendered

    wanted = [h.strip() for h in hosts.split(",") if h.strip()] if hosts else None
    plain = [h for h in wanted or [] if h in intent.devices and builder(intent.devices[h]) is None]
    if plain:
        raise UsageError(f"not configured by nr-run (its platform has no config builder): {', '.join(plain)}")
    try:
        names = [d.name for d in rendered(intent, wanted, role)]
    except ValueError as exc:  # unknown host names
        raise UsageError(str(exc)) from exc
    if not names:   # the same exit (3) whatever the output mode: nothing to act on is a selection mistake
        raise UsageError(f"no switch matches the selection (--hosts {hosts or '-'}, --role {role or '-'})")
    return names


def render(args: argparse.Namespace) -> int:
    from nr_run.platforms.built import sharing

    console = make_console(stderr=args.json)
    with sharing():     # the safety preflight's structured configs are the ones rendered (built once)
        return _render(args, console)


def _render(args: argparse.Namespace, console: Any) -> int:
    from pathlib import Path

    from nr_run.runbooks.render import render_device, write_configs

    intent, findings = load_intent(args, console)
    if intent is None:
        if args.json:
            emit_json({"site": args.site, "findings": [f.as_dict() for f in findings], "devices": []})
        return EXIT_INVALID
    names = select_switches(intent, args.hosts, args.role)
    if args.out:
        out = Path(args.out)
    else:                           # the run's own records folder (imported only when it is used)
        from nr_run.runbooks.records import RunRecords

        out = RunRecords(args.artifacts, args.site, "render").dir / "configs"
    status = contextlib.nullcontext()
    if not args.json and not getattr(args, "quiet", False):   # a large site takes seconds: say what is going on
        status = console.status(f"rendering {len(names)} config(s)") if console.is_terminal else status
        if not console.is_terminal:
            console.print(f"rendering {len(names)} config(s) for {args.site}")
    try:
        with gc_paused(), status:
            configs = {n: render_device(intent.devices[n], intent) for n in names}
    except InventoryError:  # a value the render guard refuses: invalid input, exit 3 (cli.main)
        raise
    except Exception as exc:  # a template bug must name the device
        console.print(f"[red]render failed[/]: {exc}")
        return EXIT_FAIL
    paths = write_configs(configs, out, intent)
    rows = [{"device": n, "platform": intent.devices[n].platform, "role": intent.devices[n].role,
             "lines": configs[n].count("\n"), "path": str(paths[n])} for n in names]
    if args.json:
        emit_json({"site": args.site, "out": str(out), "devices": rows,
                   "warnings": [f.as_dict() for f in findings]})
        return EXIT_OK
    if not getattr(args, "quiet", False):
        table = Table(title=f"Rendered configs for {args.site}")
        for col in ("device", "platform", "role", "lines", "path"):
            table.add_column(col, justify="right" if col == "lines" else "left")
        for row in rows:
            table.add_row(row["device"], row["platform"], row["role"], str(row["lines"]), row["path"])
        console.print(table)
    console.print(f"rendered {len(rows)} config(s) for {args.site} into {out}"
                  + (f" ({len(findings)} warning(s): inventory validate shows them)" if findings else ""),
                  markup=False, highlight=False)
    return EXIT_OK
