"""SHA-256 of every config `nr-run render` writes and of every preflight and lossless-proof finding, for the
checked-in sites and two generated ones: a speed change to compile, render or the safety preflight must leave
this output unchanged.

    .venv/bin/python benchmarks/render_fingerprint.py > before.json
    .venv/bin/python benchmarks/render_fingerprint.py --compare before.json     (exit 1 on any difference)
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SITES = ("dc1", "dc2", "star1", "mz1", "pfc1")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _site(directory: Path) -> dict[str, Any]:
    """Hashes of one site: each rendered file, the preflight findings, and each analysis' full findings."""
    from nr_run.analysis.lossless import analyse
    from nr_run.analysis.options import AnalysisOptions
    from nr_run.analysis.safety import safety_findings
    from nr_run.cli.main import main
    from nr_run.runbooks.site import load_site

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        with contextlib.redirect_stdout(io.StringIO()) as text:
            rc = main(["render", "--site", directory.name, "--inventory-dir", str(directory.parent),
                       "--out", tmp, "--json"])
        out["rc"] = rc
        out["stdout"] = _sha(text.getvalue().replace(tmp, "OUT").replace(str(directory.parent), "SITES").encode())
        out["files"] = {p.name: _sha(p.read_bytes()) for p in sorted(Path(tmp).iterdir())}
    site = load_site(directory)
    out["preflight"] = [json.loads(json.dumps(f.as_dict()).replace(str(directory.parent), "SITES"))
                        for f in site.findings]
    if site.intent is not None:
        out["safety"] = _sha(json.dumps([f.__dict__ for f in safety_findings(site.intent)], sort_keys=True,
                                        default=str).replace(str(directory.parent), "SITES").encode())
        result = analyse(site.intent, AnalysisOptions())
        result.seconds = 0.0
        out["lossless"] = _sha(json.dumps([f.__dict__ for f in result.findings] + [t.__dict__ for t in result.tables]
                                          + [f.__dict__ for f in result.figures] + [result.summary],
                                          sort_keys=True, default=str).replace(str(directory.parent), "SITES").encode())
    return out


def fingerprint() -> dict[str, Any]:
    from tests.sitegen import generate_site, generate_zoned_site

    out = {name: _site(REPO / "inventory" / name) for name in SITES}
    with tempfile.TemporaryDirectory() as tmp:
        out["gen64"] = _site(generate_site(Path(tmp), rtsw=48, ctsw=16, site="gen64"))
        out["zoned"] = _site(generate_zoned_site(Path(tmp), zones=2, units=2, atsw=16, site="zoned"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--compare", type=Path)
    args = ap.parse_args()
    now = fingerprint()
    if args.compare is None:
        print(json.dumps(now, indent=1, sort_keys=True))
        return 0
    before = json.loads(args.compare.read_text())
    diffs = [f"{site}.{key}" for site in sorted(set(before) | set(now))
             for key in sorted(set(before.get(site, {})) | set(now.get(site, {})))
             if before.get(site, {}).get(key) != now.get(site, {}).get(key)]
    files = sum(len(s.get("files", {})) for s in now.values())
    print(f"{len(now)} sites, {files} files: " + ("identical" if not diffs else "DIFFERENT: " + ", ".join(diffs)))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
