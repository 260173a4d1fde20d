"""Series the devices count themselves: link status changes from the interfaces section join the counter sample
of a polled device (gNMI brings them with the counters), the history stores them as a per-port total, and the
exporter serves them and the queue watermarks (a level: no rate, no _total)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from nr_run.history.model import LINK_CHANGES, NO_INDEX, counter_values, from_states
from nr_run.platforms.state import CounterSample, DeviceState, InterfaceState, PortCounters
from nr_run.runbooks.exporter import FabricMetrics


def _state(changes: int | None, watermark: int, gnmi_changes: int | None = None) -> DeviceState:
    st = DeviceState("rtsw1", "eos", sections={"interfaces", "counters"})
    st.interfaces = {"Ethernet1": InterfaceState("Ethernet1", True, True, link_changes=changes),
                     "Ethernet2": InterfaceState("Ethernet2", True, True)}
    st.counters_first = CounterSample(0.0, {
        "Ethernet1": PortCounters(queue_watermark_bytes={3: watermark}, link_status_changes=gnmi_changes),
        "Ethernet2": PortCounters(queue_watermark_bytes={3: 0})})
    return st


def _scrape(metrics: FabricMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(metrics)
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(generate_latest(registry).decode()) for s in fam.samples}


def test_polled_link_changes_join_the_sample_and_gnmi_ones_win():
    st = _state(changes=3, watermark=180_000)
    coll = from_states("watch", "poll", 0.0, 1.0, {"rtsw1": st}, [], [])
    values = {(p, n, i): v for p, n, i, v in counter_values(coll.samples["rtsw1"])}
    assert values[("Ethernet1", LINK_CHANGES, NO_INDEX)] == 3
    assert ("Ethernet2", LINK_CHANGES, NO_INDEX) not in values          # the platform did not count it
    assert values[("Ethernet1", "queue_watermark_bytes", 3)] == 180_000
    assert st.counters_first is not None and st.counters_first.ports["Ethernet1"].link_status_changes is None
    # a sample that brought its own count (gNMI carrier-transitions) keeps it
    coll = from_states("watch", "gnmi", 0.0, 1.0, {"rtsw1": _state(changes=3, watermark=0, gnmi_changes=5)}, [], [])
    assert coll.samples["rtsw1"].ports["Ethernet1"].link_status_changes == 5


def test_exporter_serves_link_changes_and_watermarks_as_they_are():
    m = FabricMetrics("dc1", {"rtsw1": [3]}, 30.0)
    m.update(from_states("watch", "poll", 1000.0, 1001.0, {"rtsw1": _state(1, 180_000)}, [], []), 1.0)
    m.update(from_states("watch", "poll", 1030.0, 1031.0, {"rtsw1": _state(3, 90_000)}, [], []), 1.0)
    s = _scrape(m)
    at = {"site": "dc1", "device": "rtsw1", "port": "Ethernet1"}
    assert s[("nr_run_link_status_changes_total", tuple(sorted(at.items())))] == 3
    assert s[("nr_run_queue_watermark_bytes", tuple(sorted({**at, "queue": "3"}.items())))] == 90_000   # a level
    names = {name for name, _ in s}
    assert not names & {"nr_run_queue_watermark_bytes_total", "nr_run_queue_watermark_bytes_per_second",
                        "nr_run_link_status_changes_per_second"}
