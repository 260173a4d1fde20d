"""A stage's revert timer outlasts its post-check as measured: the baseline first, then each stage's own."""

from __future__ import annotations

import math

from nr_run.intent import compile_site
from nr_run.runbooks.check import CheckReport
from nr_run.runbooks.deploy_checks import StageGate, stage_selection
from nr_run.runbooks.revert_timer import MARGIN, MAX_S, RevertTimer
from nr_run.validators.base import Finding, select
from tests.conftest import DC1

FABRIC = compile_site(DC1)


def test_floor_until_measured_then_scaled_to_the_scope_and_capped() -> None:
    timer = RevertTimer(300)
    assert timer.for_scope(3_800) == 300
    timer.observe(600.0, 4_096)                         # a whole-site check of 4,096 devices took 10 minutes
    assert timer.for_scope(3_800) == math.ceil(MARGIN * 600 / 4_096 * 3_800)
    assert timer.for_scope(10) == 300                   # a small stage keeps --confirm-timeout
    timer.observe(3_000.0, 1_000)
    assert timer.for_scope(3_800) == MAX_S


class _Clocked:
    """A check runner whose checks take `seconds` on a clock the gate reads (no wall clock in the test)."""

    def __init__(self) -> None:
        self.now, self.seconds, self.scopes = 0.0, 0.0, []

    def clock(self) -> float:
        return self.now

    def __call__(self, nr, fabric, checks=None, options=None, sleep=None, progress=None, selection=None):
        self.now += self.seconds
        hosts = sorted(selection) if selection is not None else sorted(fabric.devices)
        self.scopes.append(hosts)
        return CheckReport(site=fabric.site, checks=[], findings=[], devices=len(hosts))


def test_the_gate_times_the_baseline_and_each_stage() -> None:
    run = _Clocked()
    gate = StageGate(FABRIC, run=run, clock=run.clock)
    gate.timer.floor_s = 5
    scope = len(stage_selection(FABRIC, ["ctsw1"], select(gate.stage_checks)))
    assert gate.revert_timer(["ctsw1"]) == 5            # nothing measured yet: the floor
    run.seconds = 100.0                                 # the baseline over the site's 10 devices: 10 s each
    gate.take_baseline(None)
    assert gate.revert_timer(["ctsw1"]) == math.ceil(MARGIN * 100 / len(FABRIC.devices) * scope)
    run.seconds = 1.0                                   # the canary's post-check is fast: the timer follows it
    gate.stage(None, ["rtsw1"], set())
    per_device = 1.0 / len(run.scopes[-1])
    assert gate.revert_timer(["ctsw1"]) == max(5, math.ceil(MARGIN * per_device * scope))


def test_the_baseline_keeps_ids_and_counts_without_grouping_causes(mocker) -> None:
    """Cause grouping is the costly part of a big site's report, and a deploy compares only ids and counts."""
    failing = Finding("links", "rtsw1", "Ethernet1", "up", "down", False, port="Ethernet1")
    passing = Finding("links", "rtsw1", "Ethernet2", "up", "up", True, port="Ethernet2")
    gate = StageGate(FABRIC, run=lambda *a, **k: CheckReport(site=FABRIC.site, checks=["links"],
                                                              findings=[failing, passing], devices=1))
    grouping = mocker.patch("nr_run.runbooks.check.correlate", side_effect=AssertionError("grouped causes"))
    summary = gate.take_baseline(None)
    assert not grouping.called
    assert gate.baseline_failed == {failing.id}
    assert summary["failed"] == 1 and summary["summary"]["passed"] == 1 and summary["passed"] is False
    assert not gate.is_new(failing) and gate.is_new(passing)
