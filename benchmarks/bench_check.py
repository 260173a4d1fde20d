"""`check` against the twin with added device latency: measured wall time / its bound.

bound = device calls x latency / workers + the measurement windows the run waits for. Calls: the eAPI requests
and SSH commands the twin delays (benchmarks/twin_calls.py; a device's commands within a latency of a call's first
command are that call: its sequential calls are at least a latency apart). Windows:
the counter interval; the RDMA bandwidth seconds are not in it, because the twin's perftest answers at once (on
real hosts add `seconds` per round of pairs that can run together). The bound of earlier versions (eAPI requests
only, and the RDMA seconds that the twin never spends) is printed too, to compare with their figures.
Target: ratio <= 3 at 50 ms on a 136-device and a 1,032-device generated site (--rtsw 512).

Also printed: the CPU the check cost in this process and in the twin, and this process' peak RSS. The site is
configured (deployed through NAPALM, or with --boot written into the twin's topology as startup configs) by a
child process, so the peak is the check's own: this process holds only the compiled site before the check.
--tracemalloc N prints the N lines of code holding the most memory once every device is collected (the run's
peak of held state), and --keep-states measures the whole-state path (every state kept, judged at the end, every
connection left open) to compare with.

Usage: .venv/bin/python benchmarks/bench_check.py [--site dc1|gen136] [--rtsw 64] [--latency-ms 50] [--workers 20]
                                                  [--boot] [--shards N] [--keep-states] [--tracemalloc N]
"""

from __future__ import annotations

import argparse
import contextlib
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
from nr_run.runbooks.history import record_report  # noqa: E402
from nr_run.runbooks.inventory import init_nornir  # noqa: E402
from nr_run.runbooks.records import RunRecords  # noqa: E402
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


def _topology(site_dir: str, out: str, boot: bool) -> None:
    """(child process) The site's containerlab file; with `boot`, every node boots its rendered config."""
    intent, _ = load_site(Path(site_dir))
    assert intent is not None
    path = write_topology(intent, Path(out))
    if not boot:
        return
    from benchmarks.bench_twin_shards import boot_rendered

    boot_rendered(intent, path, Path(out) / "configs")


def _deploy(site_dir: str, workers: int, addresses: dict) -> None:
    """(child process) Every device deployed from its rendered config."""
    intent, _ = load_site(Path(site_dir))
    assert intent is not None
    nr = init_nornir(intent.site, Path(site_dir).parent, workers=workers, lab=True, address_map=addresses)
    try:
        _deploy_all(nr, intent)
    finally:
        nr.close_connections()


def _child(target, *args) -> None:
    import multiprocessing

    proc = multiprocessing.get_context("spawn").Process(target=target, args=args)
    proc.start()
    proc.join()
    if proc.exitcode:
        raise SystemExit(f"{target.__name__} failed (exit {proc.exitcode})")


class _Peak:
    """tracemalloc's top lines once every device is collected (when the judging of the whole run starts)."""

    def __init__(self, top: int) -> None:
        self.top, self.lines, self.traced = top, [], 0

    def __enter__(self) -> _Peak:
        import tracemalloc

        import nr_run.runbooks.check as check
        import nr_run.runbooks.stream as stream

        def snap() -> None:
            snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
            self.traced = tracemalloc.get_traced_memory()[0]
            self.lines = snapshot.statistics("lineno")[: self.top]

        def wrap(fn):
            def wrapped(*a, **kw):
                snap()
                return fn(*a, **kw)
            return wrapped

        self._saved = (check.evaluate_all, stream.StreamJudge.judge)
        check.evaluate_all = wrap(check.evaluate_all)
        stream.StreamJudge.judge = wrap(stream.StreamJudge.judge)
        tracemalloc.start(1)
        return self

    def __exit__(self, *exc) -> None:
        import tracemalloc

        import nr_run.runbooks.check as check
        import nr_run.runbooks.stream as stream

        tracemalloc.stop()
        check.evaluate_all, stream.StreamJudge.judge = self._saved


