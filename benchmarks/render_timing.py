"""`nr-run render` in this process, timed as a user waits for it: from the first nr-run import to the files
written (compile, preflight, safety proofs, every config). Shared by the render benchmarks."""

from __future__ import annotations

import contextlib
import io
import resource
import time
from pathlib import Path


def cpu_s() -> float:
    """CPU seconds of this process and its children (user + system)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def render_in_process(site: Path, out: Path) -> tuple[float, float]:
    """(CPU s, wall s) of `nr-run render --site <site> --out <out>`; SystemExit if it does not exit 0."""
    c0, w0 = cpu_s(), time.perf_counter()
    from nr_run.cli.main import main

    with contextlib.redirect_stdout(io.StringIO()):
        rc = main(["render", "--site", site.name, "--inventory-dir", str(site.parent), "--out", str(out), "-q"])
    c1, w1 = cpu_s(), time.perf_counter()
    if rc != 0:
        raise SystemExit(f"nr-run render exit {rc}")
    return c1 - c0, w1 - w0
