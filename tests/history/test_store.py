"""History store and report on collections built by hand: finding lifecycle, change-only counters, resets,
events, retention; no device involved."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from nr_run.history.model import Collection, Observation
from nr_run.history.report import site_report
from nr_run.history.schema import VERSION, HistoryError
from nr_run.history.store import HistoryStore
from nr_run.platforms.state import CounterSample, PortCounters
from nr_run.validators.base import Finding

T0 = 1_800_000_000.0


def sample(rx: int, drops: int = 0, total_only: bool = False) -> CounterSample:
    c = PortCounters(pfc_rx={} if total_only else {3: rx}, pfc_tx={} if total_only else {3: 0},
                     pfc_rx_total=rx, queue_drops={3: drops}, ecn_marks={3: 0})
    return CounterSample(taken_at=0.0, ports={"Ethernet16": c})


def storm(f_pass: bool) -> Finding:
    return Finding("pfc", "rtsw3", "Ethernet16 priority 3", "no storm", "clear" if f_pass else "storm detected",
                   f_pass, "info" if f_pass else "error", port="Ethernet16")


def coll(t: float, rx: int, findings: list[Finding], stormed: bool = False, errors: dict | None = None,
         drops: int = 0) -> Collection:
    return Collection(kind="watch", source="poll", started=t, finished=t + 1, samples={"rtsw3": sample(rx, drops)},
                      sample_times={"rtsw3": t + 0.5},
                      observations=[Observation("rtsw3", "storm", "Ethernet16", "stormed" if stormed else "clear", 3),
                                    Observation("rtsw3", "link", "Ethernet16", "up")],
                      findings=findings, checks=["pfc"], errors=errors or {}, devices=["rtsw3"])


@pytest.fixture
def store(tmp_path: Path) -> HistoryStore:
    s = HistoryStore(tmp_path / "dc1.sqlite", "dc1")
    yield s
    s.close()


def test_database_is_private_wal_and_versioned(store: HistoryStore) -> None:
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == VERSION


def test_other_site_or_newer_schema_refused(tmp_path: Path, store: HistoryStore) -> None:
    with pytest.raises(HistoryError, match="site 'dc1', not 'dc2'"):
        HistoryStore(store.path, "dc2")
    store.db.execute(f"PRAGMA user_version={VERSION + 1}")
    with pytest.raises(HistoryError, match="newer"):
        HistoryStore(store.path, "dc1")


def test_finding_new_then_resolved_with_times(store: HistoryStore) -> None:
    store.record(coll(T0, 0, [storm(True)]))
    r2 = store.record(coll(T0 + 30, 1000, [storm(False)], stormed=True))
    r3 = store.record(coll(T0 + 60, 2000, [storm(False)], stormed=True))
    r4 = store.record(coll(T0 + 90, 2000, [storm(True)]))
    assert (r2.new_findings, r3.new_findings, r4.resolved_findings) == (1, 0, 1)
    [f] = store.findings("1", ())
    assert (f["first_seen"], f["last_seen"], f["resolved"]) == (T0 + 30, T0 + 60, T0 + 90)
    events = store.events(T0, T0 + 100)
    assert [(e["kind"], e["old"], e["new"], e["t"]) for e in events] == [
        ("storm", "clear", "stormed", T0 + 30.5), ("storm", "stormed", "clear", T0 + 90.5)]


def test_unreadable_device_or_other_check_resolves_nothing(store: HistoryStore) -> None:
    store.record(coll(T0, 0, [storm(False)]))
    # the device could not be read: its checks fail differently, the storm finding is not known to be gone
    unreadable = Finding("pfc", "rtsw3", "", "pfc collected", "not collected", False)
    store.record(coll(T0 + 30, 0, [unreadable], errors={"rtsw3": {"pfc": "timeout"}}))
    # another check ran on the device: says nothing about the pfc finding either
    other = Finding("bgp", "rtsw3", "10.0.0.1", "Established", "Established", True, "info")
    c = coll(T0 + 60, 0, [other])
    c.checks = ["bgp"]
    store.record(c)
    assert [f["resolved"] for f in store.findings("target = ?", ("Ethernet16 priority 3",))] == [None]
    # the check ran on the device (it reports the device's other ports) and no longer reports it: resolved
    store.record(coll(T0 + 90, 0, [Finding("pfc", "rtsw3", "Ethernet24 priority 3", "no storm", "clear", True,
                                           "info", port="Ethernet24")]))
    assert [f["resolved"] for f in store.findings("target = ?", ("Ethernet16 priority 3",))] == [T0 + 90]


def test_counters_stored_only_when_changed(store: HistoryStore) -> None:
    first = store.record(coll(T0, 5, []))
    same = store.record(coll(T0 + 30, 5, []))
    changed = store.record(coll(T0 + 60, 9, []))
    assert first.samples > 0 and same.samples == 0 and changed.samples == 1


def test_rates_across_a_counter_reset(store: HistoryStore) -> None:
    for i, rx in enumerate([100, 400, 400, 50, 80]):        # cleared (or rebooted) between 400 and 50
        store.record(coll(T0 + 30 * i, rx, []))
    doc = site_report(store, T0 - 1, T0 + 200)
    [row] = [r for r in doc["rates"] if r["counter"] == "pfc_rx_frames"]
    assert row["increase"] == 300 + 50 + 30
    assert row["resets"] == 1
    assert row["per_second"] == pytest.approx(380 / 120, rel=1e-3)
    assert row["peak_per_second"] == pytest.approx(10.0)          # 300 in the 30 s before the second sample
    pause = doc["top_pause"]
    assert pause["measure"] == "pause_frames" and "not exposed" in pause["note"]
    assert pause["ports"][0] | {} == {"device": "rtsw3", "port": "Ethernet16", "priority": 3, "rx": 380, "tx": 0,
                                      "total": 380}


def test_report_window_starts_from_the_value_in_force(store: HistoryStore) -> None:
    store.record(coll(T0, 100, []))
    store.record(coll(T0 + 30, 100, []))
    store.record(coll(T0 + 60, 700, []))
    doc = site_report(store, T0 + 45, T0 + 100)     # the window starts between two samples
    [row] = [r for r in doc["rates"] if r["counter"] == "pfc_rx_frames"]
    assert row["increase"] == 600


def test_prune_keeps_the_baseline_of_each_series(store: HistoryStore) -> None:
    for i, rx in enumerate([100, 200, 300]):
        store.record(coll(T0 + 30 * i, rx, [storm(False)] if i == 0 else [storm(True)]))
    store.record(coll(T0 + 1000, 300, [storm(True)]))
    counts = store.prune(retention_s=500, now=T0 + 1100)       # cutoff T0 + 600: runs 1-3 go
    assert counts["runs"] == 3 and counts["findings"] == 1
    assert store.db.execute("SELECT COUNT(*) FROM samples s JOIN series x ON x.id = s.series_id "
                            "WHERE x.counter = 'pfc_rx_frames'").fetchone()[0] == 1     # 300 stays, in force
    store.record(coll(T0 + 1030, 350, []))
    doc = site_report(store, T0 + 900, T0 + 1100)
    [row] = [r for r in doc["rates"] if r["counter"] == "pfc_rx_frames"]
    assert row["increase"] == 50


def test_per_port_totals_have_no_priority(store: HistoryStore) -> None:
    c = coll(T0, 0, [])
    c.samples = {"rtsw1": sample(10, total_only=True)}
    c.sample_times = {"rtsw1": T0}
    c.devices = ["rtsw1"]
    store.record(c)
    c2 = coll(T0 + 30, 0, [])
    c2.samples = {"rtsw1": sample(70, total_only=True)}
    c2.sample_times = {"rtsw1": T0 + 30}
    c2.devices = ["rtsw1"]
    store.record(c2)
    doc = site_report(store, T0 - 1, T0 + 60)
    rows = [r for r in doc["rates"] if r["counter"] == "pfc_rx_frames" and r["device"] == "rtsw1"]
    assert [(r["index"], r["increase"]) for r in rows] == [(None, 60)]


def test_timeline_relates_events_to_the_last_deploy_action(store: HistoryStore) -> None:
    store.record(coll(T0, 0, [storm(True)]))
    store.record(coll(T0 + 40, 1000, [storm(False)], stormed=True))
    audit = [
        {"id": "a", "phase": "start", "site": "dc1", "time": "2027-01-15T08:00:00+00:00", "device": "rtsw3",
         "action": "commit", "detail": "batch 2, revert timer 300 s"},
        {"id": "a", "phase": "end", "site": "dc1", "time": _iso(T0), "device": "rtsw3", "action": "commit",
         "outcome": "committed"},
        {"id": "b", "phase": "end", "site": "dc2", "time": _iso(T0 + 1), "device": "x", "action": "commit",
         "outcome": "committed"},
    ]
    doc = site_report(store, T0 - 10, T0 + 100, audit)
    texts = [i["text"] for i in doc["timeline"]]
    assert "batch 2: rtsw3 commit committed" in texts
    assert "PFC storm on rtsw3 Ethernet16 prio 3 began, 40 s after batch 2: rtsw3 commit committed" in texts
    assert not any("dc2" in t or " x " in t for t in texts)
    # a window that starts after the commit still relates the storm to it, without listing the commit
    later = [i["text"] for i in site_report(store, T0 + 10, T0 + 100, audit)["timeline"]]
    after = ", 40 s after batch 2: rtsw3 commit committed"
    assert later == ["new finding: pfc rtsw3 Ethernet16 priority 3 (storm detected)" + after,
                     "PFC pause frames received on rtsw3 Ethernet16 prio 3 began rising (25/s)" + after,
                     "PFC storm on rtsw3 Ethernet16 prio 3 began" + after]


def test_an_event_is_related_only_to_the_deploy_step_that_touched_its_device_or_link(store: HistoryStore) -> None:
    """rtsw1 committed 10 s before a storm on rtsw3: the storm is not rtsw1's doing (nothing says so); a step on
    rtsw3's far end (ctsw1, cabled to rtsw3 Ethernet16 here) relates."""
    store.record(coll(T0, 0, [storm(True)]))
    store.record(coll(T0 + 40, 1000, [storm(False)], stormed=True))
    audit = [{"id": "a", "phase": "end", "site": "dc1", "time": _iso(T0 + 30), "device": "rtsw1", "action": "commit",
              "outcome": "committed"}]
    texts = [i["text"] for i in site_report(store, T0 - 10, T0 + 100, audit)["timeline"]]
    assert "PFC storm on rtsw3 Ethernet16 prio 3 began" in texts
    assert not any(" s after " in t for t in texts), texts
    audit.append({"id": "b", "phase": "end", "site": "dc1", "time": _iso(T0 + 20), "device": "ctsw1",
                  "action": "commit", "outcome": "committed"})
    doc = site_report(store, T0 - 10, T0 + 100, audit, peers={("rtsw3", "Ethernet16"): "ctsw1"})
    texts = [i["text"] for i in doc["timeline"]]
    assert "PFC storm on rtsw3 Ethernet16 prio 3 began, 20 s after ctsw1 commit committed" in texts, texts


