"""Compile + render of generated multi-zone sites (8-rail units of 16 servers, 16 CTSWs per zone, mixed EOS/SONiC
RTSWs), as `nr-run render` does it: CPU ms per switch from 64 switches to a ~100,000-GPU site, peak RSS; each size
in a fresh process. Optionally `analyze --failures 1` on one size. Per switch divides by the switches only: every
GPU server's NIC script is rendered too and its cost is part of the figure.

Targets: per-switch CPU within 20 % from the smallest to the largest size and at most 2.5 ms; peak RSS at most
4 GB at ~100,000 GPUs; analyze --failures 1 on the 32,768-GPU site at most 120 s.

    .venv/bin/python benchmarks/bench_shapes_scale.py [--sizes small,zones4,gpus32k,gpus98k] [--analyze gpus32k]
    .venv/bin/python benchmarks/bench_shapes_scale.py --one gpus32k      (one size, one line of JSON)
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# name -> (zones, units per zone, ATSWs)
SIZES = {"small": (2, 1, 16), "zones4": (4, 8, 32), "gpus32k": (4, 64, 128), "gpus98k": (12, 64, 128)}
WARM_MAX = 2500         # sizes up to this many switches are also measured a second time in the same process


def one(size: str, analyze: bool = False) -> dict:
    from nr_run.cli.common import gc_paused
    from nr_run.intent import compile_site
    from nr_run.runbooks.render import render_site
    from tests.sitegen import generate_zoned_site

    zones, units, atsw = SIZES[size]
    with tempfile.TemporaryDirectory() as tmp:
        site = generate_zoned_site(Path(tmp), zones=zones, units=units, atsw=atsw)
        c0, w0 = time.process_time(), time.perf_counter()
        with gc_paused():
            intent = compile_site(site)
        c1 = time.process_time()
        with gc_paused():
            configs = render_site(intent)
        c2, w2 = time.process_time(), time.perf_counter()
        switches = len(intent.devices) - len(intent.servers())
        out = {"size": size, "switches": switches, "configs": len(configs), "servers": len(intent.servers()),
               "gpus": sum(len(d.nics) for d in intent.servers()), "links": len(intent.links),
               "compile_cpu_s": c1 - c0, "render_cpu_s": c2 - c1,
               "cpu_ms_per_switch": (c2 - c0) * 1000 / switches, "cpu_ms_per_config": (c2 - c0) * 1000 / len(configs),
               "wall_s": w2 - w0,
               "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
        if switches <= WARM_MAX:
            # the same again in this process: what each switch costs once plug-ins are imported and templates
            # compiled (the first run's excess over it is the per-run fixed cost)
            del configs, intent
            w0 = time.process_time()
            with gc_paused():
                intent = compile_site(site)
                configs = render_site(intent)
            out["warm_ms_per_switch"] = (time.process_time() - w0) * 1000 / switches
        if analyze:
            del configs
            from nr_run.analysis.options import AnalysisOptions
            from nr_run.analysis.registry import ANALYSES, load

            timing = {}
            a0 = time.perf_counter()
            for name in ANALYSES:
                t = time.perf_counter()
                load(name)(intent, AnalysisOptions(failures=1))
                timing[name] = round(time.perf_counter() - t, 2)
            out.update(analyze_s=time.perf_counter() - a0, analyze_timing=timing,
                       peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


ENV: dict[str, str] = {}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--analyze", default="", help="also run analyze --failures 1 on this size")
    ap.add_argument("--one")
    args = ap.parse_args()
    if not args.one:
        from benchmarks.installed import installed_env

        ENV.update(installed_env())
    if args.one:
        print(json.dumps(one(args.one, args.one == args.analyze)))
        return 0
    import os

    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    rows = []
    for size in args.sizes.split(","):
        cmd = [sys.executable, __file__, "--one", size] + (["--analyze", size] if size == args.analyze else [])
        r = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True, env=ENV).stdout)
        rows.append(r)
        line = (f"{size:8s} {r['switches']:5d} switches, {r['gpus']:6d} GPUs, {r['links']:6d} links: compile "
                f"{r['compile_cpu_s']:.1f} s + render {r['render_cpu_s']:.1f} s CPU = {r['cpu_ms_per_switch']:.2f} "
                f"ms/switch ({r['cpu_ms_per_config']:.2f} ms per rendered config, {r['configs'] - r['switches']} of "
                f"them NIC scripts), {r['wall_s']:.1f} s wall, peak RSS {r['peak_rss_mb']:.0f} MB")
        if "warm_ms_per_switch" in r:
            line += f"; again in the same process {r['warm_ms_per_switch']:.2f} ms/switch"
        if "analyze_s" in r:
            line += f"; analyze --failures 1 {r['analyze_s']:.1f} s {r['analyze_timing']}"
        print(line, flush=True)
    per = [r["cpu_ms_per_switch"] for r in rows]
    if len(per) > 1:
        print(f"per-switch CPU {min(per):.2f}-{max(per):.2f} ms: spread {100 * (max(per) / min(per) - 1):.0f} % "
              f"(target <= 20 %), worst {max(per):.2f} / 2.5 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