def bench(site_dir: Path, latency_ms: int, workers: int, deadline_s: float = 0.0, boot: bool = False,
          shards: int | None = None, keep_states: bool = False, top: int = 0) -> dict:
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as sd:
        state = Path(sd)
        _child(_topology, str(site_dir), str(state / "clab"), boot)
        topo = next((state / "clab").glob("*.clab.yml"))
        lab_up(topo, state, base_port=0, timeout=3600, shards=shards)
        try:
            addresses = lab_status(state)["addresses"]
            if not boot:
                _child(_deploy, str(site_dir), workers, addresses)
            intent, _ = load_site(site_dir)
            assert intent is not None
            inv = site_dir.parent
            if latency_ms:
                lab_fault(state, "latency", ms=latency_ms)
            nr = init_nornir(intent.site, inv, workers=workers, lab=True, address_map=addresses)
            if deadline_s:
                nr = patient(nr, deadline_s)
            since = time.time()
            rss0 = psutil.Process().memory_info().rss
            peak = _Peak(top) if top else contextlib.nullcontext()
            twin0, cpu0 = twin_cpu(state), time.process_time()
            t0 = time.perf_counter()
            with peak:
                report = run_checks(nr, intent, keep_states=keep_states, keep_connections=keep_states)
            t_checks = time.perf_counter() - t0
            nr.close_connections()
            elapsed = time.perf_counter() - t0
            # what `nr-run check` writes after the run: results.json and the history's run (in the peak)
            t1 = time.perf_counter()
            RunRecords(state / "artifacts", intent.site, "check").write("results.json", report.json_chunks())
            _, history_error = record_report(state / "artifacts", report, "check")
            assert not history_error, history_error
            t_outputs = time.perf_counter() - t1
            client_cpu, twin = time.process_time() - cpu0, twin_cpu(state) - twin0
            eapi = sum(latency_calls(state, since).values())
            # a device's sequential calls are a latency apart: commands within a latency of a call's first are in it
            calls = sum(latency_calls(state, since, EAPI_FORMATS | SSH_FORMATS, latency_ms / 1000, True).values())
        finally:
            lab_down(state)
    bound = calls * latency_ms / 1000 / workers + COUNTER_S
    old_bound = eapi * latency_ms / 1000 / workers + declared_windows(intent)
    return {"site": intent.site, "devices": len(intent.devices), "calls": calls, "windows_s": COUNTER_S,
            "checks_s": t_checks, "measured_s": elapsed, "outputs_s": t_outputs, "bound_s": bound, "ratio": elapsed / bound,
            "eapi_calls": eapi, "old_bound_s": old_bound, "old_ratio": elapsed / old_bound,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "rss_before_mib": rss0 / 2**20,
            "passed": report.passed, "failed": report.summary()["failed"],
            "client_cpu_s": client_cpu, "twin_cpu_s": twin,
            "failed_by_check": dict(Counter(f.check for f in report.findings if not f.passed)),
            "findings": len(report.findings), "top": getattr(peak, "lines", []), "traced": getattr(peak, "traced", 0),
            "errors": {h: e for h, e in sorted(report.collection_errors.items())}}


def _short(path: str) -> str:
    """A source file's path from the repository (the product's) or from site-packages (a library's)."""
    root = str(Path(__file__).resolve().parents[1]) + "/"
    return path.split("site-packages/")[-1] if "site-packages/" in path else path.replace(root, "")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--site", default="dc1", choices=["dc1", "gen136", "gen"], help="gen: --rtsw RTSWs")
    ap.add_argument("--latency-ms", type=int, default=50)
    ap.add_argument("--workers", type=int, default=20)
    ap.add_argument("--rtsw", type=int, default=64, help="RTSWs of the generated site (8 CTSWs, 1:1 servers)")
    ap.add_argument("--deadline-s", type=float, default=0.0, help="device deadlines (0: the product's own)")
    ap.add_argument("--boot", action="store_true", help="devices boot their rendered configs (no NAPALM deploy)")
    ap.add_argument("--shards", type=int, default=None, help="twin shards (default: the twin's own choice)")
    ap.add_argument("--keep-states", action="store_true", help="the whole-state path, to compare with")
    ap.add_argument("--tracemalloc", type=int, default=0, metavar="N", help="top N lines of held memory at the peak")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        site = DC1 if args.site == "dc1" else generate_site(Path(tmp), rtsw=args.rtsw, ctsw=8, nics=8,
                                                            site=f"gen{2 * args.rtsw + 8}")
        r = bench(site, args.latency_ms, args.workers, args.deadline_s, args.boot, args.shards, args.keep_states,
                  args.tracemalloc)
    print(f"check {r['site']}: {r['devices']} devices, {r['calls']} device calls at {args.latency_ms} ms, "
          f"{args.workers} workers, windows {r['windows_s']:.1f} s -> measured {r['measured_s']:.2f} s "
          f"(checks {r['checks_s']:.2f} s, close {r['measured_s'] - r['checks_s']:.2f} s), bound {r['bound_s']:.2f} s, "
          f"ratio {r['ratio']:.2f} (target <= 3.0); results.json and history written in {r['outputs_s']:.1f} s; checks passed={r['passed']} failed={r['failed']}; "
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
    if r["top"]:
        print(f"  held at the peak (tracemalloc, {r['traced'] / 2**20:.0f} MiB traced; {r['findings']} findings), "
              f"top {len(r['top'])} lines:")
        for st in r["top"]:
            frame = st.traceback[0]
            print(f"    {st.size / 2**20:8.1f} MiB {st.count:9d} blocks  {_short(frame.filename)}:{frame.lineno}")
    print(f"  earlier bound (eAPI requests only: {r['eapi_calls']}, RDMA seconds the twin does not spend): "
          f"{r['old_bound_s']:.2f} s, ratio {r['old_ratio']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
