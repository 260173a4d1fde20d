"""Compile and render a generated site; prints seconds per phase and peak RSS.

    .venv/bin/python benchmarks/bench_compile_render.py [RTSW] [CTSW]     (default 512 16)
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nr_run.intent import compile_site  # noqa: E402
from nr_run.runbooks.render import render_site  # noqa: E402
from tests.sitegen import generate_site  # noqa: E402


def main() -> None:
    rtsw = int(sys.argv[1]) if len(sys.argv) > 1 else 512
    ctsw = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    with tempfile.TemporaryDirectory() as tmp:
        site = generate_site(Path(tmp), rtsw=rtsw, ctsw=ctsw)
        t0 = time.perf_counter()
        intent = compile_site(site)
        t1 = time.perf_counter()
        configs = render_site(intent)
        t2 = time.perf_counter()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size_mb = sum(len(c) for c in configs.values()) / 1e6
    print(f"site: {rtsw} RTSW + {ctsw} CTSW + {len(intent.servers())} servers, {len(intent.links)} links")
    print(f"compile: {t1 - t0:.2f} s   render: {t2 - t1:.2f} s ({len(configs)} configs, {size_mb:.1f} MB)   "
          f"peak RSS: {rss_mb:.0f} MB")


if __name__ == "__main__":
    main()
