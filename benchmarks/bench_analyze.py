"""`nr-run analyze` with K failures on dc1, a generated 1,024-switch two-tier site (1,008 RTSWs, 16 CTSWs,
16,128 NICs) and the multi-zone sites of bench_shapes_scale.py (zones4: 352 switches, 4,096 GPUs; gpus32k: 2,240
switches, 32,768 GPUs): per analysis CPU seconds (process time: what counts on a loaded machine) and wall seconds,
the peak RSS after it, the load (compile + preflight) and the HTML report. Each site runs in a fresh process.

Targets: dc1/gen1024 the whole run within 60 s; gpus32k `analyze --failures 1` within 120 s CPU and a peak RSS
under 4 GB. Every analysis in nr_run.analysis.registry runs, so analyses added later are measured too.

    .venv/bin/python benchmarks/bench_analyze.py [--sites dc1,gen1024,zones4,gpus32k] [--failures 1]
        [--pattern alltoall]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TARGET_S = {"dc1": 60.0, "gen1024": 60.0, "zones4": 120.0, "gpus32k": 120.0}
RSS_LIMIT_MB = 4096


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _load(name: str, tmp: Path) -> tuple[object, float, float]:
    """The site's intent and its load CPU and wall seconds (multi-zone sites: compile as render does)."""
    from nr_run.platforms.site import load_site
    from tests.conftest import DC1
    from tests.sitegen import generate_site, generate_zoned_site

    c0, w0 = time.process_time(), time.perf_counter()
    if name in ("zones4", "gpus32k"):
        from benchmarks.bench_shapes_scale import SIZES
        from nr_run.intent import compile_site

        zones, units, atsw = SIZES[name]
        site = generate_zoned_site(tmp, zones=zones, units=units, atsw=atsw)
        c0, w0 = time.process_time(), time.perf_counter()
        fabric = compile_site(site)
    else:
        directory = DC1 if name == "dc1" else generate_site(tmp, rtsw=1008, ctsw=16, site="gen1024")
        c0, w0 = time.process_time(), time.perf_counter()
        fabric, findings = load_site(directory)
        assert fabric is not None and not [f for f in findings if f.severity == "error"], findings[:3]
    return fabric, time.process_time() - c0, time.perf_counter() - w0


def one(name: str, failures: int, pattern: str) -> dict[str, object]:
    from nr_run.analysis.options import AnalysisOptions
    from nr_run.analysis.registry import ANALYSES, load
    from nr_run.analysis.report import to_html

    options = AnalysisOptions(failures=failures, pattern=pattern)
    with tempfile.TemporaryDirectory() as tmp:
        fabric, load_cpu, load_wall = _load(name, Path(tmp))
        rss_loaded = _rss_mb()
        per: dict[str, dict[str, float]] = {}
        results = []
        for analysis in ANALYSES:
            c0, w0 = time.process_time(), time.perf_counter()
            results.append(load(analysis)(fabric, options))     # type: ignore[arg-type]
            per[analysis] = {"cpu_s": round(time.process_time() - c0, 2), "wall_s": round(time.perf_counter() - w0, 2),
                             "peak_rss_mb": round(_rss_mb())}
        c0 = time.process_time()
        page = to_html(name, results, options.model_dump(), "benchmark")
        html_cpu = time.process_time() - c0
    analyses_cpu = sum(v["cpu_s"] for v in per.values())
    return {"site": name, "switches": len(fabric.switches()), "devices": len(fabric.devices),  # type: ignore[attr-defined]
            "failures": failures, "load_cpu_s": round(load_cpu, 2), "load_wall_s": round(load_wall, 2),
            "rss_after_load_mb": round(rss_loaded), "analyses": per, "analyses_cpu_s": round(analyses_cpu, 2),
            "html_cpu_s": round(html_cpu, 2), "html_kb": len(page) // 1024, "peak_rss_mb": round(_rss_mb()),
            "load_average": os.getloadavg()[0], "ok": all(r.ok for r in results),
            "within_target": analyses_cpu <= TARGET_S.get(name, 120.0) and _rss_mb() < RSS_LIMIT_MB}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sites", default="dc1,gen1024,zones4,gpus32k")
    parser.add_argument("--failures", type=int, default=1)
    parser.add_argument("--pattern", default="alltoall")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.failures, args.pattern)))
        return 0
    rows = []
    for site in args.sites.split(","):
        cmd = [sys.executable, __file__, "--one", site, "--failures", str(args.failures), "--pattern", args.pattern]
        w0 = time.perf_counter()
        r = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
        rows.append(r)
        print(json.dumps(r), flush=True)
        parts = ", ".join(f"{k} {v['cpu_s']:.1f} s" for k, v in r["analyses"].items())
        print(f"{site}: {r['switches']} switches, analyze --failures {args.failures}: {r['analyses_cpu_s']:.1f} s CPU "
              f"({parts}); load {r['load_cpu_s']:.1f} s; peak RSS {r['peak_rss_mb']} MB; process wall "
              f"{time.perf_counter() - w0:.0f} s at load average {r['load_average']:.1f}", flush=True)
    return 0 if all(r["within_target"] and r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
