"""`check` against the twin with added device latency: measured wall time / its bound.

bound = device calls x latency / workers + the measurement windows the run waits for. Calls: the eAPI requests
and SSH commands the twin delays (benchmarks/twin_calls.py; a device's commands within a latency of a call's first
command are that call: its sequential calls are at least a latency apart). Windows:
the counter interval; the RDMA bandwidth seconds are not in it, because the twin's perftest answers at once (on
real hosts add `seconds` per round of pairs that can run together). The bound of earlier versions (eAPI requests
only, and the RDMA seconds that the twin never spends) is printed too, to compare with their figures.
Target: ratio <= 3 at 50 ms on a 136-device and a 1,032-device generated site (--rtsw 512).

Also printed: the CPU the check cost in this process and in the twin, and this process' peak RSS.

Usage: .venv/bin/python benchmarks/bench_check.py [--site dc1|gen136] [--rtsw 64] [--latency-ms 50] [--workers 20]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.twin_calls import EAPI_FORMATS, SSH_FORMATS, latency_calls  # noqa: E402
from nr_run.lab.twin.lab import lab_down, lab_fault, lab_status, lab_up  # noqa: E402
from nr_run.platforms.site import load_site  # noqa: E402
from nr_run.runbooks.check import run_checks  # noqa: E402
from nr_run.runbooks.clab import write_topology  # noqa: E402
from nr_run.runbooks.inventory import init_nornir  # noqa: E402
from nr_run.runbooks.render import render_device  # noqa: E402
from nr_run.validators.probes import CounterResample, RdmaPairs, bandwidth_rounds  # noqa: E402
from nr_run.validators.rdma import plan_pairs  # noqa: E402
from tests.conftest import DC1  # noqa: E402
from tests.sitegen import generate_site  # noqa: E402


def _deploy_all(nr, intent) -> None:
    """Every device on its rendered config (NAPALM replace through the product's own connections; servers
    run their NIC scripts), as a deploy leaves the site."""
    from nornir.core.task import Result, Task

    def push(task: Task) -> Result:
        from nr_run.platforms import registry

        conn = registry.get(task.host.platform or "").transport.deploy_connection
        device = task.host.get_connection(conn, task.nornir.config)
        device.load_replace_candidate(config=render_device(intent.devices[task.host.name], intent))
        device.commit_config()
        return Result(host=task.host)

    res = nr.filter(filter_func=lambda h: h.name in intent.devices).run(task=push)
    failed = [h for h, r in res.items() if r.failed]
    if failed:
        raise SystemExit(f"deploy failed on {failed}: {res[failed[0]][0].exception}")


def declared_windows(intent) -> float:
    """The counter interval plus the RDMA bandwidth seconds per round (what real hosts would spend)."""
    rdma = RdmaPairs()
    pairs = plan_pairs(intent, rdma.pattern, rdma.max_pairs)
    rounds = len(bandwidth_rounds(pairs))
    return COUNTER_S + rdma.seconds * rounds


COUNTER_S = CounterResample(2.0).interval_s     # the counters check's default interval


def twin_cpu(state: Path) -> float:
    """CPU seconds the twin has used so far: its process and every process it started (its shards)."""
    pid = lab_status(state)["pid"]
    if not pid:
        return 0.0
    total = 0.0
    proc = psutil.Process(pid)
    for p in [proc, *proc.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def patient(nr, seconds: float):
    """Longer device deadlines (eAPI reads, SSH handshakes and commands): a twin of a large site on a loaded
    machine answers a big switch's batch slowly; this tells a check that fails from the twin's capacity from
    one that fails from what it reads."""
    from nr_run.platforms.transport import SSH_EXEC, set_options

    for host in nr.inventory.hosts.values():
        if host.platform == "eos":
            set_options(host, "napalm", extras={"timeout": int(seconds)})
        elif host.platform == "sonic":
            set_options(host, "napalm", extras={"timeout": int(seconds), "optional_args": {
                "banner_timeout": seconds, "conn_timeout": seconds, "auth_timeout": seconds}})
        else:
            set_options(host, SSH_EXEC, extras={"timeout": seconds})
    return nr


def bench(site_dir: Path, latency_ms: int, workers: int, deadline_s: float = 0.0) -> dict:
    intent, _ = load_site(site_dir)
    assert intent is not None
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as sd:
        state = Path(sd)
        lab_up(write_topology(intent, state / "clab"), state, base_port=0, timeout=900)
        try:
            addresses = lab_status(state)["addresses"]
            inv = site_dir.parent
            nr = init_nornir(intent.site, inv, workers=workers, lab=True, address_map=addresses)
            _deploy_all(nr, intent)
            nr.close_connections()
            lab_fault(state, "latency", ms=latency_ms)
            nr = init_nornir(intent.site, inv, workers=workers, lab=True, address_map=addresses)
            if deadline_s:
                nr = patient(nr, deadline_s)
            since = time.time()
            rss0 = psutil.Process().memory_info().rss
            twin0, cpu0 = twin_cpu(state), time.process_time()
            t0 = time.perf_counter()
            report = run_checks(nr, intent)
            t_checks = time.perf_counter() - t0
            nr.close_connections()
            elapsed = time.perf_counter() - t0
            client_cpu, twin = time.process_time() - cpu0, twin_cpu(state) - twin0
            eapi = sum(latency_calls(state, since).values())
            # a device's sequential calls are a latency apart: commands within a latency of a call's first are in it
            calls = sum(latency_calls(state, since, EAPI_FORMATS | SSH_FORMATS, latency_ms / 1000, True).values())
        finally:
            lab_down(state)
    bound = calls * latency_ms / 1000 / workers + COUNTER_S
    old_bound = eapi * latency_ms / 1000 / workers + declared_windows(intent)
    return {"site": intent.site, "devices": len(intent.devices), "calls": calls, "windows_s": COUNTER_S,
            "checks_s": t_checks, "measured_s": elapsed, "bound_s": bound, "ratio": elapsed / bound,
            "eapi_calls": eapi, "old_bound_s": old_bound, "old_ratio": elapsed / old_bound,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "rss_before_mib": rss0 / 2**20,
            "passed": report.passed, "failed": report.summary()["failed"],
            "client_cpu_s": client_cpu, "twin_cpu_s": twin,
            "failed_by_check": dict(Counter(f.check for f in report.findings if not f.passed)),
            "errors": {h: e for h, e in sorted(report.collection_errors.items())}}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--site", default="dc1", choices=["dc1", "gen136", "gen"], help="gen: --rtsw RTSWs")
    ap.add_argument("--latency-ms", type=int, default=50)
    ap.add_argument("--workers", type=int, default=20)
    ap.add_argument("--rtsw", type=int, default=64, help="RTSWs of the generated site (8 CTSWs, 1:1 servers)")
    ap.add_argument("--deadline-s", type=float, default=0.0, help="device deadlines (0: the product's own)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        site = DC1 if args.site == "dc1" else generate_site(Path(tmp), rtsw=args.rtsw, ctsw=8, nics=8,
                                                            site=f"gen{2 * args.rtsw + 8}")
        r = bench(site, args.latency_ms, args.workers, args.deadline_s)
    print(f"check {r['site']}: {r['devices']} devices, {r['calls']} device calls at {args.latency_ms} ms, "
          f"{args.workers} workers, windows {r['windows_s']:.1f} s -> measured {r['measured_s']:.2f} s "
          f"(checks {r['checks_s']:.2f} s, close {r['measured_s'] - r['checks_s']:.2f} s), bound {r['bound_s']:.2f} s, "
          f"ratio {r['ratio']:.2f} (target <= 3.0); checks passed={r['passed']} failed={r['failed']}; "
          f"CPU client {r['client_cpu_s']:.1f} s, twin {r['twin_cpu_s']:.1f} s; peak RSS {r['peak_rss_mib']:.0f} MiB "
          f"({r['rss_before_mib']:.0f} MiB before the check); "
          f"load {os.getloadavg()[0]:.1f}")
    if r["failed"]:
        print(f"  failed findings by check: {r['failed_by_check']}; collection errors on {len(r['errors'])} "
              f"device(s): {dict(list(r['errors'].items())[:3])}")
    per = (r["peak_rss_mib"] - r["rss_before_mib"]) / r["devices"]
    print(f"  memory: the check added {per * 1024:.0f} KiB per device to this process' peak; at that rate a "
          f"4,096-switch site with 4,096 servers adds {per * 8192 / 1024:.2f} GiB (target: peak <= 2 GB; compare "
          f"the peaks of two sizes for the slope)")
    print(f"  earlier bound (eAPI requests only: {r['eapi_calls']}, RDMA seconds the twin does not spend): "
          f"{r['old_bound_s']:.2f} s, ratio {r['old_ratio']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
