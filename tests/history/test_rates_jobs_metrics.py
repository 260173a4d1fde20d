"""Counter deltas across resets and wraps, Slurm hostlists and a job's ports, and the exporter's metric families
computed from collections built by hand (exact values)."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from nr_run.history.model import Collection, Observation
from nr_run.history.rates import WRAP32, delta, increase
from nr_run.platforms.state import CounterSample, PortCounters
from nr_run.runbooks.exporter import FabricMetrics
from nr_run.runbooks.job import UnknownNodes, job_scope
from nr_run.validators.base import Finding
from tests.twin_site import FABRIC


def test_delta_growth_reset_and_32bit_wrap() -> None:
    assert delta(10, 25) == 15
    assert delta(1000, 7) == 7                       # reset: counted up again from zero
    assert delta(WRAP32 - 10, 5) == 15               # a 32-bit counter wrapped
    assert delta(2**40, 5) == 5                      # a 64-bit counter that went down was reset, not wrapped
    assert increase([5, 10, 2, 4]) == 5 + 2 + 2


def test_job_ports_follow_nics_to_rtsw_and_uplinks() -> None:
    with pytest.raises(UnknownNodes, match="nosuch"):
        job_scope(FABRIC, ["gpu3", "nosuch"])
    ports = job_scope(FABRIC, ["gpu3"]).port_set()
    nic_ports = {(n.peer_device, n.peer_port) for n in FABRIC.devices["gpu3"].nics}
    assert nic_ports <= ports and ("gpu3", "eth1") in ports
    for rtsw in {d for d, _ in nic_ports}:
        uplinks = [i for i in FABRIC.devices[rtsw].interfaces if i.role == "fabric"]
        assert uplinks and all((rtsw, i.name) in ports and (i.peer_device, i.peer_port) in ports for i in uplinks)
        # another server's port on the same RTSW is not the job's
        others = [i for i in FABRIC.devices[rtsw].interfaces if i.role == "host" and i.peer_device != "gpu3"]
        assert others and not any((rtsw, i.name) in ports for i in others)


def _collection(t: float, rx: int, marks: int, stormed: bool, link: str = "up") -> Collection:
    c = PortCounters(pfc_rx={3: rx}, pfc_tx={3: 0}, queue_drops={3: 7, 0: 1}, ecn_marks={3: marks})
    return Collection("exporter", "poll", t - 1, t, {"rtsw3": CounterSample(0.0, {"Ethernet16": c})}, {"rtsw3": t},
                      [Observation("rtsw3", "storm", "Ethernet16", "stormed" if stormed else "clear", 3),
                       Observation("rtsw3", "link", "Ethernet16", link),
                       Observation("rtsw3", "bgp", "10.254.0.8", "Established")],
                      [Finding("pfc", "rtsw3", "Ethernet16 priority 3", "no storm", "storm", False, "error"),
                       Finding("pfc", "rtsw3", "Ethernet24 priority 3", "no storm", "clear", True, "info")],
                      ["pfc", "bgp"], {}, ["rtsw3"])


def _scrape(metrics: FabricMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(metrics)
    out = {}
    for fam in text_string_to_metric_families(generate_latest(registry).decode()):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def _at(port: str = "Ethernet16", **labels: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted({"site": "dc1", "device": "rtsw3", "port": port, **labels}.items()))


def test_metrics_values_and_rates() -> None:
    m = FabricMetrics("dc1", {"rtsw3": [3]}, 30.0)
    m.update(_collection(1000.0, 100, 10, False), 2.5)
    m.update(_collection(1030.0, 1600, 310, True, link="down"), 3.0)
    s = _scrape(m)
    assert s[("nr_run_pfc_rx_pause_frames_total", _at(priority="3"))] == 1600
    assert s[("nr_run_pfc_rx_pause_frames_per_second", _at(priority="3"))] == pytest.approx(50.0)
    assert s[("nr_run_ecn_marked_packets_per_second", _at(queue="3"))] == pytest.approx(10.0)
    assert s[("nr_run_queue_dropped_packets_total", _at(queue="0"))] == 1
    assert s[("nr_run_lossless_dropped_packets_total", _at(queue="3"))] == 7
    assert ("nr_run_lossless_dropped_packets_total", _at(queue="0")) not in s       # queue 0 is lossy
    assert s[("nr_run_pfc_watchdog_storm_active", _at(priority="3"))] == 1
    assert s[("nr_run_pfc_watchdog_storms_total", _at(priority="3"))] == 1
    assert s[("nr_run_link_up", _at())] == 0 and s[("nr_run_link_flaps_total", _at())] == 1
    site = (("site", "dc1"),)
    assert s[("nr_run_check_findings", (("check", "pfc"), ("severity", "error"), *site))] == 1
    assert s[("nr_run_check_findings", (("check", "bgp"), ("severity", "error"), *site))] == 0
    assert s[("nr_run_check_passed", (("check", "pfc"), *site))] == 1
    assert s[("nr_run_check_failures", (("check", "pfc"), ("device", "rtsw3"), *site))] == 1
    assert s[("nr_run_last_collection_timestamp_seconds", site)] == 1030.0
    assert s[("nr_run_last_collection_success", site)] == 1
    assert s[("nr_run_collections_total", (("result", "success"), *site))] == 2
    m.update(None, 1.0, "boom")
    s = _scrape(m)
    assert s[("nr_run_last_collection_success", site)] == 0
    assert s[("nr_run_last_collection_timestamp_seconds", site)] == 1030.0     # the last successful one


def test_metrics_rate_across_a_device_reset() -> None:
    """After the device's counters restart, the per-second gauge is the growth since the reset, never negative."""
    m = FabricMetrics("dc1", {"rtsw3": [3]}, 30.0)
    m.update(_collection(1000.0, 5000, 10, False), 1.0)
    m.update(_collection(1030.0, 600, 10, False), 1.0)          # rebooted: counted 600 from zero
    s = _scrape(m)
    assert s[("nr_run_pfc_rx_pause_frames_total", _at(priority="3"))] == 600
    assert s[("nr_run_pfc_rx_pause_frames_per_second", _at(priority="3"))] == pytest.approx(20.0)
