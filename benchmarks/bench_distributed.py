"""`check` of a generated site in one process and in shards on an embedded Dask LocalCluster, side by side.

A background twin serves the site (every switch on its rendered config); the same checks (all but RDMA) run
through run_checks in this process, then through runbooks.distributed on a LocalCluster of one single-threaded
worker process per core. Printed: wall time of each, the CPU this process spent (the coordinator: with shards it
only merges findings), and whether both found the same findings.

Usage: .venv/bin/python benchmarks/bench_distributed.py [--rtsw 64] [--latency-ms 0] [--shard-size 40]
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_collect_bytes import deploy_all, patient  # noqa: E402
from nr_run.lab.twin.lab import lab_down, lab_fault, lab_status, lab_up  # noqa: E402
from nr_run.platforms.site import load_site  # noqa: E402
from nr_run.runbooks.check import run_checks  # noqa: E402
from nr_run.runbooks.clab import write_topology  # noqa: E402
from nr_run.runbooks.distributed import ShardJob, open_client, run_checks_distributed  # noqa: E402
from nr_run.runbooks.inventory import init_nornir  # noqa: E402
from nr_run.validators.base import all_checks  # noqa: E402
from tests.sitegen import generate_site  # noqa: E402

OPTIONS = {"counters": {"interval_s": 0.5}}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rtsw", type=int, default=64)
    ap.add_argument("--latency-ms", type=int, default=0)
    ap.add_argument("--shard-size", type=int, default=40)
    args = ap.parse_args()
    logging.getLogger().addHandler(logging.NullHandler())
    checks = [c for c in all_checks() if c != "rdma"]
    with tempfile.TemporaryDirectory() as tmp:
        site = generate_site(Path(tmp), rtsw=args.rtsw, ctsw=8, nics=8, site=f"gen{args.rtsw}")
        intent, _ = load_site(site)
        assert intent is not None
        state = Path(tmp) / "lab"
        lab_up(write_topology(intent, state / "clab"), state, base_port=0)
        try:
            addresses = lab_status(state)["addresses"]
            nr = patient(init_nornir(intent.site, site.parent, workers=8, lab=True, address_map=addresses))
            deploy_all(nr, intent)
            if args.latency_ms:
                lab_fault(state, "latency", ms=args.latency_ms)
            nr = patient(init_nornir(intent.site, site.parent, workers=20, lab=True, address_map=addresses))
            w0, c0 = time.perf_counter(), time.process_time()
            local = run_checks(nr, intent, checks, OPTIONS)
            local_wall, local_cpu = time.perf_counter() - w0, time.process_time() - c0
            nr.close_connections()
            job = ShardJob(site=intent.site, inventory_dir=str(site.parent), checks=tuple(checks), options=OPTIONS,
                           lab=True, address_map=addresses, workers=20)
            with open_client("local") as client:
                w0, c0 = time.perf_counter(), time.process_time()
                shards, results = run_checks_distributed(client, job, intent, per_shard=args.shard_size)
                dist_wall, dist_cpu = time.perf_counter() - w0, time.process_time() - c0
                workers = len({r.worker for r in results})
        finally:
            lab_down(state)
    same = sorted(f.id for f in local.findings) == sorted(f.id for f in shards.findings)
    print(f"check {intent.site} ({len(intent.devices)} devices, latency {args.latency_ms} ms): one process "
          f"{local_wall:.1f} s wall, {local_cpu:.1f} s CPU; {len(results)} shards on {workers} LocalCluster workers "
          f"{dist_wall:.1f} s wall, coordinator {dist_cpu:.1f} s CPU; same findings: {same}; "
          f"failed {shards.summary()['failed']} / {local.summary()['failed']}")
    failed = sorted({(f.check, f.expected, f.observed) for f in local.findings if not f.passed})[:5]
    for check, expected, observed in failed:
        print(f"  failed: {check}: expected {expected}, observed {observed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
