"""Soak the generated-site property: many hypothesis-drawn sites, each refused by preflight (exit 3 naming the
field) or rendered, deployed to its own twin (exit 0) and checked (exit 0). Prints outcomes and timings.

    .venv/bin/python benchmarks/soak_generated_sites.py [SITES] [MAX_UNITS] [SEED]   (default 200 3 random)
"""

from __future__ import annotations

import collections
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

from tests.generated_property import check_generated_site, small_sites  # noqa: E402
from tests.sitegen import SmallSite  # noqa: E402


def main() -> None:
    sites = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    max_units = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    chosen_seed = int(sys.argv[3]) if len(sys.argv) > 3 else int(time.time())
    outcomes: collections.Counter[str] = collections.Counter()
    timings: list[float] = []

    @seed(chosen_seed)
    @settings(max_examples=sites, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(small_sites(max_units=max_units))
    def run(spec: SmallSite) -> None:
        scratch = Path(tempfile.mkdtemp(prefix="soak-"))
        started = time.perf_counter()
        try:
            outcomes[check_generated_site(spec, scratch)] += 1
        finally:
            timings.append(time.perf_counter() - started)
            shutil.rmtree(scratch, ignore_errors=True)

    started = time.perf_counter()
    try:
        run()
    finally:
        total = time.perf_counter() - started
        print(f"seed {chosen_seed}: {sum(outcomes.values())} sites in {total:.1f} s "
              f"(max {max(timings, default=0):.1f} s per site)")
        for outcome, count in outcomes.most_common():
            print(f"  {count:5d}  {outcome}")


if __name__ == "__main__":
    main()
