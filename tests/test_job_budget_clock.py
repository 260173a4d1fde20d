"""job-check's budget on an injected clock (pytest-mock stands in for the switch reads): the verdict is made
when the clock passes the deadline, naming the switch that did not answer as not checked, whatever the wall
clock says; a switch still being read is left to its thread, never waited for."""

from __future__ import annotations

import threading

from nr_run.intent import compile_site
from nr_run.platforms.state import DeviceState
from nr_run.runbooks.job import NO_ANSWER, job_scope, run_job_check
from tests.conftest import DC1

FABRIC = compile_site(DC1)


def test_past_the_budget_on_the_clock_the_unanswered_switch_is_not_checked(mocker):
    scope = job_scope(FABRIC, ["gpu1"])
    stuck = sorted(scope.devices)[0]
    release = threading.Event()

    def read(nr, fabric, name, checks, sleep):
        if name == stuck:
            release.wait(60)          # never answers while the verdict is made
        return DeviceState(name, fabric.devices[name].platform)

    mocker.patch("nr_run.runbooks.job.check_device", side_effect=read)
    readings = iter([0.0])          # the start; every later reading is past the 5 s budget
    try:
        verdict = run_job_check(mocker.MagicMock(), FABRIC, scope, budget_s=5.0,
                                clock=lambda: next(readings, 99.0))
        assert not release.is_set()           # made while the stuck read is still running
    finally:
        release.set()
    assert verdict.timed_out and verdict.elapsed_s == 99.0
    assert verdict.unknown[stuck] == f"{NO_ANSWER} the 5 s budget"
    assert verdict.verdict != "ok"


def test_within_the_budget_on_the_clock_every_switch_is_judged(mocker):
    scope = job_scope(FABRIC, ["gpu1"])
    mocker.patch("nr_run.runbooks.job.check_device",
                 side_effect=lambda nr, fabric, name, checks, sleep: DeviceState(name, fabric.devices[name].platform))
    verdict = run_job_check(mocker.MagicMock(), FABRIC, scope, budget_s=5.0, clock=lambda: 0.0)
    assert not verdict.timed_out and verdict.elapsed_s == 0.0
    assert not any(NO_ANSWER in why for why in verdict.unknown.values()), verdict.unknown
