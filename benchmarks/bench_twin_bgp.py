"""Routing at scale in the twin: push rendered configs to an all-EOS generated site over eAPI, then time
the first `show ip route` (the fabric computes every RTSW's best paths) and a repeat.

    .venv/bin/python benchmarks/bench_twin_bgp.py [RTSW] [CTSW]      (default 128 8)
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyeapi  # noqa: E402

from nr_run.intent import compile_site  # noqa: E402
from nr_run.lab.twin.lab import Lab  # noqa: E402
from nr_run.runbooks.clab import write_topology  # noqa: E402
from nr_run.runbooks.render import render_device  # noqa: E402
from tests.sitegen import generate_site  # noqa: E402


def node(addresses: dict, host: str) -> pyeapi.client.Node:
    a = addresses[host]
    return pyeapi.client.Node(pyeapi.client.connect(transport="https", host="127.0.0.1", port=a["port"],
                                                    username="admin", password="admin", timeout=600))


def main() -> None:
    rtsw = int(sys.argv[1]) if len(sys.argv) > 1 else 128
    ctsw = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    with tempfile.TemporaryDirectory() as tmp:
        site = generate_site(Path(tmp), rtsw=rtsw, ctsw=ctsw, sonic_every=0)
        intent = compile_site(site)
        switches = [d for d in intent.switches()]
        lab = Lab(write_topology(intent, Path(tmp) / "clab"), Path(tmp) / "state", base_port=0)
        t0 = time.perf_counter()
        addresses = lab.start(timeout=600)
        t1 = time.perf_counter()

        def push(d) -> None:
            lines = [ln for ln in render_device(d).splitlines() if ln.strip() and not ln.startswith("!")]
            node(addresses, d.name).run_commands(["configure", *[ln.strip() for ln in lines[:-1]], "end"])

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(push, switches))
        t2 = time.perf_counter()
        probe = node(addresses, "rtsw1")
        routes = probe.run_commands(["show ip route"])[0]["vrfs"]["default"]["routes"]
        t3 = time.perf_counter()
        probe.run_commands(["show ip route"])
        t4 = time.perf_counter()
        lab.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{len(switches)} EOS switches: start {t1 - t0:.2f} s, configure {t2 - t1:.1f} s, "
          f"first show ip route {t3 - t2:.2f} s ({len(routes)} routes), repeat {t4 - t3:.3f} s, peak RSS {rss:.0f} MB")


if __name__ == "__main__":
    main()
