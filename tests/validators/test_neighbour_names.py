"""Checks read real neighbours: a SONiC switch's LLDP port ID is its PORT alias, EOS prints short names."""

from __future__ import annotations

from nr_run.intent import compile_site
from nr_run.platforms.state import LldpNeighbor
from nr_run.validators.base import evaluate_all, select
from tests.validators.healthy import healthy_states

FABRIC = compile_site("inventory/dc1")


def _cabling_failures(states):
    return [f for f in evaluate_all(select(["cabling"]), FABRIC, states) if not f.passed]


def test_sonic_alias_and_eos_short_names_map_to_intent_ports():
    states = healthy_states(FABRIC)
    # ctsw1 hears rtsw3 (SONiC, Arista-7060X6-64PE-O128S2) announce its alias: Ethernet0 is "etp1a" (master)
    ctsw1 = states["ctsw1"]
    toward = next(i for i in FABRIC.devices["ctsw1"].interfaces if i.peer_device == "rtsw3")
    ctsw1.lldp = [LldpNeighbor(n.local_port, n.remote_device, "etp1a" if n.remote_device == "rtsw3"
                               else n.remote_port) for n in ctsw1.lldp]
    assert toward.peer_port == "Ethernet0"
    # rtsw3 hears the EOS spines by their short names (Et3 for Ethernet3)
    rtsw3 = states["rtsw3"]
    rtsw3.lldp = [LldpNeighbor(n.local_port, n.remote_device, n.remote_port.replace("Ethernet", "Et"))
                  if n.remote_device.startswith("ctsw") else n for n in rtsw3.lldp]
    assert _cabling_failures(states) == []


def test_an_alias_of_the_wrong_port_is_still_miscabled():
    states = healthy_states(FABRIC)
    states["ctsw1"].lldp = [LldpNeighbor(n.local_port, n.remote_device, "etp2a" if n.remote_device == "rtsw3"
                                         else n.remote_port) for n in states["ctsw1"].lldp]
    [f] = _cabling_failures(states)
    assert (f.device, f.expected, f.observed) == ("ctsw1", "rtsw3:Ethernet0", "rtsw3:Ethernet8")
