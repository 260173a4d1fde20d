"""`analyze` on dc1 and on a generated 1,024-switch site (16 CTSWs, 1,008 RTSWs, 2,016 servers of 8 NICs):
wall time of every registered analysis with K failures, and the total. Target: total <= 60 s at K=1 on the
2-core machine. The compile (load_site) is timed apart: `analyze` shares it with every other command.

Usage: .venv/bin/python benchmarks/bench_analyze.py [--sites dc1,gen1024] [--failures 1] [--pattern alltoall]
       [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nr_run.analysis import registry  # noqa: E402
from nr_run.analysis.options import AnalysisOptions  # noqa: E402
from nr_run.intent import compile_site  # noqa: E402
from tests.conftest import DC1  # noqa: E402
from tests.sitegen import generate_site  # noqa: E402

CTSW = 16


def run(name: str, site: Path, options: AnalysisOptions) -> dict:
    t0 = time.perf_counter()
    fabric = compile_site(site)
    compile_s = time.perf_counter() - t0
    split: dict[str, float] = {}
    verdict: dict[str, bool] = {}
    for analysis in registry.ANALYSES:
        t = time.perf_counter()
        result = registry.load(analysis)(fabric, options)
        split[analysis] = round(time.perf_counter() - t, 3)
        verdict[analysis] = result.ok
    return {"site": name, "switches": len(fabric.switches()), "servers": len(fabric.servers()),
            "failures": options.failures, "pattern": options.pattern, "compile_s": round(compile_s, 3),
            "analyses_s": split, "ok": verdict, "total_s": round(sum(split.values()), 3)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sites", default="dc1,gen1024")
    ap.add_argument("--failures", type=int, default=1)
    ap.add_argument("--pattern", default="alltoall")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    options = AnalysisOptions(failures=args.failures, pattern=args.pattern)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sites.split(","):
            if name.startswith("gen"):
                switches = int(name[3:])
                site = generate_site(Path(tmp), rtsw=switches - CTSW, ctsw=CTSW, site=name)
            else:
                site = DC1.parent / name
            rows.append(run(name, site, options))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        split = ", ".join(f"{k} {v:.2f} s" for k, v in r["analyses_s"].items())
        print(f"{r['site']}: {r['switches']} switches, {r['servers']} servers, K={r['failures']}, "
              f"{r['pattern']}: analyses {r['total_s']:.2f} s ({split}); compile {r['compile_s']:.2f} s; "
              f"ok {r['ok']}")
    return 0 if all(r["total_s"] <= 60 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
