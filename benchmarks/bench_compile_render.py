"""`nr-run render` in-process on generated mixed EOS/SONiC two-tier sites (16 CTSWs, 1:1 servers of 8 NICs):
CPU per switch and its flatness from 64 to 4,096 switches; each size in a fresh process.

Measured as a user waits for it, without the interpreter's start: from the first nr-run import to the configs
written (compile, platform preflight, the safety proofs, render of every switch and every GPU server's NIC
script, files). "Per switch" divides by the switches only; the NIC scripts (two servers per switch at this
shape) are part of the cost. Beside it: compile + render alone (no safety proofs, nothing written), the
library calls a script would make, run after the command in the same process (imports and templates loaded).

Targets: render <= 4 ms CPU per switch at 1,024 switches and within 20 % from 1,024 to 4,096.

    .venv/bin/python benchmarks/bench_compile_render.py [--sizes 64,256,1024,4096]
    .venv/bin/python benchmarks/bench_compile_render.py --one 1024      (one size, one line of JSON)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.render_timing import cpu_s, render_in_process  # noqa: E402

CTSW = 16
TARGET_MS = 4.0




def one(switches: int) -> dict[str, Any]:
    from tests.sitegen import generate_site

    with tempfile.TemporaryDirectory() as tmp:
        site = generate_site(Path(tmp), rtsw=switches - CTSW, ctsw=CTSW)
        cpu, wall = render_in_process(site, Path(tmp) / "out")
        configs = len(list((Path(tmp) / "out").iterdir()))
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

        from nr_run.cli.common import gc_paused
        from nr_run.intent import compile_site
        from nr_run.runbooks.render import render_site

        c2 = cpu_s()
        with gc_paused():
            intent = compile_site(site)
        c3 = cpu_s()
        with gc_paused():
            render_site(intent)
        c4 = cpu_s()
    return {"switches": switches, "configs": configs, "render_cpu_s": cpu, "render_wall_s": wall,
            "cpu_ms_per_switch": cpu * 1000 / switches, "cpu_ms_per_config": cpu * 1000 / configs,
            "peak_rss_mb": rss, "compile_cpu_s": c3 - c2, "library_render_cpu_s": c4 - c3,
            "library_ms_per_switch": (c4 - c2) * 1000 / switches}


ENV: dict[str, str] = {}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="64,256,1024,4096")
    ap.add_argument("--one", type=int)
    args = ap.parse_args()
    if not args.one:
        from benchmarks.installed import installed_env

        ENV.update(installed_env())
    if args.one:
        print(json.dumps(one(args.one)))
        return 0
    from nr_run.intent.schema import MAX_PORTS

    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    per: dict[int, float] = {}
    for n in (int(x) for x in args.sizes.split(",")):
        if n - CTSW > MAX_PORTS:     # every RTSW has an uplink to every CTSW
            print(f"{n:5d} switches: not a valid site: each of the {CTSW} CTSWs would need {n - CTSW} ports "
                  f"(hardware ports <= {MAX_PORTS})", flush=True)
            continue
        out = subprocess.run([sys.executable, __file__, "--one", str(n)], capture_output=True, text=True, check=True, env=ENV)
        r = json.loads(out.stdout)
        per[n] = r["cpu_ms_per_switch"]
        print(f"{n:5d} switches (+{r['configs'] - n} NIC scripts): render {r['render_cpu_s']:.2f} s CPU "
              f"({r['render_wall_s']:.2f} s wall) = {r['cpu_ms_per_switch']:.2f} ms/switch "
              f"({r['cpu_ms_per_config']:.2f} ms/config), peak RSS {r['peak_rss_mb']:.0f} MB; "
              f"compile+render alone {r['library_ms_per_switch']:.2f} ms/switch", flush=True)
    if 1024 in per:
        print(f"1024: {per[1024]:.2f} ms/switch / {TARGET_MS} bound = {per[1024] / TARGET_MS:.2f}")
    big = {n: v for n, v in per.items() if n >= 1024}
    if len(big) > 1:
        print(f"flatness {min(big)}..{max(big)} switches: max/min = {max(big.values()) / min(big.values()):.2f} "
              "(target <= 1.20)")
    if len(per) > len(big) and len(per) > 1:
        print(f"flatness {min(per)}..{max(per)} switches: max/min = {max(per.values()) / min(per.values()):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
