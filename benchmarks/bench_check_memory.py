"""The memory a check's judging holds, at sizes the twin cannot serve on this machine: healthy states built from
the intent (tests/validators/healthy.py) stand in for what each device's collection returns.

Each device's state is made, handed to the run as a collection hands it (runbooks.stream: judged, reduced), and
kept as the run keeps it; RDMA probes are added to the servers, the late checks judge, and results.json and the
history's run are written as `nr-run check` writes them. With --keep-states every state is kept whole and judged
at the end (the whole-state path). What it leaves out: connections (the twin-backed bench_check.py counts them),
the collected text while it is parsed, and the probes' own work.

Printed: this process' peak RSS before and after (ru_maxrss), tracemalloc's figure at the end of the collection
(--tracemalloc N: and its top N lines), findings, CPU.

Usage: .venv/bin/python benchmarks/bench_check_memory.py --rtsw 4088 [--keep-states] [--tracemalloc N]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nr_run.intent import compile_site  # noqa: E402
from nr_run.runbooks.check import CheckReport, port_counters  # noqa: E402
from nr_run.runbooks.history import record_report  # noqa: E402
from nr_run.runbooks.records import RunRecords  # noqa: E402
from nr_run.runbooks.stream import StreamJudge  # noqa: E402
from nr_run.validators.base import evaluate_all, required_prefixes, select  # noqa: E402
from nr_run.validators.rdma import plan_pairs  # noqa: E402
from tests.sitegen import generate_site  # noqa: E402
from tests.validators.healthy import healthy_probe, healthy_state  # noqa: E402


def _mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rtsw", type=int, default=512, help="RTSWs of the generated site (8 CTSWs, 1:1 servers)")
    ap.add_argument("--keep-states", action="store_true", help="the whole-state path, to compare with")
    ap.add_argument("--tracemalloc", type=int, default=0, metavar="N")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # written by a child process: the YAML of a large site would set this process' peak before the run
        import multiprocessing

        site = Path(tmp) / "inv" / f"gen{2 * args.rtsw + 8}"
        child = multiprocessing.get_context("spawn").Process(target=generate_site, args=(site.parent,),
                                                             kwargs={"rtsw": args.rtsw, "ctsw": 8, "nics": 8,
                                                                     "site": site.name})
        child.start()
        child.join()
        assert child.exitcode == 0 and site.is_dir(), (child.exitcode, site)
        fabric = compile_site(site)
        checks = select(None)
        before = _mib()
        if args.tracemalloc:
            tracemalloc.start(1)
        cpu0, started = time.process_time(), time.time()
        judge = None if args.keep_states else StreamJudge(checks, fabric)
        states = {}
        for name in sorted(fabric.devices):
            d = fabric.devices[name]
            prefixes = required_prefixes(checks, d, fabric) if d.role == "rtsw" else None
            state = healthy_state(d, fabric, prefixes)
            states[name] = judge.collected(name, state) if judge is not None else state
        for pair in plan_pairs(fabric, "auto", 64):
            states[pair.src_device].rdma.append(healthy_probe(pair))
        traced = tracemalloc.get_traced_memory()[0] if args.tracemalloc else 0
        top = (tracemalloc.take_snapshot().statistics("lineno")[: args.tracemalloc] if args.tracemalloc else [])
        findings = evaluate_all(checks, fabric, states) if judge is None else judge.judge(states)
        samples = {n: s.counters_second for n, s in states.items() if s.counters_second is not None}
        report = CheckReport(fabric.site, [c.name for c in checks], findings, devices=len(states), samples=samples,
                             port_counters={h: port_counters(s) for h, s in states.items()
                                            if s.counters_second or s.counters_first},
                             hosts=sorted(states), started=started, finished=time.time(), fabric=fabric)
        del states, findings
        out = Path(tmp) / "artifacts"
        RunRecords(out, fabric.site, "check").write("results.json", report.json_chunks())
        _, error = record_report(out, report, "check")
        assert not error, error
        cpu = time.process_time() - cpu0
        size = next(out.glob("runs/*/*/results.json")).stat().st_size
    mode = "whole-state" if args.keep_states else "streamed"
    print(f"{mode} gen{2 * args.rtsw + 8}: {len(fabric.devices)} devices, {len(report.findings)} findings "
          f"(results.json {size / 2**20:.0f} MiB, failed {report.summary()['failed']}); peak RSS {_mib():.0f} MiB, "
          f"{before:.0f} MiB with the compiled site before the run; CPU {cpu:.1f} s"
          + (f"; tracemalloc at the end of the collection {traced / 2**20:.0f} MiB (its own overhead inflates the "
             f"peak)" if args.tracemalloc else ""))
    for st in top:
        frame = st.traceback[0]
        print(f"    {st.size / 2**20:8.1f} MiB {st.count:9d} blocks  {frame.filename.split('site-packages/')[-1]}:"
              f"{frame.lineno}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
