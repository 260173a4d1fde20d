"""The exporter process serves queue watermarks polled from the twin: a congestion with a standing depth on an
EOS and a SONiC port shows as nr_run_queue_watermark_bytes at that depth (a gauge: it holds after the congestion
ends), idle queues at 0."""

from __future__ import annotations

import time

from tests.history.test_exporter_twin import at, exporter, scrape  # noqa: F401 - the fixture, by name
from tests.twin_site import wait_until

DEPTH = 180_000


def test_exporter_serves_the_polled_watermarks(deployed_twin, exporter) -> None:  # noqa: F811
    url, proc, lines = exporter
    deployed_twin.fault("congestion", device="rtsw1", port="Ethernet2", queue=3, depth=DEPTH, **{"for": "0.5s"})
    deployed_twin.fault("congestion", device="rtsw3", port="Ethernet16", queue=3, depth=DEPTH, **{"for": "0.5s"})
    ended_at = time.time() + 0.5
    eos, sonic = at("rtsw1", "Ethernet2", queue="3"), at("rtsw3", "Ethernet16", queue="3")
    scraped: list[dict] = []

    def collected() -> bool:         # a collection made after both congestions ended
        scraped[:] = [scrape(url)[0]]
        return scraped[0].get(("nr_run_last_collection_timestamp_seconds", (("site", "dc1"),)), 0) > ended_at + 1

    wait_until(collected, timeout=60, step=0.3, what=lambda: f"no collection after the congestion: {lines}")
    samples = scraped[0]
    assert samples[("nr_run_queue_watermark_bytes", eos)] == DEPTH
    assert samples[("nr_run_queue_watermark_bytes", sonic)] == DEPTH
    assert samples[("nr_run_queue_watermark_bytes", at("rtsw1", "Ethernet1", queue="3"))] == 0
    assert samples[("nr_run_queue_watermark_bytes", at("rtsw4", "Ethernet16", queue="3"))] == 0
    assert not any(name == "nr_run_queue_watermark_bytes_total" for name, _ in samples)
