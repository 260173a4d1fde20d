"""Twin counters over time, read through the devices' own clients (pyeapi, SSH): a timed storm's counters rise,
stop rising when it ends and keep their counts (also once the fault is cleared); the PFC watchdog detects and
restores a repeating storm by the configured detection (200 ms) and restoration (400 ms) times; link faults
add link status changes."""

from __future__ import annotations

import re
import time

import napalm
import pyeapi

from nr_run.lab.twin.lab import Lab, lab_fault
from nr_run.runbooks.render import render_device
from tests.conftest import DC1
from tests.twin_site import FABRIC, site_topology, ssh_run, wait_until

EOS, EOS_PORT = "rtsw1", "Ethernet1"
SONIC, SONIC_PORT = "rtsw3", "Ethernet16"


def _pfc_rx(node, port: str = EOS_PORT) -> tuple[int, int]:
    c = node.enable(["show priority-flow-control counters"])[0]["result"]["interfaceCounters"][port]
    return c["rxFrames"], c["priorities"]["3"]["rxFrames"]


def _storm_detected(node) -> bool:
    pfc = node.enable(["show priority-flow-control"])[0]["result"]["interfaces"][EOS_PORT]
    return bool(pfc["watchdog"]["stormDetected"]["3"])


def test_timed_storm_rises_then_stops_and_its_counts_stay(deployed_twin):
    node = deployed_twin.eapi(EOS)
    assert _pfc_rx(node) == (0, 0)
    start = time.time()
    deployed_twin.fault("pfc_storm", device=EOS, port=EOS_PORT, priority=3, **{"for": "1.5s"})
    first = _pfc_rx(node)
    time.sleep(0.5)
    rising = _pfc_rx(node)
    assert 0 < first[0] < rising[0] and rising[0] == rising[1]            # all of it on priority 3
    assert _storm_detected(node)                                          # held past the 200 ms detection time
    time.sleep(max(0.0, start + 1.5 + 0.5 - time.time()))                 # the storm is over (and restored)
    stopped = _pfc_rx(node)
    time.sleep(0.4)
    assert _pfc_rx(node) == stopped and stopped[0] > rising[0]
    assert not _storm_detected(node)
    # the far end sent those pauses: its tx count stopped too, at a non-zero value
    peer = deployed_twin.eapi("ctsw1").enable(["show priority-flow-control counters"])[0]["result"]
    assert peer["interfaceCounters"]["Ethernet1"]["txFrames"] > 0
    # clearing the ended fault keeps the counts, as a switch keeps its counters after a storm
    assert deployed_twin.clear_faults("pfc_storm") == 1
    assert _pfc_rx(node) == stopped


def test_cleared_storm_keeps_its_counts_and_a_new_one_adds_to_them(deployed_twin):
    node = deployed_twin.eapi(EOS)
    deployed_twin.fault("pfc_storm", device=EOS, port=EOS_PORT, priority=3)
    time.sleep(0.3)
    deployed_twin.clear_faults("pfc_storm")
    kept = _pfc_rx(node)
    time.sleep(0.3)
    assert _pfc_rx(node) == kept and kept[0] > 0
    deployed_twin.fault("pfc_storm", device=EOS, port=EOS_PORT, priority=3)
    time.sleep(0.2)
    assert _pfc_rx(node)[0] > kept[0]


def _pfcwd_row(client, port: str) -> list[str]:
    out = ssh_run(client, "pfcwd show stats")[1]
    line = next(ln for ln in out.splitlines() if ln.split() and ln.split()[0] == f"{port}:3")
    return line.split()


