"""`show ip bgp neighbors` text (the layout NAPALM's eos driver parses) reports each neighbor's own timers."""

from __future__ import annotations

import re

from tests.twin_site import TwinSite


def _configured(text: str) -> dict[str, tuple[int, int]]:
    """neighbor -> (hold, keepalive) from the 'Configured hold time' line of its block."""
    out = {}
    for block in text.split("\n\n"):
        peer = re.search(r"BGP neighbor is (\S+),", block)
        timers = re.search(r"Configured hold time is (\d+), keepalive interval is (\d+) seconds", block)
        if peer and timers:
            out[peer.group(1)] = (int(timers.group(1)), int(timers.group(2)))
    return out


def test_one_neighbors_timers_do_not_carry_over_to_the_next(deployed_twin: TwinSite):
    node = deployed_twin.eapi("rtsw1", transport="https")
    node.config(["router bgp 65101", "neighbor 10.254.0.0 timers 7 21"])
    text = node.enable(["show ip bgp neighbors vrf all"], encoding="text")[0]["result"]["output"]
    assert _configured(text) == {"10.254.0.0": (21, 7), "10.254.0.2": (9, 3)}
