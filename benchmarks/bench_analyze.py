"""`nr-run analyze` with K=1 on dc1 and on a generated 1,024-switch site (1,008 RTSWs, 16 CTSWs, 16,128 NICs):
wall time of the load (compile + preflight), of each registered analysis, and of the HTML report.

Target: the whole run within 60 s on the 2-core machine. Every analysis in nr_run.analysis.registry runs, so
analyses added later are measured too.

    .venv/bin/python benchmarks/bench_analyze.py [--sites dc1,gen1024] [--failures 1] [--pattern alltoall]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nr_run.analysis.options import AnalysisOptions  # noqa: E402
from nr_run.analysis.registry import ANALYSES  # noqa: E402
from nr_run.analysis.report import to_html  # noqa: E402
from nr_run.cli.analyze import run_analyses  # noqa: E402
from nr_run.platforms.site import load_site  # noqa: E402
from tests.conftest import DC1  # noqa: E402
from tests.sitegen import generate_site  # noqa: E402

TARGET_S = 60.0


def measure(name: str, directory: Path, options: AnalysisOptions) -> dict[str, object]:
    start = time.perf_counter()
    fabric, findings = load_site(directory)
    load_s = time.perf_counter() - start
    assert fabric is not None and not [f for f in findings if f.severity == "error"], findings[:3]
    results = run_analyses(fabric, list(ANALYSES), options)
    start = time.perf_counter()
    page = to_html(name, results, options.model_dump(), "benchmark")
    html_s = time.perf_counter() - start
    total = load_s + sum(r.seconds for r in results) + html_s
    return {"site": name, "switches": len(fabric.switches()), "devices": len(fabric.devices),
            "load_s": round(load_s, 2), "analyses_s": {r.name: round(r.seconds, 2) for r in results},
            "html_s": round(html_s, 2), "html_kb": len(page) // 1024, "total_s": round(total, 2),
            "ok": all(r.ok for r in results), "within_target": total <= TARGET_S}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sites", default="dc1,gen1024")
    parser.add_argument("--failures", type=int, default=1)
    parser.add_argument("--pattern", default="alltoall")
    args = parser.parse_args()
    options = AnalysisOptions(failures=args.failures, pattern=args.pattern)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for site in args.sites.split(","):
            if site == "dc1":
                rows.append(measure("dc1", DC1, options))
            else:
                directory = generate_site(Path(tmp), rtsw=1008, ctsw=16, site="gen1024")
                rows.append(measure(site, directory, options))
            print(json.dumps(rows[-1]), flush=True)
    return 0 if all(r["within_target"] and r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
