"""One twin process serves a 1,024-switch EOS site; every switch answers `show version` over eAPI."""

from __future__ import annotations

import concurrent.futures

import pyeapi
import pytest

from nr_run.lab.twin.lab import Lab
from nr_run.lab.twin.synth import leaf_spine


def _version(addr: dict) -> str:
    conn = pyeapi.client.connect(transport="https", host=addr["host"], port=addr["port"],
                                 username="admin", password="admin", timeout=30)
    return pyeapi.client.Node(conn).enable(["show version"])[0]["result"]["version"]


@pytest.mark.long
def test_1024_switches_start_and_answer(tmp_path):
    # How fast they start is benchmarks/bench_twin_startup.py's figure, not a test's.
    lab = Lab(leaf_spine(tmp_path / "synth.clab.yml", 1024), tmp_path, base_port=0)
    addrs = lab.start()
    try:
        assert len(addrs) == 1024 and len({a["port"] for a in addrs.values()}) == 1024
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            versions = list(pool.map(_version, addrs.values()))
        assert versions == ["4.32.0F"] * 1024      # the release its containerlab image tag names
    finally:
        lab.stop()
