"""Compile + render of generated mixed EOS/SONiC sites, as `nr-run render` does it (cyclic GC paused, libyaml):
CPU ms per switch, its flatness from 64 to 4,096 switches, and peak RSS at 1,024; each size in a fresh process.

Targets: <= 2.5 ms CPU per switch at 1,024; per-switch cost within 20 % from 64 to 4,096; <= 300 MB at 1,024.
A two-tier site ends at 16 + 1,024 switches (a CTSW has at most 1,024 ports, one per RTSW): larger sizes are
reported as not valid, and flatness is taken over the sizes that ran.

    .venv/bin/python benchmarks/bench_compile_render.py [--sizes 64,256,1024,4096]
    .venv/bin/python benchmarks/bench_compile_render.py --one 1024      (one size, one line of JSON)
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

CTSW = 16


def one(switches: int) -> dict:
    from nr_run.cli.common import gc_paused
    from nr_run.intent import compile_site
    from nr_run.runbooks.render import render_site
    from tests.sitegen import generate_site

    rtsw = switches - CTSW
    with tempfile.TemporaryDirectory() as tmp:
        site = generate_site(Path(tmp), rtsw=rtsw, ctsw=CTSW)
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        c0, w0 = time.process_time(), time.perf_counter()
        with gc_paused():
            intent = compile_site(site)
        c1 = time.process_time()
        with gc_paused():
            configs = render_site(intent)
        c2, w2 = time.process_time(), time.perf_counter()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"switches": len(configs), "servers": len(intent.servers()), "compile_cpu_s": c1 - c0,
            "render_cpu_s": c2 - c1, "cpu_ms_per_switch": (c2 - c0) * 1000 / len(configs), "wall_s": w2 - w0,
            "peak_rss_mb": rss, "rss_before_mb": rss_before, "config_mb": sum(len(c) for c in configs.values()) / 1e6}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="64,256,1024,1040,4096")
    ap.add_argument("--one", type=int)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one)))
        return 0
    from nr_run.intent.schema import MAX_PORTS

    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        if n - CTSW > MAX_PORTS:     # every RTSW has an uplink to every CTSW
            print(f"{n:5d} switches: not a valid site: each of the {CTSW} CTSWs would need {n - CTSW} ports "
                  f"(hardware ports <= {MAX_PORTS}); the largest is {MAX_PORTS + CTSW}", flush=True)
            continue
        out = subprocess.run([sys.executable, __file__, "--one", str(n)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout)
        rows.append(r)
        print(f"{r['switches']:5d} switches (+{r['servers']} servers): compile {r['compile_cpu_s']:.2f} s + render "
              f"{r['render_cpu_s']:.2f} s CPU = {r['cpu_ms_per_switch']:.2f} ms/switch, peak RSS {r['peak_rss_mb']:.0f} MB",
              flush=True)
    per = {r["switches"]: r["cpu_ms_per_switch"] for r in rows}
    if 1024 in per:
        r1024 = next(r for r in rows if r["switches"] == 1024)
        print(f"1024: {per[1024]:.2f} ms/switch / 2.5 bound = {per[1024] / 2.5:.2f}; "
              f"peak RSS {r1024['peak_rss_mb']:.0f} MB / 300 MB = {r1024['peak_rss_mb'] / 300:.2f}")
    if len(per) > 1:
        lo, hi = min(per.values()), max(per.values())
        print(f"flatness {min(per)}..{max(per)} switches: max/min per-switch cost = {hi / lo:.2f} (target <= 1.20)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
