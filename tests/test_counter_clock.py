"""Counter rates are measured on the switch's own clock, read next to its PFC counters: the client's stamps also
carry its queueing, which over a one-second window moves a rate by several per cent."""

from __future__ import annotations

import time

import pytest

from nr_run.intent import compile_site
from nr_run.platforms.sonic.collect import CHANNELS, CLOCK, channel_groups, parse_clock
from nr_run.platforms.state import CounterSample, DeviceState, PortCounters, sample_window_s
from nr_run.runbooks.inventory import init_nornir
from nr_run.validators.base import evaluate_all, select
from nr_run.validators.collect import collect_sections, runner_for
from tests.conftest import DC1
from tests.twin_site import CREDS, FABRIC
from tests.validators.healthy import healthy_states

DC1_FABRIC = compile_site("inventory/dc1")


def test_the_window_is_the_device_clock_s_when_both_samples_read_it() -> None:
    late_client = (CounterSample(10.0, clock=1000.0), CounterSample(11.5, clock=1001.0))
    assert sample_window_s(*late_client) == pytest.approx(1.0)
    # one sample without a clock, or a clock that went back (NTP step): the client's stamps
    assert sample_window_s(CounterSample(10.0), CounterSample(11.5, clock=1001.0)) == pytest.approx(1.5)
    assert sample_window_s(CounterSample(10.0, clock=1001.0), CounterSample(11.5, clock=1000.0)) == pytest.approx(1.5)


def test_the_pause_rate_is_frames_over_the_device_s_window_not_the_client_s() -> None:
    states = healthy_states(DC1_FABRIC)
    first, second = states["ctsw1"].counters_first, states["ctsw1"].counters_second
    assert first is not None and second is not None
    first.taken_at, second.taken_at = 100.0, 101.5            # the client stamped the first read 0.5 s early
    first.clock, second.clock = 5000.0, 5001.0
    second.ports["Ethernet2"].pfc_tx_total = first.ports["Ethernet2"].pfc_tx_total + 5000
    pause = next(f for f in evaluate_all(select(["counters"]), DC1_FABRIC, states)
                 if f.device == "ctsw1" and f.target == "Ethernet2 pfc tx")
    assert pause.observed == "5000.0/s" and not pause.passed


def test_the_clock_goes_just_before_the_command_after_it_on_that_command_s_channel() -> None:
    cmds = [CLOCK, "show pfc counters", "show queue counters", "a", "b", "c", "d", "e"]
    groups = channel_groups(cmds)
    rest = [c for c in cmds if c != CLOCK]
    assert [[c for c in g if c != CLOCK] for g in groups] == [rest[i::CHANNELS] for i in range(CHANNELS)]
    home = next(g for g in groups if CLOCK in g)
    assert home[home.index(CLOCK) + 1] == "show pfc counters"
    assert sum(g.count(CLOCK) for g in groups) == 1
    assert channel_groups(["x", "y"]) == [["x", "y"][i::CHANNELS] for i in range(CHANNELS)]


@pytest.mark.parametrize("text", ["", "nan", "inf", "-1", "Thu Dec  3 07:00:00 UTC 2026", "-bash: date: not found"])
def test_a_clock_that_is_not_one_positive_number_is_no_clock(text: str) -> None:
    assert parse_clock(text) is None


def test_gnu_date_on_a_sonic_switch_tells_its_epoch_time_and_refuses_setting_it(twin) -> None:
    client = twin.ssh("rtsw3", *CREDS["sonic"])
    try:
        before = time.time()
        _, out, _ = client.exec_command("date +%s.%N")
        told = out.read().decode()
        after = time.time()
        _, out, err = client.exec_command("date -s '2020-01-01'")
        refused = out.channel.recv_exit_status(), err.read().decode()
    finally:
        client.close()
    clock = parse_clock(told)
    assert clock is not None and before - 0.01 <= clock <= after + 0.01, told
    assert len(told.strip().split(".")[1]) == 9                 # %N: nanoseconds, zero-padded
    assert refused[0] != 0 and refused[1].startswith("date: ")


@pytest.mark.parametrize("device", ["rtsw1", "rtsw3"])           # EOS, SONiC
def test_each_counter_sample_carries_the_switch_s_clock_of_its_read(deployed_twin, device: str) -> None:
    nr = init_nornir("dc1", DC1.parent, workers=1, lab=True, address_map=deployed_twin.addresses)
    got: dict[str, object] = {}
    try:
        def task(t):
            state = DeviceState(device, FABRIC.devices[device].platform)
            run = runner_for(t, FABRIC.devices[device])
            got["t0"] = time.time()
            collect_sections(run, FABRIC.devices[device], ["counters", "interfaces", "bgp"], state)
            got["t1"] = time.time()
            collect_sections(run, FABRIC.devices[device], ["counters"], state)
            got["t2"] = time.time()
            got["state"] = state

        nr.filter(name=device).run(task=task, raise_on_error=True)
    finally:
        nr.close_connections()
    state = got["state"]
    assert isinstance(state, DeviceState) and not state.errors, getattr(state, "errors", None)
    first, second = state.counters_first, state.counters_second
    assert first is not None and second is not None and first.clock is not None and second.clock is not None
    assert got["t0"] <= first.clock <= got["t1"] <= second.clock <= got["t2"]   # type: ignore[operator]
    assert isinstance(first.ports.get(FABRIC.devices[device].interfaces[0].name), PortCounters)
