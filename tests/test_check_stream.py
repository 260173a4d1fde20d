"""A check judged as it collects gives the report of one judging every collected state at the end.

Through the twin, with faults that fail checks of every kind (a cable down, a PFC storm, an MTU drift, a device
that does not answer, a NIC deaf to its switch port's ECN marks): the streamed run (each device judged once read, its state reduced, its connections
closed) and the whole-state run (`keep_states`) find the same findings in the same order, with the same
verdicts, causes, errors, RDMA cells and history. A watch keeps no more objects after many cycles than after
its first few.
"""

from __future__ import annotations

import gc
import itertools
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from nr_run.intent import compile_site
from nr_run.lab.twin.lab import lab_down, lab_fault
from nr_run.platforms.state import DeviceState
from nr_run.runbooks.check import CheckReport, run_checks
from nr_run.runbooks.history import HistoryRecorder, collection_of
from nr_run.runbooks.interrupt import Stop
from nr_run.runbooks.inventory import init_nornir
from nr_run.runbooks.watch import PollSource, Tick, watch
from tests.conftest import REPO
from tests.sitegen import generate_site
from tests.test_rdma_cover_twin import boot
from tests.twin_site import FABRIC, FAST_CHECKS, site_lab_up, ssh_run


def _run(fabric: Any, inventory: Path, addresses: Any, stream: bool) -> tuple[CheckReport, bool]:
    """One check of every check; with `stream`, whether every connection was closed when it returned."""
    nr = init_nornir(fabric.site, inventory, workers=4, lab=True, address_map=addresses)
    try:
        report = run_checks(nr, fabric, None, FAST_CHECKS, keep_states=not stream, keep_connections=not stream)
        closed = all(not h.connections for h in nr.inventory.hosts.values())
    finally:
        nr.close_connections()
    return report, closed


def _outcome(report: CheckReport) -> dict[str, Any]:
    """What the report says, without the measured numbers that move between two runs (counter rates, Gb/s)."""
    d = report.to_dict()
    coll = collection_of(report, "check")
    rdma = d.get("rdma") or {}
    return {
        "findings": [(f["id"], f["passed"], f["severity"], f["cause"], f["declared"], f["target"], f["expected"])
                     for f in d["findings"]],
        "passed": d["passed"], "summary": d["summary"],
        "causes": [(c["id"], c["root"], c["findings"]) for c in d["causes"]],
        "errors": {h: sorted(e) for h, e in d["collection_errors"].items()},
        "ports": {h: sorted(p) for h, p in d["port_counters"].items()},
        "rdma": [(c["src"], c["dst"], c["ping"], c["status"]) for c in rdma.get("cells", [])],
        "history": (coll.devices, coll.observations, {h: sorted(s.ports) for h, s in coll.samples.items()},
                    sorted(coll.sample_times), {h: sorted(e) for h, e in coll.errors.items()},
                    [f.id for f in coll.findings]),
    }


def _same(fabric: Any, inventory: Path, addresses: Any) -> dict[str, Any]:
    whole, _ = _run(fabric, inventory, addresses, stream=False)
    streamed, closed = _run(fabric, inventory, addresses, stream=True)
    assert closed, "a streamed run left connections open"
    assert not streamed.states and whole.states
    expected, got = _outcome(whole), _outcome(streamed)
    for key in expected:
        assert got[key] == expected[key], key
    return got


