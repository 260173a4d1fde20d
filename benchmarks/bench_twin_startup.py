"""Start a 1,024-switch EOS twin in one process; print startup seconds, RSS and a show-version sweep.

Usage: .venv/bin/python benchmarks/bench_twin_startup.py [--switches 1024]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyeapi  # noqa: E402

from nr_run.lab.twin.lab import Lab  # noqa: E402
from nr_run.lab.twin.synth import leaf_spine  # noqa: E402


def _version(addr: dict) -> str:
    conn = pyeapi.client.connect(transport="https", host=addr["host"], port=addr["port"],
                                 username="admin", password="admin", timeout=30)
    return pyeapi.client.Node(conn).enable(["show version"])[0]["result"]["version"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--switches", type=int, default=1024)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as sd:
        t0 = time.perf_counter()
        lab = Lab(leaf_spine(Path(sd) / "synth.clab.yml", args.switches), sd, base_port=0)
        addrs = lab.start()
        startup = time.perf_counter() - t0
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t1 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            versions = list(pool.map(_version, addrs.values()))
        sweep = time.perf_counter() - t1
        lab.stop()
    print(f"switches={len(addrs)} startup_s={startup:.2f} rss_mb={rss_mb:.0f} "
          f"show_version_sweep_s={sweep:.2f} all_answered={versions.count('4.32.1F') == len(addrs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
