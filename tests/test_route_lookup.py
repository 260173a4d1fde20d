"""Route lookups per prefix: the commands carry only valid prefixes, and their replies parse to those routes."""

from __future__ import annotations

import json

import pytest

from nr_run.platforms.eos import collect as eos
from nr_run.platforms.sonic import collect as sonic
from nr_run.platforms.state import DeviceState
from nr_run.validators.base import required_prefixes, select
from nr_run.validators.checks.ecmp import PER_CLASS, destinations
from tests.sitegen import generate_site


@pytest.mark.parametrize("collector", [eos, sonic])
def test_a_prefix_that_is_no_network_never_reaches_a_command(collector) -> None:
    with pytest.raises(ValueError):
        collector.route_commands(["10.0.0.1/32'; reboot; '"])


def test_sonic_lookups_share_vtysh_invocations_and_parse_each_answer() -> None:
    prefixes = [f"10.254.{i // 250}.{i % 250}/32" for i in range(sonic.LOOKUPS_PER_COMMAND + 1)]
    cmds = sonic.route_commands(prefixes)
    assert len(cmds) == 2 and all(sonic._LOOKUP.match(c) for c in cmds)
    hop = {"ip": "10.128.0.0", "interfaceName": "Ethernet0", "active": True}
    found = {prefixes[0]: [{"prefix": prefixes[0], "protocol": "bgp", "selected": True, "nexthops": [hop]}]}
    # FRR prints one object per -c; an absent prefix is "{}" or a "% Network not in table" line
    out = {cmds[0]: json.dumps(found) + "\n{}\n% Network not in table\n", cmds[1]: "{}\n"}
    state = DeviceState("rtsw2", "sonic")
    sonic.apply_routes(out, prefixes, state)
    assert list(state.routes) == [prefixes[0]] and state.routes[prefixes[0]].next_hops[0].ip == "10.128.0.0"
    assert "routes" in state.sections


def test_eos_lookup_keeps_the_asked_prefix_only() -> None:
    reply = {"vrfs": {"default": {"routes": {"10.254.0.9/32": {"routeType": "eBGP", "vias": [
        {"nexthopAddr": "10.128.0.2", "interface": "Ethernet1"}]}}}}}
    state = DeviceState("rtsw1", "eos")
    eos.apply_routes({"show ip route vrf default 10.254.0.9/32": reply,
                      "show ip route vrf default 10.254.0.10/32": {"vrfs": {"default": {"routes": {}}}}},
                     ["10.254.0.9/32", "10.254.0.10/32"], state)
    assert list(state.routes) == ["10.254.0.9/32"]


def test_the_routes_judged_per_device_do_not_grow_with_the_site(tmp_path) -> None:
    """Every source judges PER_CLASS destinations of each class, and every destination is judged by some source."""
    from nr_run.intent import compile_site

    checks = select(["ecmp"])
    for rtsw in (64, 512):
        fabric = compile_site(generate_site(tmp_path / str(rtsw), rtsw=rtsw, ctsw=8, nics=8, site=f"g{rtsw}"))
        sources = [d for d in fabric.devices.values() if d.role == "rtsw"]
        plans = {d.name: required_prefixes(checks, d, fabric) for d in sources}
        assert {len(p or []) for p in plans.values()} == {PER_CLASS}
        judged = {d.name for s in sources for d in destinations(s, fabric)}
        assert judged == {d.name for d in sources}