def _iso(t: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


def test_a_counter_first_read_by_a_later_source_has_no_false_onset(store: HistoryStore) -> None:
    """Pause time arrives only from the second collection on (a source that reads it): the first collection,
    which had no such counter, must not make it 'stop rising' when it first appears."""
    for i, paused_us in enumerate([None, 1_000_000, 2_000_000, 3_000_000]):
        c = coll(T0 + 30 * i, 100 * i, [])
        if paused_us is not None:
            c.samples["rtsw3"].ports["Ethernet16"].pfc_rx_pause_us[3] = paused_us
        store.record(c)
    doc = site_report(store, T0 - 1, T0 + 300)
    pause = [(c["new"], c["t"] - 0.5 - T0) for c in doc["counter_changes"] if c["counter"] == "pfc_rx_pause_us"]
    assert pause == [("rising", 60)]


def test_counter_onsets_in_the_timeline(store: HistoryStore) -> None:
    values = [0, 0, 300, 600, 600, 600, 900]
    for i, rx in enumerate(values):
        store.record(coll(T0 + 30 * i, rx, []))
    doc = site_report(store, T0 - 1, T0 + 300)
    changes = [(c["counter"], c["new"], c["t"] - 0.5 - T0, c["per_second"]) for c in doc["counter_changes"]]
    assert changes == [("pfc_rx_frames", "rising", 60, 10.0), ("pfc_rx_frames", "steady", 120, None),
                       ("pfc_rx_frames", "rising", 180, 10.0)]
    texts = [i["text"] for i in doc["timeline"]]
    assert texts == ["PFC pause frames received on rtsw3 Ethernet16 prio 3 began rising (10/s)",
                     "PFC pause frames received on rtsw3 Ethernet16 prio 3 stopped rising",
                     "PFC pause frames received on rtsw3 Ethernet16 prio 3 began rising (10/s)"]
