"""What idle SSH sessions cost the threads doing the work: a run keeps one paramiko session per server and SONiC
switch open until its second counter sample, and each session has a reader thread that wakes up every socket
timeout (paramiko's default 0.1 s; the product's transport.IDLE_WAKE_S) and takes the GIL to look for a close.

N idle readers (threads blocked in recv on socket pairs, with the given wake-up interval, as paramiko's reader
loop is) run beside one busy thread; reported: the busy thread's work rate against the same process with one
reader, and the process' system CPU (the GIL hand-offs).

    .venv/bin/python benchmarks/bench_idle_sessions.py [--sessions 5000] [--seconds 8]
"""

from __future__ import annotations

import argparse
import json
import resource
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _reader(sock: socket.socket, wake_s: float) -> None:
    sock.settimeout(wake_s)
    while True:
        try:
            if not sock.recv(1):
                return
        except TimeoutError:
            continue
        except OSError:
            return


def one(sessions: int, wake_s: float, seconds: float) -> dict[str, float]:
    pairs = [socket.socketpair() for _ in range(sessions)]
    for a, _ in pairs:
        threading.Thread(target=_reader, args=(a, wake_s), daemon=True).start()
    time.sleep(min(wake_s, 3.0) + 1.0)          # every reader has waited out its first timeout
    r0, t0, loops = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        sum(range(10_000))
        loops += 1
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return {"loops_per_s": loops / seconds, "sys_s": r1.ru_stime - r0.ru_stime, "user_s": r1.ru_utime - r0.ru_utime}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=5000)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--one", nargs=2, type=float, metavar=("SESSIONS", "WAKE_S"))
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(int(args.one[0]), args.one[1], args.seconds)))
        return 0
    from nr_run.platforms.transport import IDLE_WAKE_S

    def run(sessions: int, wake_s: float) -> dict[str, float]:
        out = subprocess.run([sys.executable, __file__, "--one", str(sessions), str(wake_s), "--seconds",
                              str(args.seconds)], capture_output=True, text=True, check=True).stdout
        return dict(json.loads(out))

    alone = run(1, IDLE_WAKE_S)
    print(f"1 session: busy thread {alone['loops_per_s']:.0f} loops/s")
    # paramiko's own 0.1 s at a tenth of the sessions: at the full count the wake-ups starve every thread (the
    # process spends its time in the kernel handing the GIL around and the busy thread barely runs)
    for sessions, wake in [(args.sessions // 10, 0.1), (args.sessions, 1.0), (args.sessions, IDLE_WAKE_S)]:
        r = run(sessions, wake)
        print(f"{sessions} idle sessions waking every {wake:g} s{' (IDLE_WAKE_S)' if wake == IDLE_WAKE_S else ''}: "
              f"busy thread {r['loops_per_s']:.0f} loops/s ({100 * (1 - r['loops_per_s'] / alone['loops_per_s']):.0f} % "
              f"lost), system CPU {r['sys_s']:.1f} s in {args.seconds:g} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