def test_sonic_watchdog_counts_follow_a_repeating_storm(deployed_twin):
    client = deployed_twin.ssh(SONIC, password="YourPaSsWoRd")
    try:
        assert _pfcwd_row(client, SONIC_PORT)[1:3] == ["operational", "0/0"]
        # 0.5 s on (past the 200 ms detection), 0.6 s off (past the 400 ms restoration): a storm per cycle
        # times from the storm's own start as the lab recorded it; each read aims at the middle of the span
        # in which its answer holds (detected at +0.2 s of a window, restored 0.4 s after the window ends)
        start = float(deployed_twin.fault("pfc_storm", device=SONIC, port=SONIC_PORT, priority=3,
                                          on="0.5s", off="0.6s")["since"])
        time.sleep(max(0.0, start + 0.45 - time.time()))          # stormed from +0.2 until +0.9
        row = _pfcwd_row(client, SONIC_PORT)
        assert row[1:3] == ["stormed", "1/0"], row
        time.sleep(max(0.0, start + 2.65 - time.time()))          # cycles at 0, 1.1, 2.2 s: third from +2.4
        row = _pfcwd_row(client, SONIC_PORT)
        detected, restored = map(int, row[2].split("/"))
        assert (detected, restored) == (3, 2) and row[1] == "stormed", row
        deployed_twin.clear_faults("pfc_storm")
        wait_until(lambda: _pfcwd_row(client, SONIC_PORT)[1] == "operational", 2)
        assert _pfcwd_row(client, SONIC_PORT)[2] == "3/3"
        # the pause counters stopped with the storm and stay
        counts = ssh_run(client, "show pfc counters")[1]
        assert re.search(rf"^\s*{SONIC_PORT}\s+0\s+0\s+0\s+[1-9][\d,]*", counts, re.M), counts
    finally:
        client.close()


def test_link_faults_add_link_status_changes(deployed_twin):
    node = deployed_twin.eapi(EOS)

    def changes() -> int:
        intf = node.enable([f"show interfaces {EOS_PORT}"])[0]["result"]["interfaces"][EOS_PORT]
        return int(intf["interfaceCounters"]["linkStatusChanges"])

    before = changes()
    deployed_twin.fault("link_down", device="ctsw1", port="Ethernet1")      # the far end of rtsw1 Ethernet1
    assert changes() == before + 1
    deployed_twin.clear_faults("link_down")
    assert changes() == before + 2


def _marks(node, port: str) -> int:
    ecn = node.enable(["show qos interfaces ecn counters queue"])[0]["result"]["intfQueueCounters"][port]
    return int(ecn["queueCounters"]["3"])


def test_ecn_marks_follow_the_configured_thresholds(deployed_twin):
    # dc1: queue 3 marks from 150 KB (0 %) to 1,500 KB (20 %), every packet above
    node = deployed_twin.eapi(EOS)
    for port, depth in (("Ethernet1", 100_000), ("Ethernet2", 825_000), ("Ethernet3", 2_000_000)):
        deployed_twin.fault("congestion", device=EOS, port=port, queue=3, depth=depth)
    start = [_marks(node, p) for p in ("Ethernet1", "Ethernet2", "Ethernet3")]
    time.sleep(0.5)
    grown = [_marks(node, p) - s for p, s in zip(("Ethernet1", "Ethernet2", "Ethernet3"), start, strict=True)]
    assert grown[0] == 0 and 0 < grown[1] < grown[2], grown       # below the minimum nothing is marked
    assert 5 < grown[2] / grown[1] < 15                           # 100 % vs 10 % marking: about 10x


def test_counts_survive_a_twin_restart(tmp_path):
    topology = site_topology(DC1, tmp_path / "clab")

    def counts(lab: Lab) -> int:
        ep = lab.addresses[EOS]
        node = pyeapi.client.Node(pyeapi.client.connect(transport="https", host="127.0.0.1", port=ep["port"],
                                                        username="admin", password="admin", timeout=20))
        return _pfc_rx(node)[0]

    lab = Lab(topology, tmp_path / "state", base_port=0)
    lab.start(control=True)
    try:
        drv = napalm.get_network_driver("eos")("127.0.0.1", "admin", "admin", optional_args={
            "transport": "https", "port": lab.addresses[EOS]["port"]})
        drv.open()
        drv.load_replace_candidate(config=render_device(FABRIC.devices[EOS]))
        drv.commit_config()
        drv.close()
        lab_fault(tmp_path / "state", "pfc_storm", device=EOS, port=EOS_PORT, priority=3, **{"for": "0.3s"})
        time.sleep(0.5)
        lab.clear_faults("pfc_storm")
        before = counts(lab)
        assert before > 0
    finally:
        lab.stop()
    again = Lab(topology, tmp_path / "state", base_port=0)
    again.start()
    try:
        assert counts(again) == before
    finally:
        again.stop()
