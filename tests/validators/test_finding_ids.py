"""A finding's id (Finding.id) is its identity from structured fields: unique within a run for every check,
and what the deploy baseline and the history key on, so rewording a finding keeps both."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections import Counter

import pytest

from nr_run.history.model import Collection
from nr_run.history.store import HistoryStore
from nr_run.intent import compile_site
from nr_run.platforms.state import DeviceState
from nr_run.runbooks.deploy_checks import StageGate
from nr_run.validators.base import Finding, evaluate_all, select
from tests.conftest import DC1
from tests.validators.healthy import healthy_states

FABRIC = compile_site(DC1)


def _emptied(states: dict[str, DeviceState], every: int = 1) -> dict[str, DeviceState]:
    """Every `every`-th device (sorted) with its sections collected but empty: the checks' failing branches."""
    out = dict(states)
    for i, name in enumerate(sorted(states)):
        if i % every == 0:
            out[name] = DeviceState(name, states[name].platform, sections=set(states[name].sections))
    return out


def _uncollected(states: dict[str, DeviceState]) -> dict[str, DeviceState]:
    return {n: DeviceState(n, s.platform) for n, s in states.items()}


@pytest.mark.parametrize("corpus", ["healthy", "emptied", "half emptied", "uncollected", "unreachable"])
def test_every_check_gives_each_finding_its_own_id(corpus):
    healthy = healthy_states(FABRIC)
    states = {"healthy": healthy, "emptied": _emptied(healthy), "half emptied": _emptied(healthy, 2),
              "uncollected": _uncollected(healthy), "unreachable": {}}[corpus]
    findings = evaluate_all(select(None), FABRIC, states)
    assert findings
    twice = {i: n for i, n in Counter(f.id for f in findings).items() if n > 1}
    assert twice == {}, sorted(twice)[:5]


def _failing() -> Finding:
    return Finding("pfc", "rtsw1", "Ethernet1 watchdog", "on, drop, detect 200 ms", "off", False,
                   hint="enable the PFC watchdog on Ethernet1", port="Ethernet1", peer_device="ctsw1",
                   peer_port="Ethernet1", kind="pfc-watchdog")


def _reworded(f: Finding) -> Finding:
    return dataclasses.replace(f, target="the PFC watchdog of Ethernet1", expected="watchdog enabled",
                               observed="watchdog disabled", hint="turn the watchdog on")


def test_a_reworded_finding_is_still_the_baseline_s_and_another_kind_is_new():
    gate = StageGate(FABRIC)
    gate.baseline_failed = {_failing().id}
    new, old = gate.split([_reworded(_failing()), dataclasses.replace(_failing(), kind="pfc-priorities")])
    assert [f.kind for f in old] == ["pfc-watchdog"] and [f.kind for f in new] == ["pfc-priorities"]


def test_a_reworded_finding_keeps_its_history(tmp_path):
    def collect(t: float, *findings: Finding) -> Collection:
        return Collection("check", "poll", t, t + 1, findings=list(findings), checks=["pfc"], devices=["rtsw1"])

    with HistoryStore(tmp_path / "h.sqlite", "dc1") as store:
        assert store.record(collect(100.0, _failing())).new_findings == 1
        again = store.record(collect(200.0, _reworded(_failing())))
        assert (again.new_findings, again.resolved_findings) == (0, 0)
        [open_] = store.findings("resolved IS NULL", ())
        assert (open_["fid"], open_["first_seen"], open_["last_seen"]) == (_failing().id, 100.0, 200.0)
        assert open_["target"] == "the PFC watchdog of Ethernet1"         # the latest wording is shown
        done = store.record(collect(300.0, dataclasses.replace(_reworded(_failing()), passed=True)))
        assert done.resolved_findings == 1 and store.findings("resolved IS NULL", ()) == []


def test_a_schema_1_history_is_migrated_to_ids(tmp_path):
    path = tmp_path / "h.sqlite"
    with HistoryStore(path, "dc1"):
        pass
    db = sqlite3.connect(path)        # what schema 1 held: findings keyed on their wording, no id
    db.executescript("ALTER TABLE findings DROP COLUMN idx; ALTER TABLE findings DROP COLUMN kind; "
                     "ALTER TABLE findings DROP COLUMN fid; PRAGMA user_version=1;")
    db.execute("INSERT INTO findings(check_name, device, target, port, peer_device, peer_port, severity, expected, "
               "observed, hint, first_seen, last_seen, first_run, last_run) "
               "VALUES ('bgp', 'rtsw1', '10.0.0.1', 'Ethernet1', 'ctsw1', 'Ethernet1', 'error', 'Established', "
               "'Idle', '', 1, 1, 1, 1)")
    db.commit()
    db.close()
    bgp = Finding("bgp", "rtsw1", "session to ctsw1", "Established", "Active", False, port="Ethernet1",
                  peer_device="ctsw1", peer_port="Ethernet1")
    with HistoryStore(path, "dc1") as store:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == 2
        recorded = store.record(Collection("check", "poll", 5.0, 6.0, findings=[bgp], checks=["bgp"],
                                           devices=["rtsw1"]))
        assert recorded.new_findings == 0                   # the schema-1 row, found again by its id
