"""EOS counters over gNMI: OpenConfig queue drops plus EOS native PFC and ECN counters.

Paths (the same ones lab/twin/gnmi/paths.py serves):
  openconfig:/qos/interfaces/interface[interface-id=P]/output/queues/queue[name=Q]/state/dropped-pkts
      openconfig-qos-interfaces.yang, grouping qos-interface-queue-state (transmit-pkts, transmit-octets,
      dropped-pkts, dropped-octets); that model has no ECN-mark or per-priority PFC leaf, hence the native paths.
  eos_native:/Smash/counters/pfc/interface[name=P]/priority[id=N]/{rxFrames, txFrames}     UNVERIFIED
  eos_native:/Smash/counters/ecn/interface[name=P]/queue[id=Q]/markedPackets               UNVERIFIED
The native paths are UNVERIFIED (no public sample of Arista's PFC/ECN state paths was found): they mirror the
eAPI field names the polling collector reads, and only this module and the twin name them.
Queue names "0".."7" are UNVERIFIED too (EOS may name its OpenConfig queues otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nr_run.platforms.state import CounterSample, PortCounters
from nr_run.platforms.telemetry import TelemetryProfile, split_path

GNMI_PORT = 6030         # EOS's default gNMI port (management api gnmi, transport grpc default)
PATHS = (
    "openconfig:/qos/interfaces/interface/output/queues/queue/state/dropped-pkts",
    "eos_native:/Smash/counters/pfc",
    "eos_native:/Smash/counters/ecn",
)


def decode(values: Mapping[str, Any], context: Mapping[str, Any], taken_at: float) -> CounterSample:
    """{update path: value} -> the CounterSample the eAPI collector builds from the same counters."""
    ports: dict[str, PortCounters] = {}
    for path, value in values.items():
        elems = split_path(path)
        names = [n for n, _ in elems]
        keys = {n: k for n, k in elems}
        if names[:3] == ["Smash", "counters", "pfc"] and len(names) == 6:
            pc = ports.setdefault(keys["interface"]["name"], PortCounters())
            prio = int(keys["priority"]["id"])
            (pc.pfc_rx if names[5] == "rxFrames" else pc.pfc_tx)[prio] = int(value)
        elif names[:3] == ["Smash", "counters", "ecn"] and names[-1] == "markedPackets":
            ports.setdefault(keys["interface"]["name"], PortCounters()).ecn_marks[int(keys["queue"]["id"])] = int(value)
        elif names[:2] == ["qos", "interfaces"] and names[-1] == "dropped-pkts":
            pc = ports.setdefault(keys["interface"]["interface-id"], PortCounters())
            pc.queue_drops[int(keys["queue"]["name"])] = int(value)
    for pc in ports.values():
        pc.pfc_rx_total, pc.pfc_tx_total = sum(pc.pfc_rx.values()), sum(pc.pfc_tx.values())
        pc.pfc_rx, pc.pfc_tx = dict(sorted(pc.pfc_rx.items())), dict(sorted(pc.pfc_tx.items()))
        pc.queue_drops, pc.ecn_marks = dict(sorted(pc.queue_drops.items())), dict(sorted(pc.ecn_marks.items()))
    return CounterSample(taken_at, dict(sorted(ports.items())))


telemetry = TelemetryProfile(default_port=GNMI_PORT, paths=PATHS, decode=decode)
