"""EOS refuses a malformed command with its parser's text and keeps a well-formed one in its canonical form,
seen through pyeapi as a script sees it (one row of the twin's syntax table per case)."""

from __future__ import annotations

import pyeapi
import pytest

from tests.twin_site import TwinSite

REFUSED = [
    (["interface Ethernet1"], "mtu 9999", "Invalid input (at token 1: '9999')"),
    (["interface Ethernet1"], "ip address 10.0.0.1/33", "Invalid input (at token 2: '10.0.0.1/33')"),
    (["interface Ethernet1"], "ip address 10.0.0.1", "Incomplete command"),
    (["interface Ethernet1"], "shutdown now", "Invalid input (at token 1: 'now')"),
    (["interface Ethernet1"], "priority-flow-control priority 8 no-drop", "Invalid input (at token 2: '8')"),
    (["interface Ethernet1"], "qos trust ip", "Invalid input (at token 2: 'ip')"),
    (["interface Ethernet1"], "speed 800g-3", "Invalid input (at token 1: '800g-3')"),
    (["router bgp 65000"], "maximum-paths 4 ecmp 700", "Invalid input (at token 3: '700')"),
    (["router bgp 65000"], "neighbor 10.0.0.1 remote-as 0", "Invalid input (at token 3: '0')"),
    ([], "qos map dscp 64 to traffic-class 3", "Invalid input (at token 3: '64')"),
    ([], "ip route 10.0.0.0/40 10.0.0.1", "Invalid input (at token 2: '10.0.0.0/40')"),
    (["ip prefix-list PL"], "seq 10 permit 10.0.0.0/24 ge 16", "Invalid input (at token 5: '16')"),
]


def _error(node: pyeapi.client.Node, lines: list[str]) -> str:
    try:
        node.config(lines)
    except pyeapi.eapilib.CommandError as e:
        return str(e)
    return ""


@pytest.mark.parametrize(("mode", "line", "message"), REFUSED, ids=[r[1] for r in REFUSED])
def test_malformed_lines_are_refused_with_eos_text(twin: TwinSite, mode: list[str], line: str, message: str):
    assert message in _error(twin.eapi("ctsw1"), mode + [line])
    assert line not in twin.running("ctsw1")


def test_well_formed_lines_are_kept_canonical(twin: TwinSite):
    node = twin.eapi("ctsw1")
    assert _error(node, ["interface Ethernet1", "ip address 10.9.0.1 255.255.255.254", "speed 800g-8",
                         "priority-flow-control priority 3 no-drop"]) == ""
    running = twin.running("ctsw1")
    assert "ip address 10.9.0.1/31" in running          # EOS stores the mask form as a prefix length
    assert "speed 800g-8" in running
