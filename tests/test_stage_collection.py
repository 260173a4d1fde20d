"""Stage post-checks read the stage's devices whole and, of their neighbours, only what the stage can change.

A neighbour holds the far end of every link and BGP session the stage touched, so its link state (ports,
LLDP, sessions, PFC storms and agreement, counters) is read and judged for the links toward the stage; its own
configuration (QoS/ECN, buffers) cannot change through a commit elsewhere and is left to the baseline and the
final whole-site check. The twin tests go through the product's Nornir connections and the lab control API.
"""

from __future__ import annotations

import time

from nr_run.intent import compile_site
from nr_run.lab.twin.lab import lab_fault
from nr_run.platforms.state import BgpPeerState, DeviceState, InterfaceState
from nr_run.runbooks.deploy_checks import STAGE_CHECKS, StageGate, stage_selection
from nr_run.validators.base import evaluate_all, required_sections, select
from tests.conftest import DC1, REPO
from tests.twin_site import FAST_CHECKS, run_json

FABRIC = compile_site(DC1)
RUNNING_SONIC = "show runningconfiguration all"


def _port_to(device: str, peer: str) -> str:
    return next(i.name for i in FABRIC.devices[device].interfaces if i.peer_device == peer)


# ---------------------------------------------------------------- what a stage reads (pure)

def test_a_stage_reads_its_devices_whole_and_its_neighbours_link_state_only():
    checks = select(STAGE_CHECKS)
    sel = stage_selection(FABRIC, ["rtsw1"], checks)
    assert sorted(sel) == ["ctsw1", "ctsw2", "gpu1", "gpu2", "rtsw1"]
    assert sel["rtsw1"].checks == {"bgp", "buffers", "cabling", "counters", "ecn", "interfaces", "pfc"}
    assert sel["rtsw1"].peers is None
    for ctsw in ("ctsw1", "ctsw2"):
        assert sel[ctsw].checks == {"bgp", "cabling", "counters", "interfaces", "pfc"}
        assert sel[ctsw].peers == {"rtsw1"}
        assert required_sections(checks, FABRIC.devices[ctsw], sel[ctsw].checks) == \
            {"interfaces", "lldp", "bgp", "pfc", "counters"}
    # a CTSW stage: every RTSW is a neighbour; SONiC's QoS and buffers (its running config) are not read there
    sel = stage_selection(FABRIC, ["ctsw1"], checks)
    assert sorted(sel) == ["ctsw1", "rtsw1", "rtsw2", "rtsw3", "rtsw4"]
    assert "qos" in required_sections(checks, FABRIC.devices["rtsw3"])
    assert not {"qos", "buffers"} & required_sections(checks, FABRIC.devices["rtsw3"], sel["rtsw3"].checks)


def test_own_configuration_checks_are_those_whose_sections_are_all_own_config():
    own = {c.name for c in select(None) if c.judges_own_config()}
    assert own == {"buffers", "ecn"}


def _state(name: str, down: set[str]) -> DeviceState:
    """A switch whose intended ports are up except `down`, every intended session Established."""
    device = FABRIC.devices[name]
    state = DeviceState(name, device.platform)
    state.interfaces = {i.name: InterfaceState(i.name, True, i.name not in down, i.speed_mbps, i.mtu)
                        for i in device.interfaces}
    state.bgp = {p.address: BgpPeerState(p.address, p.remote_asn, "Established", 1) for p in device.bgp.peers}
    state.sections = {"interfaces", "bgp"}
    return state


def test_a_neighbour_is_judged_only_on_its_links_toward_the_stage():
    """ctsw1's ports to rtsw1 and rtsw2 are both down: a stage of rtsw1 answers for the first only, and the
    devices outside the stage's scope are not judged at all (no 'not in the run' findings)."""
    checks = select(["interfaces", "bgp", "ecn"])
    states = {"ctsw1": _state("ctsw1", {_port_to("ctsw1", "rtsw1"), _port_to("ctsw1", "rtsw2")}),
              "rtsw1": _state("rtsw1", {_port_to("rtsw1", "ctsw1")})}
    whole = [f for f in evaluate_all(checks, FABRIC, states) if not f.passed]
    assert {(f.device, f.peer_device) for f in whole if f.check == "interfaces"} >= \
        {("ctsw1", "rtsw1"), ("ctsw1", "rtsw2"), ("rtsw1", "ctsw1")}
    sel = stage_selection(FABRIC, ["rtsw1"], checks)
    found = evaluate_all(checks, FABRIC, {**states, "ctsw2": _state("ctsw2", set())}, sel)
    assert {f.device for f in found} <= set(sel)
    failed = {(f.check, f.device, f.peer_device) for f in found if not f.passed}
    assert ("interfaces", "ctsw1", "rtsw1") in failed and ("interfaces", "rtsw1", "ctsw1") in failed
    assert not any(peer == "rtsw2" for _, _, peer in failed)
    # ecn on the stage's device (no QoS state given: a failure), never on its neighbours
    assert {f.device for f in found if f.check == "ecn"} == {"rtsw1"}
    assert {f.peer_device for f in found if f.device in ("ctsw1", "ctsw2")} == {"rtsw1"}
    # a neighbour that could not be read is reported as such, whatever its far ends
    unread = DeviceState("ctsw2", "eos")
    unread.errors = {"interfaces": "TimeoutError: no answer", "bgp": "TimeoutError: no answer"}
    found = evaluate_all(checks, FABRIC, {**states, "ctsw2": unread}, sel)
    assert {(f.check, f.target) for f in found if f.device == "ctsw2"} == \
        {("interfaces", "section:interfaces"), ("bgp", "section:bgp")}


