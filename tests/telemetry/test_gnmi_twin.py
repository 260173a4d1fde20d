"""gNMI against the twin through pygnmi and nr-run's telemetry client: TLS verified with the lab's CA,
username/password metadata, STREAM SAMPLE and ON_CHANGE updates when a fault changes state or a counter,
and counters over gNMI equal to the polled ones (eAPI, SSH CLI) for the same instant."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
from pygnmi.client import gNMIclient

from nr_run.lab.twin.tls import ensure_cert
from nr_run.platforms import registry
from nr_run.platforms.telemetry import (
    GNMI,
    GnmiTarget,
    GnmiUnavailable,
    collect_counters_gnmi,
    sample_once,
    subscribe_counters,
)
from nr_run.platforms.transport import set_options
from nr_run.runbooks.inventory import init_nornir
from tests.conftest import REPO

CREDS = {"eos": ("admin", "admin"), "sonic": ("admin", "YourPaSsWoRd")}


def _client(twin, host: str, **kw) -> gNMIclient:
    ep = twin.addresses[host]
    user, password = CREDS[ep["platform"]]
    return gNMIclient(target=("127.0.0.1", ep["gnmi_port"]), username=kw.pop("username", user),
                      password=kw.pop("password", password), path_cert=kw.pop("path_cert", ep["tls_ca"]), **kw)


def _target(twin, host: str, **kw) -> GnmiTarget:
    ep = twin.addresses[host]
    user, password = CREDS[ep["platform"]]
    return GnmiTarget(host, "127.0.0.1", ep["gnmi_port"], user, password, **{"tls_ca": ep["tls_ca"], **kw})


def _updates(stream, until, timeout: float) -> list[dict]:
    """Updates from a pygnmi stream until `until(update)` holds (or the timeout)."""
    seen: list[dict] = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            msg = stream.get_update(timeout=max(0.1, deadline - time.time()))
        except Exception:
            break
        if "update" in msg:
            seen.append(msg["update"])
            if until(msg["update"]):
                break
    return seen


def test_capabilities_and_auth(deployed_twin, tmp_path: Path):
    with _client(deployed_twin, "rtsw1") as gc:
        caps = gc.capabilities()
    assert "openconfig-qos" in {m["name"] for m in caps["supported_models"]}
    with pytest.raises(Exception, match="authentication failed"):
        _client(deployed_twin, "rtsw1", password="wrong").connect()
    # a certificate that does not chain to the CA we trust is refused (verification is on)
    other_ca, _ = ensure_cert(tmp_path / "other")
    with pytest.raises(GnmiUnavailable):
        sample_once(_target(deployed_twin, "rtsw1", tls_ca=str(other_ca), timeout_s=2),
                    registry.get("eos").telemetry)


def test_stream_sample_updates(deployed_twin):
    path = "openconfig:/interfaces/interface[name=Ethernet1]/state/counters/out-discards"
    with _client(deployed_twin, "rtsw1") as gc:
        stream = gc.subscribe2(subscribe={"mode": "stream", "encoding": "json", "subscription": [
            {"path": path, "mode": "sample", "sample_interval": 200_000_000}]})
        got = _updates(stream, lambda u: False, timeout=1.3)
        stream.close()
    # the initial update, then one every 200 ms
    assert len(got) >= 4, got
    assert all(u["update"][0]["path"].endswith("state/counters/out-discards") for u in got)


def test_on_change_sees_a_link_fault(deployed_twin):
    path = "openconfig:/interfaces/interface[name=Ethernet1]/state/oper-status"
    with _client(deployed_twin, "rtsw1") as gc:
        stream = gc.subscribe2(subscribe={"mode": "stream", "encoding": "json", "subscription": [
            {"path": path, "mode": "on_change"}]})
        first = _updates(stream, lambda u: True, timeout=3)
        assert first and first[0]["update"][0]["val"] == "UP"
        quiet = _updates(stream, lambda u: True, timeout=1.5)      # nothing changed: nothing sent
        assert quiet == []
        # a quiet ON_CHANGE stream leaves the twin free: eAPI still answers (a blocked twin times the call out)
        assert deployed_twin.eapi("rtsw1").enable(["show version"])[0]["result"]["version"]
        deployed_twin.fault("link_down", device="ctsw1", port="Ethernet1")
        changed = _updates(stream, lambda u: True, timeout=3)
        stream.close()
    assert [u["update"][0]["val"] for u in changed] == ["DOWN"]
    # the twin ended the quiet stream when the client closed its side, before the channel went away
    time.sleep(0.3)
    assert stream.error is None


def test_on_change_sonic_counter_under_a_storm(deployed_twin):
    path = "COUNTERS/Ethernet16/SAI_PORT_STAT_PFC_3_RX_PKTS"
    with _client(deployed_twin, "rtsw3") as gc:
        stream = gc.subscribe2(subscribe={"mode": "stream", "encoding": "json_ietf", "subscription": [
            {"path": path, "mode": "on_change"}]}, target="COUNTERS_DB")
        assert _updates(stream, lambda u: True, timeout=3)[0]["update"][0]["val"] == "0"
        deployed_twin.fault("pfc_storm", device="rtsw3", port="Ethernet16", priority=3, **{"for": "0.3s"})
        rising = _updates(stream, lambda u: False, timeout=1.2)
        stream.close()
    values = [int(u["update"][0]["val"]) for u in rising]
    assert values and values == sorted(values) and values[0] > 0


def test_subscribe_counters_yields_samples(deployed_twin):
    deployed_twin.fault("congestion", device="rtsw1", port="Ethernet1", queue=3)
    samples = list(subscribe_counters(_target(deployed_twin, "rtsw1"), registry.get("eos").telemetry,
                                      interval_s=0.2, max_samples=4))
    marks = [s.ports["Ethernet1"].ecn_marks[3] for s in samples]
    assert len(samples) == 4 and marks == sorted(marks) and marks[-1] > marks[0] > 0


def _nornir(twin):
    return init_nornir("dc1", REPO / "inventory", lab=True, address_map=twin.addresses)


def test_gnmi_samples_equal_polled_ones(deployed_twin):
    # timed faults that are over before both reads: the counters no longer move, so the two sources must agree
    deployed_twin.fault("pfc_storm", device="rtsw1", port="Ethernet1", priority=3, **{"for": "0.3s"})
    deployed_twin.fault("congestion", device="rtsw1", port="Ethernet2", queue=3, **{"for": "0.3s"})
    deployed_twin.fault("pfc_storm", device="rtsw3", port="Ethernet16", priority=3, **{"for": "0.3s"})
    deployed_twin.fault("lossless_drops", device="rtsw4", port="Ethernet16", queue=3, **{"for": "0.3s"})
    deployed_twin.fault("congestion", device="rtsw3", port="Ethernet16", queue=3, **{"for": "0.3s"})
    time.sleep(0.6)
    nr = _nornir(deployed_twin)
    streamed = collect_counters_gnmi(nr)
    switches = sorted(h for h, x in nr.inventory.hosts.items() if x.platform in ("eos", "sonic"))
    assert sorted(streamed.samples) == switches and set(streamed.sources.values()) == {"gnmi"}
    # the same counters polled: every switch's gNMI port closed, so each one falls back to its CLI collector
    for host in nr.inventory.hosts.values():
        set_options(host, GNMI, port=1)
    polled = collect_counters_gnmi(nr, timeout_s=1)
    assert sorted(polled.samples) == switches
    assert all(src.startswith("poll (") for src in polled.sources.values()), polled.sources
    for host in switches:
        a, b = streamed.samples[host], polled.samples[host]
        # pause durations: gNMI (SAI counters) and, on dc1's 202511 SONiC, the CLI's `show pfc counters --history`
        # (EOS' CLI shows frames only); compared apart below. SONiC's queue
        # watermarks only from its CLI (USER_WATERMARKS is no COUNTERS_DB virtual path); EOS has both both ways
        # link status changes come over gNMI with the counters (EOS carrier-transitions); polled, with the interfaces
        counts = {p: dataclasses.replace(c, pfc_rx_pause_us={}, pfc_tx_pause_us={}, link_status_changes=None)
                  for p, c in a.ports.items()}
        if host.startswith(("ctsw", "rtsw1", "rtsw2")):
            assert all(c.link_status_changes == 1 for c in a.ports.values()), host        # the first link up
        polled_counts = {p: dataclasses.replace(c, pfc_rx_pause_us={}, pfc_tx_pause_us={}) for p, c in b.ports.items()}
        if host in ("rtsw3", "rtsw4"):
            assert not any(c.queue_watermark_bytes for c in a.ports.values()), host
            assert all(set(c.queue_watermark_bytes) == set(range(8)) for c in b.ports.values()), host
            polled_counts = {p: dataclasses.replace(c, queue_watermark_bytes={}) for p, c in polled_counts.items()}
        assert counts == polled_counts and a.unreadable == b.unreadable, host
        if not host.startswith(("rtsw3", "rtsw4")):
            assert not any(c.pfc_rx_pause_us for c in b.ports.values()), host
    assert polled.samples["rtsw3"].ports["Ethernet16"].pfc_rx_pause_us[3] > 0       # the 202511 CLI's history
    # the congested EOS queue stood halfway between its ECN thresholds: both sources report that peak
    assert streamed.samples["rtsw1"].ports["Ethernet2"].queue_watermark_bytes[3] > 0
    assert polled.samples["rtsw3"].ports["Ethernet16"].queue_watermark_bytes[3] > 0
    assert streamed.samples["rtsw3"].ports["Ethernet16"].pfc_rx_pause_us[3] > 0       # SONiC, paused 0.3 s
    assert streamed.samples["rtsw1"].ports["Ethernet1"].pfc_rx[3] > 0
    assert streamed.samples["rtsw1"].ports["Ethernet2"].ecn_marks[3] > 0
    assert streamed.samples["rtsw3"].ports["Ethernet16"].pfc_rx[3] > 0
    assert streamed.samples["rtsw4"].ports["Ethernet16"].queue_drops[3] > 0


def test_once_and_poll(deployed_twin):
    sub = {"subscription": [{"path": "COUNTERS/Ethernet16/SAI_PORT_STAT_PFC_3_RX_PKTS"}], "encoding": "json_ietf"}
    with _client(deployed_twin, "rtsw3") as gc:
        once = list(gc.subscribe2(subscribe={**sub, "mode": "once"}, target="COUNTERS_DB"))
        assert once[0]["update"]["update"][0]["val"] == "0" and once[-1].get("sync_response")
        poll = gc.subscribe2(subscribe={**sub, "mode": "poll"}, target="COUNTERS_DB")
        # pygnmi sends a Poll on every read and then reads up to the next sync: the first read returns the
        # initial data, each later one the answer to the previous read's Poll
        first = poll.get_update(timeout=3)
        second = poll.get_update(timeout=3)
        deployed_twin.fault("pfc_storm", device="rtsw3", port="Ethernet16", priority=3)
        time.sleep(0.2)
        poll.get_update(timeout=3)
        third = poll.get_update(timeout=3)
        poll.close()
    assert [first["update"]["update"][0]["val"], second["update"]["update"][0]["val"]] == ["0", "0"]
    assert int(third["update"]["update"][0]["val"]) > 0