@pytest.mark.long           # ~25 s: two checks of every check on the dc1 twin, with four faults
def test_dc1_streamed_equals_whole_state_with_faults(deployed_twin) -> None:
    twin = deployed_twin
    uplink = next(i.name for i in FABRIC.devices["rtsw1"].interfaces if i.peer_device == "ctsw2")
    twin.fault("link_down", device="rtsw1", port=uplink)
    twin.fault("pfc_storm", device="rtsw2", port="Ethernet1", priority=3)
    twin.fault("drift", device="rtsw1", lines="interface Ethernet4;mtu 1500")
    twin.fault("unreachable", device="rtsw4")
    # a NIC that stops reacting to the marks its switch port sends: judged against the switch's ECN state
    client = twin.ssh("gpu2")
    try:
        assert ssh_run(client, "echo 0 > /sys/class/net/eth1/ecn/roce_np/enable/3")[0] == 0
    finally:
        client.close()
    got = _same(FABRIC, REPO / "inventory", twin.addresses)
    failed = {i.split("/")[0] for i, ok, *_ in got["findings"] if not ok}
    assert {"interfaces", "cabling", "bgp", "ecmp", "pfc", "host-link"} <= failed, failed
    assert "rtsw4" in got["errors"] and got["rdma"] and not got["passed"]
    assert any(o.kind == "storm" and o.value == "stormed" for o in got["history"][1])


@pytest.mark.long           # ~40 s: a generated 20-device site (EOS and SONiC) booted on its rendered configs
def test_generated_site_streamed_equals_whole_state_with_faults(tmp_path) -> None:
    site = generate_site(tmp_path / "inv", rtsw=8, ctsw=4, nics=4, site="gen20")
    intent = compile_site(site)
    configs = tmp_path / "configs"
    configs.mkdir()
    state = tmp_path / "lab"
    status = site_lab_up(site, state, lambda doc: boot(doc, intent, configs))
    try:
        healthy = _same(intent, site.parent, status["addresses"])
        assert healthy["passed"], [f for f in healthy["findings"] if not f[1]][:5]
        sonic = next(n for n, d in intent.devices.items() if d.role == "rtsw" and d.platform == "sonic")
        up = next(i for i in intent.devices[sonic].interfaces if i.peer_device.startswith("ctsw"))
        lab_fault(state, "link_down", device=sonic, port=up.name)
        eos = next(n for n, d in intent.devices.items() if d.role == "rtsw" and d.platform == "eos")
        lab_fault(state, "unreachable", device=eos)
        broken = _same(intent, site.parent, status["addresses"])
    finally:
        lab_down(state)
    failed = [i for i, ok, *_ in broken["findings"] if not ok]
    assert any(f"/{sonic}/{up.name}/" in i for i in failed) and any(f"/{up.peer_device}/" in i for i in failed)
    assert eos in broken["errors"]


@pytest.mark.long           # ~30 s: eight polling cycles of dc1
def test_watch_retains_nothing_across_cycles(deployed_twin, tmp_path) -> None:
    """Objects alive after each cycle (the collection recorded, the tick reported): after the first cycles,
    which open the connections and the history, the count of device states and the traced memory stay flat."""
    nr = init_nornir("dc1", REPO / "inventory", workers=4, lab=True, address_map=deployed_twin.addresses)
    source = PollSource(nr, FABRIC, FAST_CHECKS)
    recorder = HistoryRecorder(tmp_path / "artifacts", "dc1")
    alive: list[tuple[int, int]] = []

    def on_tick(tick: Tick) -> None:
        assert tick.collection is not None and not tick.error and not tick.record_error
        tick.collection = None          # the caller's reference: what stays is what the watch itself keeps
        gc.collect()
        states = sum(1 for o in gc.get_objects() if isinstance(o, DeviceState))
        alive.append((states, tracemalloc.get_traced_memory()[0]))

    tracemalloc.start()
    try:
        # the clock moves 31 s a call: every cycle overruns its 30 s, so none waits
        made = watch(source, 30.0, 8, Stop(), on_tick, recorder, clock=itertools.count(0, 31).__next__)
    finally:
        tracemalloc.stop()
        recorder.close()
        source.close()
    assert made == 8
    states = [s for s, _ in alive]
    assert states[2:] == [states[2]] * 6, states
    memory = [m for _, m in alive]
    # a leak of one device state per cycle (~10 KiB on dc1) would add more than this over six cycles
    assert max(memory[2:]) - memory[2] < 256 * 1024, memory
