"""`watch` on a generated 136-device site against the twin: does a collection fit in the interval, and how fast
does the history database grow?

A twin serves the generated site (64 RTSWs, 8 CTSWs, 64 servers), every switch on its rendered config, with
added device latency (default 50 ms) and a few faults so counters move (PFC storms and congestion on
`--faults` ports: their pause, drop and ECN counters change every collection, as busy ports do). Then the watch
runbook (PollSource + HistoryRecorder, what `nr-run watch` runs) collects `--count` times at `--every`.

Reported: each collection's time against the interval; database bytes per collection (the first stores every
series once; later ones only what changed) and so per day at that interval; and the worst case, every counter
of every port changing in every collection (synthetic collections recorded on a copy of the database).

Usage: .venv/bin/python benchmarks/bench_watch.py [--every 30] [--count 4] [--latency-ms 50] [--faults 8] [--rtsw 64]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_check import _deploy_all, patient, twin_cpu  # noqa: E402
from nr_run.history.model import Collection  # noqa: E402
from nr_run.history.store import HistoryStore  # noqa: E402
from nr_run.lab.twin.lab import lab_down, lab_fault, lab_status, lab_up  # noqa: E402
from nr_run.platforms.site import load_site  # noqa: E402
from nr_run.platforms.state import CounterSample, PortCounters  # noqa: E402
from nr_run.runbooks.clab import write_topology  # noqa: E402
from nr_run.runbooks.history import HistoryRecorder, history_path  # noqa: E402
from nr_run.runbooks.interrupt import Stop  # noqa: E402
from nr_run.runbooks.inventory import init_nornir  # noqa: E402
from nr_run.runbooks.watch import PollSource, Tick, watch  # noqa: E402
from tests.sitegen import generate_site  # noqa: E402


def logical_bytes(path: Path) -> int:
    """The database's size in use (pages minus free pages), its write-ahead log included."""
    db = sqlite3.connect(path)
    try:
        page = db.execute("PRAGMA page_size").fetchone()[0]
        return (db.execute("PRAGMA page_count").fetchone()[0] - db.execute("PRAGMA freelist_count").fetchone()[0]) * page
    finally:
        db.close()


def bumped(c: Collection, step: int) -> Collection:
    """The collection with every counter of every port `step` higher (the worst case: all of them changed)."""
    def bump(pc: PortCounters) -> PortCounters:
        return replace(pc, pfc_rx={k: v + step for k, v in pc.pfc_rx.items()},
                       pfc_tx={k: v + step for k, v in pc.pfc_tx.items()},
                       pfc_rx_total=pc.pfc_rx_total + step, pfc_tx_total=pc.pfc_tx_total + step,
                       queue_drops={k: v + step for k, v in pc.queue_drops.items()},
                       ecn_marks={k: v + step for k, v in pc.ecn_marks.items()})
    samples = {d: CounterSample(s.taken_at, {p: bump(pc) for p, pc in s.ports.items()}, s.unreadable)
               for d, s in c.samples.items()}
    shift = 30.0 * step
    return replace(c, samples=samples, started=c.started + shift, finished=c.finished + shift,
                   sample_times={d: t + shift for d, t in c.sample_times.items()})


