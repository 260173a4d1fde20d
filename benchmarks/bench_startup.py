"""Start-up CPU: `nr-run --help` and `nr-run inventory validate --site dc1` against a bare interpreter.

CPU (user + system) of each child process, the median of N runs, interleaved with the bare runs. Bytecode
caches are allowed (as an installed package has them: PYTHONDONTWRITEBYTECODE is dropped for the children),
and one run per command warms them first; `--no-bytecode` measures with the caller's setting instead.
Target: --help within 1.5x the bare interpreter.

Usage: .venv/bin/python benchmarks/bench_startup.py [--runs 21] [--no-bytecode]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _cpu_ms(cmd: list[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return 1000 * (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--no-bytecode", action="store_true", help="keep PYTHONDONTWRITEBYTECODE as given")
    args = ap.parse_args()
    env = dict(os.environ)
    if not args.no_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    commands = {"bare": [sys.executable, "-c", "pass"],
                "--help": [str(BIN / "nr-run"), "--help"],
                "inventory validate": [str(BIN / "nr-run"), "inventory", "validate", "--site", "dc1"]}
    for cmd in commands.values():
        _cpu_ms(cmd, env)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            times[name].append(_cpu_ms(cmd, env))
    median = {name: statistics.median(t) for name, t in times.items()}
    bare = median["bare"]
    for name in ("--help", "inventory validate"):
        print(f"nr-run {name}: {median[name]:.0f} ms CPU, {median[name] / bare:.2f}x a bare interpreter "
              f"({bare:.0f} ms){'; target <= 1.5x' if name == '--help' else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
