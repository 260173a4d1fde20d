"""Dry-run `nr-run deploy --lab` against a running twin with added device latency: measured / latency bound.

The latency bound is what the device calls cost at best: max(calls x latency / workers, the busiest device's
calls x latency), each device's calls being sequential (calls: benchmarks/twin_calls.py, eAPI requests and SSH
commands, both of which the twin delays). Measured is the wall time of the CLI process (start, imports,
compile, render, diffs, output) and, separately, of Deployment.dry_run in-process; the SONiC switches' calls
are printed apart (a dry run reads their running config once).
Target: CLI <= 1.5x the bound at 50 ms.

Usage: .venv/bin/python benchmarks/bench_deploy.py [--latency-ms 50] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.twin_calls import EAPI_FORMATS, SSH_FORMATS, latency_calls  # noqa: E402
from nr_run.lab.twin.lab import lab_down, lab_fault, lab_status, lab_up  # noqa: E402
from nr_run.platforms.site import load_site  # noqa: E402
from nr_run.runbooks.clab import write_topology  # noqa: E402

DC1 = REPO / "inventory" / "dc1"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency-ms", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as sd:
        state = Path(sd) / "lab"
        intent, _ = load_site(DC1)
        assert intent is not None
        lab_up(write_topology(intent, Path(sd) / "clab"), state, base_port=0)
        try:
            lab_fault(state, "latency", ms=args.latency_ms)
            env = {**os.environ, "NR_RUN_LAB_STATE_DIR": str(state), "NR_RUN_LOCK_DIR": str(Path(sd) / "locks")}
            cmd = [sys.executable, "-m", "nr_run.cli.main", "deploy", "--site", "dc1", "--lab", "--json",
                   "--workers", str(args.workers), "--artifacts", str(Path(sd) / "art")]
            walls, per_device = [], Counter()
            for _ in range(args.runs):
                since = time.time()
                t0 = time.perf_counter()
                proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
                walls.append(time.perf_counter() - t0)
                assert proc.returncode == 2, proc.stderr[-2000:]
                assert json.loads(proc.stdout)["exit_code"] == 2
                per_device = latency_calls(state, since, EAPI_FORMATS | SSH_FORMATS)
            imports = subprocess.run([sys.executable, "-X", "importtime", "-c",
                                      "import nr_run.cli.main, nr_run.cli.deploy"], cwd=REPO, capture_output=True,
                                     text=True).stderr.splitlines()
            import_s = sum(int(ln.split("|")[0].split(":")[1]) for ln in imports if ln.startswith("import time:")
                           and ln.split("|")[0].split(":")[1].strip().isdigit()) / 1e6
            addresses = lab_status(state)["addresses"]
            inproc = _in_process(addresses, args.workers)
        finally:
            lab_down(state)
    calls = sum(per_device.values())
    busiest = max(per_device.values())
    lat = args.latency_ms / 1000
    bound = max(calls * lat / args.workers, busiest * lat)
    wall = statistics.median(walls)
    sonic = {d: n for d, n in per_device.items() if d in ("rtsw3", "rtsw4")}
    print(f"deploy --lab dry run dc1: {calls} device calls at {args.latency_ms} ms (busiest device {busiest}; "
          f"SONiC {', '.join(f'{d} {n}' for d, n in sorted(sonic.items()))}), "
          f"latency bound {bound:.2f} s; CLI wall {wall:.2f} s (median of {args.runs}) -> ratio {wall / bound:.2f} "
          f"(target <= 1.5); in-process Deployment.dry_run {inproc:.2f} s -> ratio {inproc / bound:.2f}; "
          f"CLI module imports {import_s:.2f} s")
    return 0


def _in_process(addresses: dict, workers: int) -> float:
    from nr_run.intent import compile_site
    from nr_run.runbooks.deploy import Deployment
    from nr_run.runbooks.inventory import init_nornir
    from nr_run.runbooks.progress import DeviceProgress
    from nr_run.runbooks.records import RunRecords
    from nr_run.runbooks.render import render_device, select_switches

    intent = compile_site(DC1)
    names = [d.name for d in select_switches(intent)]
    configs = {n: render_device(intent.devices[n], intent) for n in names}
    with tempfile.TemporaryDirectory() as art:
        nr = init_nornir("dc1", DC1.parent, workers=workers, lab=True, address_map=addresses)
        run = Deployment(nr, intent, configs, RunRecords(art, "dc1", "bench"), DeviceProgress(None, names))
        t0 = time.perf_counter()
        run.dry_run()
        elapsed = time.perf_counter() - t0
        nr.close_connections()
    return elapsed


if __name__ == "__main__":
    sys.exit(main())