# ---------------------------------------------------------------- the gate on the twin

def _deployment(twin, configs: dict[str, str], gate: StageGate):
    from nr_run.runbooks.deploy import Deployment
    from nr_run.runbooks.inventory import init_nornir
    from nr_run.runbooks.progress import DeviceProgress
    from nr_run.runbooks.records import RunRecords

    nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=twin.addresses)
    return nr, Deployment(nr, FABRIC, configs, RunRecords(twin.artifacts, "dc1", "deploy"),
                          DeviceProgress(None, list(configs)), revert_in=60, gate=gate)


def _canary(twin, configs: dict[str, str], gate: StageGate, fault: str):
    """A dry run, then a commit with a canary stage of one device, gated by `gate`; the `fault` kind the gate
    injects is cleared afterwards. The deploy's report."""
    nr, run = _deployment(twin, configs, gate)
    try:
        run.dry_run()
        run.commit(canary=1, batch="25%")
    finally:
        nr.close_connections()
        twin.clear_faults(fault)
    return run.report


def test_a_stage_that_takes_down_a_session_fails_on_the_neighbours_side_too(deployed_twin):
    """rtsw1 commits a wrong remote-as toward ctsw1: the twin takes the session down on both ends; the gate
    reads ctsw1's side of it and the stage is rolled back."""
    from nr_run.runbooks.render import render_device

    before = deployed_twin.snapshot()
    good = render_device(FABRIC.devices["rtsw1"])
    peer = next(p for p in FABRIC.devices["rtsw1"].bgp.peers if p.peer_device == "ctsw1")
    line = f"neighbor {peer.address} remote-as {peer.remote_asn}"
    assert line in good
    nr, run = _deployment(deployed_twin, {"rtsw1": good.replace(line, f"neighbor {peer.address} remote-as 65199")},
                          StageGate(FABRIC, FAST_CHECKS))
    run.dry_run()
    run.commit(canary=1, batch="25%")
    nr.close_connections()
    report = run.report
    assert report.devices["rtsw1"].state == "rolled back" and report.stopped_at == "canary"
    failed = {(f.check, f.device, f.peer_device) for f in report.checks}
    assert ("bgp", "ctsw1", "rtsw1") in failed and ("bgp", "rtsw1", "ctsw1") in failed
    assert all(f.peer_device == "rtsw1" for f in report.checks if f.device != "rtsw1")
    assert deployed_twin.snapshot() == before


def test_a_storm_on_the_neighbours_end_during_the_stage_fails_it_and_only_that_link_counts(deployed_twin):
    """A PFC storm starts on ctsw1's port toward the canary while the stage is checked, and another one on
    ctsw1's port toward rtsw2 (outside the stage): only the first is the stage's, and it rolls the stage back."""
    from nr_run.runbooks.render import render_device

    toward_stage, elsewhere = _port_to("ctsw1", "rtsw1"), _port_to("ctsw1", "rtsw2")
    detect_s = FABRIC.devices["ctsw1"].roce.watchdog.detection_ms / 1000 + 0.1

    class StormDuringStage(StageGate):
        def stage(self, nr, stage, at_intent):
            for port in (toward_stage, elsewhere):
                lab_fault(deployed_twin.state, "pfc_storm", device="ctsw1", port=port, priority=3)
            time.sleep(detect_s)     # the storm lasts past ctsw1's watchdog detection time
            return super().stage(nr, stage, at_intent)

    config = render_device(FABRIC.devices["rtsw1"]).replace("description P2P_ctsw1_Ethernet1",
                                                            "description P2P_ctsw1_Ethernet1_canary")
    report = _canary(deployed_twin, {"rtsw1": config}, StormDuringStage(FABRIC, FAST_CHECKS), "pfc_storm")
    assert report.devices["rtsw1"].state == "rolled back", report.message
    on_ctsw1 = {(f.check, f.port, f.peer_device) for f in report.checks if f.device == "ctsw1"}
    assert ("pfc", toward_stage, "rtsw1") in on_ctsw1
    assert not any(f.port == elsewhere or f.peer_device == "rtsw2" for f in report.checks)


