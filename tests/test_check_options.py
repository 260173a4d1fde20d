"""Typed check options: pydantic models refuse unknown keys and bad values, the CLI's --option feeds them."""

from __future__ import annotations

import pytest

from nr_run.cli.main import main
from nr_run.validators.base import InvalidOption, all_checks, select, validate_options
from nr_run.validators.probes import CounterResample, RdmaPairs


def test_defaults_and_overrides_are_typed():
    [counters] = select(["counters"])
    assert (counters.options.interval_s, counters.options.max_pause_pps) == (2.0, 50.0)
    [rdma] = select(["rdma"], {"rdma": {"seconds": "1", "bandwidth": "false", "pattern": "mesh"}})
    assert (rdma.options.seconds, rdma.options.bandwidth, rdma.options.pattern) == (1, False, "mesh")


@pytest.mark.parametrize("options, named", [
    ({"counters": {"interval": 1}}, "counters.interval: unknown option"),
    ({"counters": {"interval_s": 0}}, "counters.interval_s"),
    ({"counters": {"interval_s": "soon"}}, "counters.interval_s"),
    ({"rdma": {"bw_fraction": 1.5}}, "rdma.bw_fraction"),
    ({"rdma": {"pattern": "star"}}, "rdma.pattern"),
    ({"bgp": {"min_prefixes": -1}}, "bgp.min_prefixes"),
    ({"nope": {"x": 1}}, "unknown check 'nope'"),
])
def test_bad_options_are_refused_with_their_name(options, named):
    with pytest.raises(InvalidOption, match=named.replace(".", r"\.")):
        validate_options(options)
    with pytest.raises(InvalidOption):
        select(None, options)


def test_options_of_an_unselected_check_are_still_validated():
    with pytest.raises(InvalidOption, match="rdma.seconds"):
        select(["pfc"], {"rdma": {"seconds": 0}})


def test_every_check_refuses_unknown_keys():
    for name, cls in all_checks().items():
        with pytest.raises(InvalidOption, match=f"{name}.surely_not_an_option: unknown option"):
            cls({"surely_not_an_option": 1})


def test_measurement_windows_become_probes():
    [counters, rdma] = select(["counters", "rdma"], {"counters": {"interval_s": 0.5},
                                                     "rdma": {"seconds": 1, "server_wait_s": 0.05}})
    assert counters.probes() == [CounterResample(0.5)]
    [probe] = rdma.probes()
    assert isinstance(probe, RdmaPairs) and (probe.seconds, probe.server_wait_s, probe.pattern) == (1, 0.05, "auto")
    # equal declarations are one probe run, different ones are not
    from nr_run.validators.helpers import distinct

    twice = [*select(["counters"])[0].probes(), *select(["counters"])[0].probes()]
    assert distinct(twice) == [CounterResample(2.0)]
    assert CounterResample(0.5) != CounterResample(2.0)


@pytest.mark.parametrize("verb", ["check", "compliance"])
@pytest.mark.parametrize("spec, message", [
    ("counters.interval_s=-1", "counters.interval_s"),
    ("counters.nope=1", "counters.nope: unknown option"),
    ("foo.x=1", "unknown check 'foo'"),
    ("interval_s=1", "use CHECK.KEY=VALUE"),
])
def test_cli_bad_option_is_a_usage_error(verb, spec, message, capsys):
    assert main([verb, "--site", "dc1", "--option", spec]) == 3
    assert message in capsys.readouterr().err


def test_cli_options_parse_into_the_check_mapping():
    from nr_run.cli.check import parse_options

    opts = parse_options(["counters.interval_s=0.5", "rdma.pattern=same_rail", "counters.max_pause_pps=10"])
    assert opts == {"counters": {"interval_s": "0.5", "max_pause_pps": "10"}, "rdma": {"pattern": "same_rail"}}
    [counters, rdma] = select(["counters", "rdma"], opts)
    assert counters.probes() == [CounterResample(0.5)] and counters.options.max_pause_pps == 10.0
    assert rdma.options.pattern == "same_rail"
