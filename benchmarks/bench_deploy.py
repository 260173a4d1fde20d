"""Dry-run `nr-run deploy --lab` against a running twin with added device latency: measured / latency bound.

The latency bound is what the device calls cost at best: max(calls x latency / workers, the busiest device's
calls x latency), each device's calls being sequential (calls: benchmarks/twin_calls.py, eAPI requests and SSH
commands, both of which the twin delays). Measured is the wall time of the CLI process (start, imports,
compile, render, diffs, output) and, separately, of Deployment.dry_run in-process; the SONiC switches' calls
are printed apart (a dry run reads their running config once).
Target: CLI <= 1.5x the bound at 50 ms.

With --commit: a whole `deploy --commit` from day 0 (in-process, as the CLI composes it: baseline check, staged
commits with post-checks, the final whole-site check) against its bound (commit_bound), on dc1 or on a generated site (--site gen136: 64 RTSWs,
8 CTSWs, 64 servers; --site gen --rtsw N: N RTSWs, 8 CTSWs, N servers, e.g. 512 for 1,032 devices). Per stage post-check it prints the devices read, the findings judged, the device
calls (eAPI requests and SSH commands, benchmarks/twin_calls.py), the commands and the wall time; then the totals
next to the baseline and the final check; the rollout's device steps (dry run, claim, backup, commit, confirm,
release) with their calls and wall time; the CPU seconds of this process and of the twin (its shards included).

Usage: .venv/bin/python benchmarks/bench_deploy.py [--latency-ms 50] [--runs 3]
       .venv/bin/python benchmarks/bench_deploy.py --commit [--site dc1|gen136|gen] [--rtsw 512] [--latency-ms 50]
"""

from __future__ import annotations

import argparse
import gc
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

from benchmarks.bench_check import twin_cpu  # noqa: E402
from benchmarks.twin_calls import EAPI_FORMATS, GAP_S, SSH_FORMATS, latency_calls  # noqa: E402
from nr_run.lab.twin.lab import lab_down, lab_fault, lab_status, lab_up  # noqa: E402
from nr_run.platforms.site import load_site  # noqa: E402
from nr_run.runbooks.clab import write_topology  # noqa: E402

DC1 = REPO / "inventory" / "dc1"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency-ms", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=20)
    ap.add_argument("--commit", action="store_true", help="measure the post-checks of a deploy --commit")
    ap.add_argument("--site", default="dc1", choices=["dc1", "gen136", "gen"], help="gen: --rtsw RTSWs")
    ap.add_argument("--rtsw", type=int, default=64, help="RTSWs of --site gen (8 CTSWs, 1:1 servers)")
    args = ap.parse_args()
    if args.commit:
        return bench_commit(args.site, args.latency_ms, args.workers, 64 if args.site == "gen136" else args.rtsw)
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


# ---------------------------------------------------------------- deploy --commit: the stage post-checks

def _log_entries(state: Path) -> list[tuple[float, str, str, str]]:
    """Every command the twin received: (epoch, device, log format, command), in time order."""
    out = []
    for path in sorted((state / "logs").glob("*.log")):
        for line in path.read_text().splitlines():
            stamp, fmt, cmd = line.split("\t", 2)
            out.append((float(stamp), path.stem, fmt, json.loads(cmd)))
    return sorted(out)


def _window(entries: list[tuple[float, str, str, str]], since: float, until: float) -> tuple[int, int]:
    """(device calls, commands) logged in [since, until]; calls counted as benchmarks/twin_calls.py does."""
    calls, commands, last = 0, 0, {}
    for t, device, fmt, _ in entries:
        if fmt not in EAPI_FORMATS | SSH_FORMATS or not since <= t <= until:
            continue
        commands += 1
        if device not in last or t - last[device] > GAP_S:
            calls += 1
        last[device] = t
    return calls, commands


