"""EOS link status changes as nr-run reads them: the eAPI collector's interfaces section (linkStatusChanges of
`show interfaces`, pyeapi underneath) and the gNMI sample (OpenConfig carrier-transitions, pygnmi underneath)
both count the first link up and a down and an up per link fault."""

from __future__ import annotations

import time

from nr_run.platforms import registry
from nr_run.platforms.state import DeviceState
from nr_run.platforms.telemetry import collect_counters_gnmi
from nr_run.runbooks.inventory import init_nornir
from tests.conftest import REPO

EOS, PORT = "rtsw1", "Ethernet1"


def _interfaces(twin) -> DeviceState:
    nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=twin.addresses).filter(name=EOS)
    collector = registry.get("eos").collector
    state = DeviceState(EOS, "eos")

    def task(task):
        out = collector.runner(task)(collector.section_commands("interfaces", None))  # type: ignore[arg-type]
        collector.apply_section("interfaces", out, state, None, time.monotonic())

    assert not nr.run(task=task).failed
    return state


def _gnmi(twin) -> int | None:
    nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=twin.addresses).filter(name=EOS)
    got = collect_counters_gnmi(nr)
    assert got.sources[EOS] == "gnmi"
    return got.samples[EOS].ports[PORT].link_status_changes


def test_link_fault_adds_link_changes_polled_and_over_gnmi(deployed_twin):
    assert _interfaces(deployed_twin).interfaces[PORT].link_changes == 1 == _gnmi(deployed_twin)
    deployed_twin.fault("link_down", device="ctsw1", port="Ethernet1")        # the far end of rtsw1 Ethernet1
    assert _interfaces(deployed_twin).interfaces[PORT].link_changes == 2 == _gnmi(deployed_twin)
    deployed_twin.clear_faults("link_down")
    state = _interfaces(deployed_twin)
    assert state.interfaces[PORT].link_changes == 3 == _gnmi(deployed_twin)
    assert state.interfaces["Ethernet2"].link_changes == 1
