"""The one way tests outside dc1's shared twin start a twin for a site folder (dc2, generated sites).

Kept in one function so that how the twin is started (a background process serving the site's generated
containerlab topology on ephemeral ports, see tests/twin_site.py) changes in one place.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from nr_run.lab.twin.lab import lab_down
from tests.twin_site import site_lab_up

FAST_OPTIONS = ["--option=counters.interval_s=0.2", "--option=rdma.seconds=1", "--option=rdma.server_wait_s=0.05"]


@contextlib.contextmanager
def site_twin(site_dir: Path, state_dir: Path) -> Iterator[Path]:
    """A running twin of `site_dir` with its state in `state_dir` (point NR_RUN_LAB_STATE_DIR at it)."""
    site_lab_up(site_dir, state_dir)
    try:
        yield state_dir
    finally:
        lab_down(state_dir)
