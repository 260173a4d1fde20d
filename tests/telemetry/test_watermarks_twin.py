"""Queue watermarks read the way an operator's tools read them: a congestion fault with a standing depth raises
the polled watermark on EOS (LANZ over eAPI, pyeapi) and on SONiC (watermarkstat over SSH), and over gNMI on EOS
(pygnmi, OpenConfig max-queue-len); the peak stays once the congestion ends and a clear command resets it; the
normalized counters (nr-run's collectors through Nornir) carry the same peaks."""

from __future__ import annotations

import time

from pygnmi.client import gNMIclient

from nr_run.platforms.telemetry import GNMI, collect_counters_gnmi
from nr_run.platforms.transport import set_options
from nr_run.runbooks.inventory import init_nornir
from tests.conftest import REPO
from tests.twin_site import ssh_run

EOS, EOS_PORT = "rtsw1", "Ethernet2"
SONIC, SONIC_PORT = "rtsw3", "Ethernet16"
DEPTH = 180_000          # between dc1's ECN thresholds: a standing queue that marks, never drops


def _lanz(node) -> dict[tuple[str, int], int]:
    out = node.enable(["show queue-monitor length"])[0]["result"]
    assert out["lanzEnabled"] is True
    return {(e["interface"], e["trafficClass"]): e["queueLength"] for e in out["entryList"]}


def _sonic_watermarks(client, which: str = "watermark") -> dict[str, list[str]]:
    rc, text = ssh_run(client, f"show queue {which} unicast")
    assert rc == 0, text
    lines = text.splitlines()
    assert lines[0] == "Egress shared pool occupancy per unicast queue:"
    assert lines[1].split() == ["Port"] + [f"UC{q}" for q in range(8)]
    return {row.split()[0]: row.split()[1:] for row in lines[3:] if row.strip()}


def _polled(twin) -> dict:
    """Every switch's counters through its polling collector (gNMI closed, so the CLI fallback runs)."""
    nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=twin.addresses)
    for host in nr.inventory.hosts.values():
        set_options(host, GNMI, port=1)
    got = collect_counters_gnmi(nr, timeout_s=1)
    assert all(src.startswith("poll (") for src in got.sources.values()), got.sources
    return got.samples


def test_eos_congestion_raises_the_lanz_and_gnmi_watermark_until_cleared(deployed_twin):
    node = deployed_twin.eapi(EOS)
    assert (EOS_PORT, 3) not in _lanz(node)
    deployed_twin.fault("congestion", device=EOS, port=EOS_PORT, queue=3, depth=DEPTH, **{"for": "0.3s"})
    time.sleep(0.5)                                   # over: the peak stays
    assert _lanz(node)[(EOS_PORT, 3)] == DEPTH
    ep = deployed_twin.addresses[EOS]
    path = f"openconfig:/qos/interfaces/interface[interface-id={EOS_PORT}]/output/queues/queue[name={EOS_PORT}-3]"
    with gNMIclient(target=("127.0.0.1", ep["gnmi_port"]), username="admin", password="admin",
                    path_cert=ep["tls_ca"]) as gc:
        got = gc.get(path=[path + "/state/max-queue-len"])
    assert got["notification"][0]["update"][0]["val"] == DEPTH
    sample = _polled(deployed_twin)[EOS].ports
    assert sample[EOS_PORT].queue_watermark_bytes == {q: DEPTH if q == 3 else 0 for q in range(8)}
    assert set(sample["Ethernet1"].queue_watermark_bytes.values()) == {0}
    node.enable(["clear queue-monitor length statistics"])
    assert (EOS_PORT, 3) not in _lanz(node)
    assert _polled(deployed_twin)[EOS].ports[EOS_PORT].queue_watermark_bytes[3] == 0


def test_sonic_user_watermark_rises_and_clears_apart_from_the_persistent_one(deployed_twin):
    client = deployed_twin.ssh(SONIC, password="YourPaSsWoRd")
    try:
        assert _sonic_watermarks(client)[SONIC_PORT][3] == "0"
        deployed_twin.fault("congestion", device=SONIC, port=SONIC_PORT, queue=3, depth=DEPTH, **{"for": "0.3s"})
        time.sleep(0.5)
        assert _sonic_watermarks(client)[SONIC_PORT][3] == str(DEPTH)
        assert _sonic_watermarks(client, "persistent-watermark")[SONIC_PORT][3] == str(DEPTH)
        assert _polled(deployed_twin)[SONIC].ports[SONIC_PORT].queue_watermark_bytes[3] == DEPTH
        assert ssh_run(client, "sonic-clear queue watermark unicast")[0] == 0
        assert _sonic_watermarks(client)[SONIC_PORT][3] == "0"
        assert _sonic_watermarks(client, "persistent-watermark")[SONIC_PORT][3] == str(DEPTH)
        assert _polled(deployed_twin)[SONIC].ports[SONIC_PORT].queue_watermark_bytes[3] == 0
        # a storm received on the port holds the paused priority's queue full: the peak jumps past the depth
        deployed_twin.fault("pfc_storm", device=SONIC, port=SONIC_PORT, priority=3, **{"for": "0.2s"})
        time.sleep(0.3)
        assert int(_sonic_watermarks(client)[SONIC_PORT][3]) > DEPTH
        # dc1's 202511 image has the pause history (an older image refuses it: test_sonic_release_counters.py)
        rc, text = ssh_run(client, "show pfc counters --history")
        assert rc == 0 and "PFC3" in text, text
    finally:
        client.close()