def test_a_neighbours_own_config_drift_is_left_to_the_baseline_and_the_final_check(deployed_twin, capsys):
    """rtsw3 (SONiC) has drifted ECN thresholds before the deploy; deploying ctsw1 (rtsw3 is its neighbour)
    does not read rtsw3's running config in the stage, rolls out, and the final check reports the drift as
    pre-existing."""
    import json

    twin = deployed_twin
    twin.push("rtsw3", json.dumps({"WRED_PROFILE": {"ROCE_LOSSLESS": {"green_min_threshold": "999999"}}}))
    twin.fault("drift", device="ctsw1", lines=["interface Ethernet1", "description drifted"])
    already = len(twin.asked("rtsw3"))
    rc, report = run_json(twin, capsys, "deploy", "--commit", "--yes", "--hosts", "ctsw1",
                          "--confirm-timeout", "60")
    states = {d["device"]: d["state"] for d in report["devices"]}
    assert states == {"ctsw1": "confirmed"}, report["message"]
    assert [s["devices"] for s in report["stages"]] == [["ctsw1"]] and report["checks"] == []
    assert report["baseline"]["failed"] > 0 and report["baseline"]["summary"]["by_check"]["ecn"]["failed"] > 0
    old = {(f["check"], f["device"]) for f in report["final_check"]["preexisting"]}
    assert ("ecn", "rtsw3") in old and report["final_check"]["new"] == []
    assert rc == 1 and "pre-existing" in report["message"]
    # rtsw3's running config (QoS, buffers) read by the baseline and by the final check, not by the stage
    read = twin.asked("rtsw3")[already:]
    assert read.count(RUNNING_SONIC) == 2
    assert read.count("show lldp table") == 3     # its link state is read by the stage too


def test_a_stage_reads_a_sonic_neighbours_counters_of_its_links_toward_the_stage_only(deployed_twin):
    """ctsw1's stage judges rtsw3 (SONiC) on its port toward ctsw1 only, so rtsw3's queue and WRED tables are
    asked for that port alone, in both samples. Lossless drops starting there during the stage still fail it;
    drops on rtsw3's port toward ctsw2 are not the stage's and are not read."""
    from nr_run.runbooks.render import render_device

    toward_stage, elsewhere = _port_to("rtsw3", "ctsw1"), _port_to("rtsw3", "ctsw2")

    class DropsDuringStage(StageGate):
        def stage(self, nr, stage, at_intent):
            for port in (toward_stage, elsewhere):
                lab_fault(deployed_twin.state, "lossless_drops", device="rtsw3", port=port, queue=3)
            return super().stage(nr, stage, at_intent)

    good = render_device(FABRIC.devices["ctsw1"])
    line = "description P2P_rtsw3_Ethernet0"
    assert line in good
    already = len(deployed_twin.asked("rtsw3"))
    report = _canary(deployed_twin, {"ctsw1": good.replace(line, line + "_canary")},
                     DropsDuringStage(FABRIC, FAST_CHECKS), "lossless_drops")
    assert report.devices["ctsw1"].state == "rolled back", report.message
    on_rtsw3 = {(f.check, f.port, f.kind) for f in report.checks if f.device == "rtsw3"}
    assert ("counters", toward_stage, "lossless-drops") in on_rtsw3
    assert not any(f.port == elsewhere for f in report.checks)
    read = deployed_twin.asked("rtsw3")[already:]
    for table in ("show queue counters", "show queue wredcounters"):
        assert read.count(f"{table} {toward_stage}") == 2, read       # the stage's two samples
        assert f"{table} {elsewhere}" not in read
    assert read.count("show pfc counters") >= 2       # the PFC tables take no port: read whole


def test_sonic_counters_of_named_ports_only_for_a_few_valid_port_names():
    from nr_run.platforms.sonic.collect import COMMANDS, counter_commands

    device = FABRIC.devices["rtsw3"]
    assert counter_commands(device, ["Ethernet8", "Ethernet0", "Ethernet8"]) == [
        "date +%s.%N", "show pfc counters", "show queue counters Ethernet0", "show queue counters Ethernet8",
        "show queue wredcounters Ethernet0", "show queue wredcounters Ethernet8", "show queue watermark unicast",
        "show pfc counters --history"]
    # a name that is not a SONiC port never reaches a command line; more ports than pay off: whole tables
    for ports in (["Ethernet0; reboot"], ["Ethernet0 -n asic1"], ["etp1"], ["Ethernet0", "Ethernet8", "Ethernet16"],
                  []):
        assert counter_commands(device, ports) == COMMANDS["counters"], ports
