"""EOS counters come in one eAPI request per collection, the optional LANZ command included; a device that
refuses LANZ costs its data, not a request (eAPI returns the outputs before a failing command)."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from pyeapi.eapilib import CommandError

from benchmarks.twin_calls import latency_calls
from nr_run.platforms.eos import collect as eos
from nr_run.platforms.state import DeviceState
from nr_run.runbooks.inventory import init_nornir
from nr_run.validators.collect import collect_sections, runner_for
from tests.conftest import DC1
from tests.twin_site import FABRIC


def test_counters_of_an_eos_switch_are_one_request(deployed_twin) -> None:
    deployed_twin.fault("latency", ms=150)         # requests of one device at least 150 ms apart: countable
    nr = init_nornir("dc1", DC1.parent, workers=1, lab=True, address_map=deployed_twin.addresses)
    try:
        host = nr.filter(name="rtsw1")
        got: dict[str, DeviceState] = {}

        def task(t):
            state = DeviceState("rtsw1", "eos")
            run = runner_for(t, FABRIC.devices["rtsw1"])
            run([("show version", "json")])          # the connection is open before the measured collection
            since = time.time()
            collect_sections(run, FABRIC.devices["rtsw1"], ["counters"], state)
            got["since"], got["state"] = since, state

        host.run(task=task)
    finally:
        nr.close_connections()
        deployed_twin.clear_faults("latency")
    assert "counters" in got["state"].sections and got["state"].counters_first is not None
    assert latency_calls(deployed_twin.state, got["since"])["rtsw1"] == 1


class _Eapi:
    """pyeapi.Node.run_commands as eAPI answers: `enable` first, a refused command ends the request with the
    outputs before it in the error's data."""

    def __init__(self, refuse: set[str]) -> None:
        self.refuse, self.requests = refuse, []

    def run_commands(self, cmds, encoding="json"):
        self.requests.append(list(cmds))
        outputs = [{}]
        for c in cmds:
            if c in self.refuse:
                raise CommandError(1002, f"CLI command failed: {c}", output=outputs + [{"errors": ["invalid"]}])
            outputs.append({"cmd": c})
        return outputs[1:]


def _runner(device: _Eapi):
    task = SimpleNamespace(host=SimpleNamespace(get_connection=lambda *a: SimpleNamespace(device=device)),
                           nornir=SimpleNamespace(config=None))
    return eos.runner(task)


def test_a_refused_optional_command_keeps_the_others_in_one_request() -> None:
    device = _Eapi({eos.LANZ})
    cmds = eos.section_commands("counters", FABRIC.devices["rtsw1"])
    out = _runner(device)(cmds)
    assert len(device.requests) == 1
    assert eos.LANZ not in out and all(out[c] == {"cmd": c} for c, _ in cmds if c != eos.LANZ)


def test_a_refused_required_command_fails_the_batch() -> None:
    device = _Eapi({"show interfaces counters queue detail"})
    with pytest.raises(CommandError):
        _runner(device)(eos.section_commands("counters", FABRIC.devices["rtsw1"]))
