"""The gNMI decoders on update paths and values as the platforms publish them, built by hand: which queues and
ports count, and what a missing field leaves unread rather than zero."""

from __future__ import annotations

from nr_run.platforms.eos.telemetry import decode as eos_decode
from nr_run.platforms.sonic.telemetry import ECN_FIELD
from nr_run.platforms.sonic.telemetry import decode as sonic_decode

QOS = "openconfig:/qos/interfaces/interface[interface-id=Ethernet1]/output/queues/queue[name={}]/state/{}"


def test_eos_reads_unicast_queues_ethernet_flaps_and_per_priority_pfc() -> None:
    values = {
        QOS.format("Ethernet1-3", "dropped-pkts"): 4,
        QOS.format("Ethernet1-3", "ecn-marked-pkts"): 90,
        QOS.format("Ethernet1-3", "max-queue-len"): 180_000,
        QOS.format("Ethernet1-MC-3", "dropped-pkts"): 77,             # multicast: not a unicast queue
        "openconfig:/interfaces/interface[name=Ethernet1]/state/counters/carrier-transitions": 6,
        "openconfig:/interfaces/interface[name=Management1]/state/counters/carrier-transitions": 2,
        "eos_native:/Smash/counters/pfc/interface[name=Ethernet1]/priority[id=3]/rxFrames": 500,
        "eos_native:/Smash/counters/pfc/interface[name=Ethernet1]/priority[id=3]/txFrames": 20,
        "eos_native:/Smash/counters/pfc/interface[name=Ethernet1]/priority[id=4]/rxFrames": 1,
    }
    sample = eos_decode(values, {}, 12.5)
    assert sample.taken_at == 12.5 and list(sample.ports) == ["Ethernet1"]
    pc = sample.ports["Ethernet1"]
    assert (pc.queue_drops, pc.ecn_marks, pc.queue_watermark_bytes) == ({3: 4}, {3: 90}, {3: 180_000})
    assert pc.link_status_changes == 6
    assert (pc.pfc_rx, pc.pfc_tx, pc.pfc_rx_total, pc.pfc_tx_total) == ({3: 500, 4: 1}, {3: 20}, 501, 20)


def test_sonic_maps_aliases_back_and_leaves_unpolled_ecn_unread() -> None:
    context = {"PORT": {"Ethernet0": {"alias": "etp1"}, "Ethernet4": {"alias": "etp2"}}}
    values = {
        "COUNTERS/Ethernet*": {"etp1": {"SAI_PORT_STAT_PFC_3_RX_PKTS": "70", "SAI_PORT_STAT_PFC_3_TX_PKTS": "5",
                                        "SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US": "9000"}},
        "COUNTERS/Ethernet*/Queues": {"etp1:3": {"SAI_QUEUE_STAT_DROPPED_PACKETS": "2", ECN_FIELD: "40"},
                                      "etp1:9": {"SAI_QUEUE_STAT_DROPPED_PACKETS": "8"},     # beyond UC0-UC7
                                      "etp2:3": {"SAI_QUEUE_STAT_DROPPED_PACKETS": "1"}},
    }
    sample = sonic_decode(values, context, 1.0)
    assert list(sample.ports) == ["Ethernet0", "Ethernet4"]
    e0, e4 = sample.ports["Ethernet0"], sample.ports["Ethernet4"]
    assert (e0.pfc_rx[3], e0.pfc_tx[3], e0.pfc_rx_total, e0.pfc_rx_pause_us) == (70, 5, 70, {3: 9000})
    assert e0.pfc_tx_pause_us == {}                                   # the ASIC does not count it: not 0
    assert (e0.queue_drops, e0.ecn_marks) == ({3: 2}, {3: 40})
    assert (e4.queue_drops, e4.ecn_marks) == ({3: 1}, {})
    assert "ecn" in sample.unreadable
