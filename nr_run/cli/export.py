"""`nr-run export KIND --site S`: write a scheduler's (or a library's) view of the fabric into --out."""

from __future__ import annotations

import argparse
from pathlib import Path

from nr_run.cli.commands import load_intent
from nr_run.cli.common import EXIT_INVALID, EXIT_OK, emit_json, make_console


def export(args: argparse.Namespace) -> int:
    from nr_run.runbooks.export import exporter
    from nr_run.runbooks.records import RunRecords, write_private

    console = make_console(stderr=args.json)
    intent, findings = load_intent(args, console)
    if intent is None:
        if args.json:
            emit_json({"site": args.site, "kind": args.kind, "findings": [f.as_dict() for f in findings],
                       "files": []})
        return EXIT_INVALID
    files = exporter(args.kind)(intent)
    out = Path(args.out) if args.out else RunRecords(args.artifacts, args.site, "export").dir / "export"
    paths = [str(write_private(out / name, text)) for name, text in sorted(files.items())]
    if args.json:
        emit_json({"site": args.site, "kind": args.kind, "out": str(out), "files": paths})
        return EXIT_OK
    for path in paths:
        console.print(path)
    console.print(f"exported {args.kind} for {args.site} ({intent.shape}, {len(intent.servers())} servers): "
                  f"{len(paths)} file(s) in {out}")
    return EXIT_OK
