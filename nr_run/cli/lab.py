"""`nr-run lab ...` and the --lab device session (the only product code that imports lab/).

The twin serves a containerlab topology file: `lab up --topology FILE` serves that file as it is (hand edits
included); without --topology, `lab up` first generates the site's file (as `lab topology` does) into the lab's
state folder. `lab topology [--out DIR]` writes <DIR>/<site>.clab.yml and <DIR>/<site>/ (default DIR: ./clab).
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from nr_run.cli.common import EXIT_FAIL, EXIT_INVALID, EXIT_OK, UsageError, emit_json
from nr_run.intent.models import FabricIntent
from nr_run.runbooks.inventory import init_nornir, site_dir


def _state_dir(args: argparse.Namespace) -> Path:
    """The twin's state folder: NR_RUN_LAB_STATE_DIR, else ./.nr-run/lab/<site>/."""
    import os

    from nr_run.lab.twin.status import default_state_dir

    override = os.environ.get("NR_RUN_LAB_STATE_DIR")
    return Path(override) if override else default_state_dir(args.site)


def running_lab_addresses(args: argparse.Namespace) -> dict:
    """The endpoints of the site's running twin (`lab up`): workers of a distributed run connect to them."""
    from nr_run.lab.twin.status import lab_status

    status = lab_status(_state_dir(args))
    if not status["running"]:
        raise UsageError(f"--cluster with --lab needs a running lab: nr-run lab up --site {args.site}")
    addresses: dict = status["addresses"]
    return addresses


@contextlib.contextmanager
def device_session(args: argparse.Namespace, intent: FabricIntent | None = None) -> Iterator:
    """A Nornir for the site; with --lab pointed at the running twin, or at an ephemeral in-process one (its
    topology generated from `intent`, the site the command already loaded, else loaded here)."""
    if not args.lab:
        nr = init_nornir(args.site, args.inventory_dir, workers=args.workers, insecure=args.insecure)
        try:
            yield nr
        finally:
            nr.close_connections()
        return
    if intent is None:
        import yaml

        from nr_run.intent.source import SafeLoader  # libyaml's when present

        raw = yaml.load((site_dir(args.site, args.inventory_dir) / "fabric.yaml").read_text(), Loader=SafeLoader)
        is_lab = bool((raw or {}).get("lab")) if isinstance(raw, dict) else False
    else:
        is_lab = intent.lab
    if not is_lab:
        raise UsageError(f"site {args.site} is not a lab site (fabric.yaml lab: true); --lab refused")
    import tempfile

    # the status reader is light; the twin itself (aiohttp, asyncssh) is imported only to start one
    from nr_run.lab.twin.status import lab_status

    state = _state_dir(args)
    status = lab_status(state)
    refuse_other_site(args.site, state, status)
    lab = None
    if status["running"]:
        addresses = status["addresses"]
    else:
        from nr_run.lab.twin.lab import Lab

        with tempfile.TemporaryDirectory(prefix="nr-run-clab-") as scratch:
            lab = Lab(_generate(args, Path(scratch), intent), state, base_port=0)
        addresses = lab.start()
    nr = init_nornir(args.site, args.inventory_dir, workers=args.workers, lab=True, address_map=addresses)
    try:
        yield nr
    finally:
        nr.close_connections()
        if lab is not None:
            lab.stop()


def refuse_other_site(site: str, state: Path, status: dict) -> None:
    """One lab per site: a state folder that holds (or ran) another site's twin is refused by name, never
    served to this site (its hosts would not resolve, or worse, another site's saved state would be reused)."""
    served = status.get("site")
    if isinstance(served, str) and served and served != site:
        raise UsageError(f"the lab in {state} serves {served}, not {site} (NR_RUN_LAB_STATE_DIR points at it); "
                         f"give {site} its own state folder, or unset NR_RUN_LAB_STATE_DIR "
                         f"(default: .nr-run/lab/{site}/)")


def saved_state(state: Path) -> bool:
    """The state folder holds device state a twin started there would boot from (not day 0)."""
    devices = state / "devices"
    try:
        return devices.is_dir() and any(p.is_file() for d in devices.iterdir() if d.is_dir() for p in d.iterdir())
    except OSError:
        return False


def _generate(args: argparse.Namespace, out: Path, intent: FabricIntent | None = None) -> Path:
    """The site's containerlab topology, generated from its intent (loaded here unless given) into `out`;
    exit 3 on a bad inventory."""
    from nr_run.cli.commands import load_intent
    from nr_run.runbooks.clab import write_topology

    if intent is None:
        intent, _ = load_intent(args, Console(stderr=True))
    if intent is None:
        raise UsageError(f"site {args.site}: the inventory has errors (see above); no topology generated")
    return write_topology(intent, out)


