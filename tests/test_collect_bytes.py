"""What a check reads per device does not grow with the site: 136 and 1,032 generated devices (the same per-RTSW
shape), each served by a background twin, every device on its rendered config (benchmarks/bench_collect_bytes.py
does the measuring and prints the figures)."""

from __future__ import annotations

import pytest

from benchmarks.bench_collect_bytes import measure
from tests.sitegen import generate_site


@pytest.mark.long
@pytest.mark.scale
def test_bytes_per_device_at_136_and_1032_devices_differ_by_under_20_percent(tmp_path) -> None:
    small = measure(generate_site(tmp_path / "s", rtsw=64, ctsw=8, nics=8, site="gen64"))
    large = measure(generate_site(tmp_path / "l", rtsw=512, ctsw=8, nics=8, site="gen512"))
    assert (small["devices"], large["devices"]) == (136, 1032)
    assert not small["failed"] and not large["failed"] and not small["errors"] and not large["errors"]
    assert 0.8 < large["site_mean"] / small["site_mean"] < 1.2
    for kind in ("rtsw-eos", "rtsw-sonic", "gpu"):          # same ports at both sizes: the same bytes
        assert abs(large["per_kind"][kind] / small["per_kind"][kind] - 1) < 0.05, kind