def bench(every: float, count: int, latency_ms: int, faults: int, workers: int, rtsw: int = 64,
          deadline_s: float = 0.0) -> dict:
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        site_dir = generate_site(root, rtsw=rtsw, ctsw=8, nics=8, site=f"gen{2 * rtsw + 8}")
        intent, _ = load_site(site_dir)
        assert intent is not None
        state = root / "lab"
        lab_up(write_topology(intent, state / "clab"), state, base_port=0, timeout=900)
        try:
            addresses = lab_status(state)["addresses"]
            nr = init_nornir(intent.site, site_dir.parent, workers=workers, lab=True, address_map=addresses)
            _deploy_all(patient(nr, deadline_s) if deadline_s else nr, intent)
            nr.close_connections()
            hosts = [(i.name, p.name) for i in intent.switches() if i.role == "rtsw" for p in i.interfaces
                     if p.role == "host"][:faults]
            for n, (dev, port) in enumerate(hosts):
                q = intent.devices[dev].roce.lossless_priorities[0]
                if n % 2:
                    lab_fault(state, "congestion", device=dev, port=port, queue=q)
                else:
                    lab_fault(state, "pfc_storm", device=dev, port=port, priority=q)
            lab_fault(state, "latency", ms=latency_ms)
            nr = init_nornir(intent.site, site_dir.parent, workers=workers, lab=True, address_map=addresses)
            if deadline_s:
                nr = patient(nr, deadline_s)
            art = root / "art"
            recorder = HistoryRecorder(art, intent.site)
            path = history_path(art, intent.site)
            ticks: list[tuple[Tick, int]] = []

            cpu = [time.process_time(), twin_cpu(state)]

            def on_tick(t: Tick) -> None:
                ticks.append((t, logical_bytes(path)))
                # CPU since the previous tick: the collection, its recording and the (idle) wait before it
                here, twin = time.process_time() - cpu[0], twin_cpu(state) - cpu[1]
                cpu[:] = [time.process_time(), twin_cpu(state)]
                n = len(intent.devices)
                print(f"  collection {t.index}: {t.duration_s:.2f} s (interval {every:g} s), CPU client "
                      f"{here:.1f} s ({here / n * 1000:.1f} ms/device), twin {twin:.1f} s ({twin / n * 1000:.1f} ms/device), "
                      f"{len(t.collection.devices) if t.collection else 0} devices, "
                      f"errors {sorted(t.collection.errors) if t.collection else t.error}, "
                      f"db {ticks[-1][1]:,} bytes", flush=True)

            source = PollSource(nr, intent)
            watch(source, every, count, Stop(), on_tick, recorder)
            recorder.close()
            nr.close_connections()
            last = ticks[-1][0].collection
            assert last is not None
            copy = root / "worst.sqlite"
            shutil.copy(path, copy)
            worst = HistoryStore(copy, intent.site)
            before = logical_bytes(copy)
            for step in range(1, 4):
                worst.record(bumped(last, step))
            worst.close()
            worst_per = (logical_bytes(copy) - before) / 3
            ports = sum(len(s.ports) for s in last.samples.values())
        finally:
            lab_down(state)
    durations = [t.duration_s for t, _ in ticks]
    sizes = [b for _, b in ticks]
    steady = (sizes[-1] - sizes[0]) / (len(sizes) - 1) if len(sizes) > 1 else float("nan")
    per_day = 86400 / every
    return {"devices": len(intent.devices), "ports": ports, "durations": durations, "first_bytes": sizes[0],
            "steady_bytes": steady, "worst_bytes": worst_per, "per_day": per_day,
            "faults": len(hosts), "every": every}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--every", type=float, default=30.0)
    ap.add_argument("--count", type=int, default=4)
    ap.add_argument("--latency-ms", type=int, default=50)
    ap.add_argument("--faults", type=int, default=8)
    ap.add_argument("--workers", type=int, default=20)
    ap.add_argument("--rtsw", type=int, default=64, help="RTSWs of the generated site (64: 136 devices, 512: 1,032)")
    ap.add_argument("--deadline-s", type=float, default=0.0,
                    help="device deadlines of the deploy and the watch (0: the product's own; see bench_check)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    r = bench(args.every, args.count, args.latency_ms, args.faults, args.workers, args.rtsw, args.deadline_s)
    d = r["durations"]
    mib = 1024 * 1024
    print(f"watch gen{2 * args.rtsw + 8}: {r['devices']} devices, {r['ports']} switch ports, {args.latency_ms} ms latency, "
          f"{args.workers} workers, every {args.every:g} s: collection min {min(d):.2f} / median "
          f"{statistics.median(d):.2f} / max {max(d):.2f} s -> {'keeps up' if max(d) < args.every else 'OVERRUNS'}; CPU here {time.process_time() - cpu0:.1f} s "
          f"(site, deploy and watch); load {os.getloadavg()[0]:.1f}")
    print(f"history: first collection {r['first_bytes']:,} bytes (every series once); then "
          f"{r['steady_bytes']:,.0f} bytes/collection with {r['faults']} busy ports = "
          f"{r['steady_bytes'] * r['per_day'] / mib:,.1f} MiB/day at {r['per_day']:.0f} collections/day; worst case "
          f"(every counter changes every time) {r['worst_bytes']:,.0f} bytes/collection = "
          f"{r['worst_bytes'] * r['per_day'] / mib:,.1f} MiB/day, {r['worst_bytes'] * r['per_day'] * 14 / mib / 1024:,.1f} "
          f"GiB at 14 days' retention  [{time.perf_counter() - t0:.0f} s]")
    return 0 if max(d) < args.every else 1


if __name__ == "__main__":
    sys.exit(main())