def _topology(args: argparse.Namespace, state: Path) -> Path:
    """The file `lab up` serves: --topology as given, else the site's generated one in the state folder."""
    if args.topology:
        path = Path(args.topology).resolve()
        if not path.is_file():
            raise UsageError(f"--topology {args.topology}: no such file")
        return path
    return _generate(args, state / "clab")


def _fault_params(items: list[str]) -> dict[str, object]:
    params: dict[str, object] = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"fault parameter {item!r} must be key=value")
        key, value = item.split("=", 1)
        if key == "lines":  # drift: config lines separated by ';'
            params[key] = [line.strip() for line in value.split(";") if line.strip()]
        else:
            params[key] = int(value) if value.isdigit() else value
    return params


def lab(args: argparse.Namespace) -> int:
    from nr_run.lab.twin import lab as twin
    from nr_run.lab.twin.clab import ClabError
    from nr_run.lab.twin.platforms import DEFAULT_BASE_PORT, PortsBusy

    console = Console(stderr=args.json)
    state = _state_dir(args)
    if args.action == "up":
        try:
            status = twin.lab_up(_topology(args, state), state, latency_ms=args.latency_ms,
                                 base_port=DEFAULT_BASE_PORT if args.base_port is None else args.base_port,
                                 auto_port=args.base_port is None, shards=args.shards)
        except (ClabError, PortsBusy, ValueError) as exc:     # ValueError: a bad NR_RUN_LAB_SHARDS
            raise UsageError(str(exc)) from exc
        if status.get("note"):
            console.print(f"[yellow]{status['note']}[/]")
    elif args.action == "down":
        twin.lab_down(state)
        status = twin.lab_status(state)
    elif args.action == "reset":
        twin.lab_reset(state)
        status = twin.lab_status(state)
    elif args.action == "status":
        status = twin.lab_status(state)
    elif args.action == "topology":
        from nr_run.cli.commands import load_intent
        from nr_run.runbooks.clab import write_topology

        intent, _ = load_intent(args, console)
        if intent is None:
            return EXIT_INVALID
        path = write_topology(intent, Path(args.out or "clab"))
        if args.json:
            emit_json({"site": args.site, "topology": str(path)})
        else:
            console.print(f"wrote {path}")
        return EXIT_OK
    else:  # fault
        if not args.fault_args:
            raise UsageError("lab fault KIND [key=value ...] | lab fault clear [KIND]")
        refuse_other_site(args.site, state, twin.lab_status(state))
        if not state.is_dir():       # never up: nothing to inject into, nowhere to keep it for the next start
            raise UsageError(f"no lab for {args.site} in {state}: `nr-run lab up --site {args.site}` first")
        kind, rest = args.fault_args[0], args.fault_args[1:]
        try:
            if kind == "clear":
                removed = twin.lab_clear(state, rest[0] if rest else None, **_fault_params(rest[1:]))
                result = {"removed": removed}
            else:
                result = twin.lab_fault(state, kind, **_fault_params(rest))
        except ValueError as exc:
            raise UsageError(str(exc)) from exc
        if args.json:
            emit_json(result)
        elif kind == "clear":
            console.print(f"lab {args.site}: {result['removed']} fault(s) cleared", markup=False, highlight=False)
        else:
            console.print(f"lab {args.site}: fault injected: {fault_text(result)}", markup=False, highlight=False)
        return EXIT_OK
    if args.json:
        emit_json(status)
        return EXIT_OK
    quiet = bool(getattr(args, "quiet", False))
    if not quiet:
        table = Table(title=f"lab {args.site}: {'running' if status['running'] else 'stopped'} ({status['state_dir']})")
        for col in ("device", "platform", "address", "port"):
            table.add_column(col)
        for name, ep in sorted(status.get("addresses", {}).items()):
            table.add_row(name, ep.get("platform", ""), ep.get("host", ""), str(ep.get("port", "")))
        console.print(table)
    for fault in status.get("faults", []):
        console.print(f"fault: {fault_text(fault)}", markup=False, highlight=False)
    if status.get("topology") and not quiet:
        console.print(f"topology: {status['topology']}")
    if status.get("note") and args.action != "up":      # `up` printed it already
        console.print(f"[yellow]{status['note']}[/]")
    console.print(f"lab {args.site}: {'running' if status['running'] else 'stopped'}, "
                  f"{len(status.get('addresses', {}))} device(s), {len(status.get('faults', []))} fault(s)",
                  markup=False, highlight=False)
    return EXIT_OK if args.action != "up" or status["running"] else EXIT_FAIL


def fault_text(fault: Any) -> str:
    """A fault as the operator typed it: `kind key=value ...` (and since when), not a Python dict."""
    if not isinstance(fault, dict):
        return str(fault)
    params = " ".join(f"{k}={v}" for k, v in sorted((fault.get("params") or {}).items()))
    when = fault.get("since")
    if isinstance(when, int | float):
        from datetime import UTC, datetime

        when = datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    since = f" (since {when})" if when else ""
    return f"{fault.get('kind', '?')}{' ' + params if params else ''}{since}"