def bench_commit(site_name: str, latency_ms: int, workers: int, rtsw: int = 64) -> int:
    """A deploy --commit from day 0 with every check (production windows), the post-checks measured per stage;
    a generated site has `rtsw` RTSWs, 8 CTSWs and 1:1 servers."""
    import nr_run.runbooks.check as check_mod
    from nr_run.cli.common import gc_for_runs, gc_paused
    from nr_run.runbooks.deploy import Deployment
    from nr_run.runbooks.deploy_checks import StageGate
    from nr_run.runbooks.inventory import init_nornir
    from nr_run.runbooks.progress import DeviceProgress
    from nr_run.runbooks.records import RunRecords
    from nr_run.runbooks.render import render_device, select_switches
    from tests.sitegen import generate_site

    gc_for_runs()                    # as the CLI runs every command
    gc_clock = GcClock()
    phases: list[dict] = []          # one per run_checks: what, start, end, devices read, findings judged, failed
    plain_run_checks = check_mod.run_checks

    def recorded(*args, **kwargs):
        t0 = time.time()
        report = plain_run_checks(*args, **kwargs)
        # a check keeps no states (it judges each device as it arrives), so the devices read are its count
        phases.append({"what": phase[0], "start": t0, "end": time.time(), "devices": report.devices,
                       "findings": len(report.findings), "failed": report.summary()["failed"]})
        return report

    phase = ["baseline"]

    class TimedGate(StageGate):
        def stage(self, nr, stage, at_intent):
            phase[0] = f"stage {', '.join(stage)}"
            return super().stage(nr, stage, at_intent)

    steps: list[tuple[str, float, float]] = []       # each device step of the rollout: (task, start, end)
    plain_run = Deployment._run

    def timed_run(self, names, task, **kwargs):
        t0 = time.time()
        try:
            return plain_run(self, names, task, **kwargs)
        finally:
            steps.append((task.__name__, t0, time.time()))

    Deployment._run = timed_run  # type: ignore[method-assign]
    check_mod.run_checks = recorded
    with tempfile.TemporaryDirectory() as tmp:
        site_dir = DC1 if site_name == "dc1" else generate_site(Path(tmp), rtsw=rtsw, ctsw=8, nics=8,
                                                                site=f"gen{2 * rtsw + 8}")
        intent, _ = load_site(site_dir)
        assert intent is not None
        state = Path(tmp) / "lab"
        lab_up(write_topology(intent, Path(tmp) / "clab"), state, base_port=0, timeout=3600)
        try:
            lab_fault(state, "latency", ms=latency_ms)
            names = [d.name for d in select_switches(intent)]
            with gc_paused():           # as the CLI renders: the built graph frozen, out of later collections
                configs = {n: render_device(intent.devices[n], intent) for n in names}
            nr = init_nornir(intent.site, site_dir.parent, workers=workers, lab=True,
                             address_map=lab_status(state)["addresses"])
            gate = TimedGate(intent)
            run = Deployment(nr, intent, configs, RunRecords(Path(tmp) / "art", intent.site, "deploy"),
                             DeviceProgress(None, names), gate=gate, revert_in=600)
            twin0 = twin_cpu(state)
            gc.callbacks.append(gc_clock)
            t0, cpu0, started = time.perf_counter(), time.process_time(), time.time()
            run.dry_run()
            run.commit(1, "25%")
            phase[0] = "final"
            check_mod.run_checks(nr, intent, None, gate.options)
            total = time.perf_counter() - t0
            client_cpu, twin_used = time.process_time() - cpu0, twin_cpu(state) - twin0
            gc.callbacks.remove(gc_clock)
            nr.close_connections()
            entries = _log_entries(state)
        finally:
            lab_down(state)
            check_mod.run_checks = plain_run_checks
            Deployment._run = plain_run  # type: ignore[method-assign]
    report = run.report
    assert not report.failed and not report.stopped_at, (report.stopped_at, report.message, report.checks[:3],
                                                              {n: (d.state, d.detail) for n, d in report.devices.items()})
    print(f"deploy --commit {intent.site}: {len(names)} devices in {len(report.stages)} stages, "
          f"{latency_ms} ms device latency, {workers} workers; whole run {total:.1f} s")
    stage_rows = [p for p in phases if p["what"].startswith("stage ")]
    for p in phases:
        calls, commands = _window(entries, p["start"], p["end"])
        p.update(calls=calls, commands=commands, seconds=p["end"] - p["start"])
        what = p["what"] if len(p["what"]) <= 40 else p["what"][:37] + "..."
        print(f"  {what:40} {p['devices']:4} devices {p['findings']:6} findings {calls:5} calls "
              f"{commands:5} commands {p['seconds']:6.2f} s  failed findings {p['failed']}")
    print(f"stage post-checks: {len(stage_rows)} stages, {sum(p['devices'] for p in stage_rows)} device reads, "
          f"{sum(p['findings'] for p in stage_rows)} findings, {sum(p['calls'] for p in stage_rows)} calls, "
          f"{sum(p['commands'] for p in stage_rows)} commands, {sum(p['seconds'] for p in stage_rows):.1f} s")
    by_task: dict[str, list[float]] = {}
    for task, a, b in steps:
        calls_in, commands_in = _window(entries, a, b)
        row = by_task.setdefault(task, [0, 0.0, 0, 0])
        row[0] += 1
        row[1] += b - a
        row[2] += calls_in
        row[3] += commands_in
    for task, (runs, seconds, calls_in, commands_in) in sorted(by_task.items(), key=lambda kv: -kv[1][1]):
        print(f"  device step {task:20} {int(runs):3} runs {int(calls_in):5} calls {int(commands_in):5} commands "
              f"{seconds:6.1f} s")
    lat = latency_ms / 1000
    flat, calls, busiest = commit_bound(entries, started, float("inf"), lat, workers, len(phases))
    # the rollout is sequential by design: each stage's backup, commit, post-check and confirm wait for the one
    # before; per period (up to the end of each check run) max(calls x latency / workers, busiest device's)
    edges = [started] + [p["end"] for p in phases]
    staged = sum(commit_bound(entries, a, b, lat, workers, 0)[0] for a, b in zip(edges, edges[1:], strict=False))
    staged += len(phases) * COUNTER_S
    print(f"whole run: {calls} device calls (busiest device {busiest}), {len(phases)} checks with a "
          f"{COUNTER_S:g} s counter window each -> bound {staged:.1f} s summed over the {len(phases)} sequential "
          f"periods (stages, checks); measured {total:.1f} s, ratio {total / staged:.2f} (target <= 3); as if no stage "
          f"waited for another: {flat:.1f} s, ratio {total / flat:.2f}; CPU {client_cpu:.1f} s here, twin "
          f"{twin_used:.1f} s; cyclic GC {gc_clock.seconds:.1f} s in {gc_clock.full} full collections; load "
          f"{os.getloadavg()[0]:.1f}")
    return 0


class GcClock:
    """A gc.callbacks hook adding up the time the cyclic collector runs and its full (generation 2) passes."""

    def __init__(self) -> None:
        self.seconds, self.full, self._t0 = 0.0, 0, 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
            return
        self.seconds += time.perf_counter() - self._t0
        self.full += info["generation"] == 2


COUNTER_S = 2.0       # the counters check's default interval: each check run waits for it once


def commit_bound(entries: list[tuple[float, str, str, str]], since: float, until: float, latency_s: float,
                 workers: int, checks: int) -> tuple[float, int, int]:
    """(bound s, calls, busiest device's calls) of the device calls logged in [since, until]: max(calls x
    latency / workers, the busiest device's calls x latency) + one counter window per check run. Calls: a
    device's commands within a latency of a call's first command are that call (its sequential calls are at
    least a latency apart: benchmarks/twin_calls.py with from_start)."""
    per: Counter = Counter()
    last: dict[str, float] = {}
    for t, device, fmt, _ in entries:
        if fmt not in EAPI_FORMATS | SSH_FORMATS or not since <= t <= until:
            continue
        if device not in last or t - last[device] > latency_s:
            per[device] += 1
            last[device] = t
    calls, busiest = sum(per.values()), max(per.values(), default=0)
    return max(calls * latency_s / workers, busiest * latency_s) + checks * COUNTER_S, calls, busiest


if __name__ == "__main__":
    sys.exit(main())
