"""EOS counters over gNMI: OpenConfig queue counters plus EOS native per-priority PFC counters.

Paths (the same ones lab/twin/gnmi/paths.py serves):
  openconfig:/interfaces/interface[name=P]/state/counters/carrier-transitions
      openconfig-interfaces: link status changes of the port (EOS' linkStatusChanges); link_status_changes
  openconfig:/qos/interfaces/interface[interface-id=P]/output/queues/queue[name=P-Q]/state/
      {dropped-pkts, ecn-marked-pkts, max-queue-len}
      openconfig-qos output queue state (transmit/dropped pkts and octets, ecn-marked-pkts/-octets,
      max-queue-len, avg-queue-len: the leaves as ygot generates them from openconfig-qos in
      openconfig/functional-translators ciscoxr/ciscoxrqos/yang/openconfig). EOS names a unicast queue
      "<interface>-<queue>" ("Ethernet1-3"; multicast "Ethernet1-MC-3"): openconfig/functional-translators
      arista/aristaqosaggregatecounters, which parses exactly that for EOS 4.33-4.35.
      UNVERIFIED: that EOS fills ecn-marked-pkts and max-queue-len (no public sample): a queue without them
      reports no ECN marks or watermark rather than zero.
  eos_native:/Smash/counters/pfc/interface[name=P]/priority[id=N]/{rxFrames, txFrames}     UNVERIFIED
      Arista publishes its state tree under origin eos_native (counters under /Smash/counters/..., e.g.
      /Smash/counters/ethIntf/<agent>/current/counter in openconfig/functional-translators
      arista/aristamacseccounters), but no public sample of per-priority PFC counters was found; the path
      mirrors the eAPI field names, and only this module and the twin name it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from nr_run.platforms.state import CounterSample, PortCounters
from nr_run.platforms.telemetry import TelemetryProfile, split_path

GNMI_PORT = 6030         # EOS's default gNMI port (management api gnmi, transport grpc default)
PATHS = (
    "openconfig:/interfaces/interface/state/counters/carrier-transitions",
    "openconfig:/qos/interfaces/interface/output/queues/queue/state",
    "eos_native:/Smash/counters/pfc",
)
# OpenConfig queue leaf -> the PortCounters map it fills
QUEUE_LEAVES = {"dropped-pkts": "queue_drops", "ecn-marked-pkts": "ecn_marks", "max-queue-len": "queue_watermark_bytes"}
_UNICAST = re.compile(r"^(?P<port>.+)-(?P<queue>\d+)$")


def _queue(port: str, name: str) -> int | None:
    """The unicast queue number of an EOS queue name ("Ethernet1-3" -> 3; multicast "Ethernet1-MC-3" -> None)."""
    m = _UNICAST.match(name)
    if not m or m["port"] != port:          # a multicast queue's prefix is "<port>-MC", not the port
        return None
    return int(m["queue"])


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
        elif names[:1] == ["interfaces"] and names[-1] == "carrier-transitions":
            port = keys["interface"]["name"]
            if port.startswith("Ethernet"):
                ports.setdefault(port, PortCounters()).link_status_changes = int(value)
        elif names[:2] == ["qos", "interfaces"] and names[-1] in QUEUE_LEAVES:
            port = keys["interface"]["interface-id"]
            queue = _queue(port, keys["queue"]["name"])
            if queue is not None:
                getattr(ports.setdefault(port, PortCounters()), QUEUE_LEAVES[names[-1]])[queue] = int(value)
    for pc in ports.values():
        pc.pfc_rx_total, pc.pfc_tx_total = sum(pc.pfc_rx.values()), sum(pc.pfc_tx.values())
        for attr in ("pfc_rx", "pfc_tx", *QUEUE_LEAVES.values()):
            setattr(pc, attr, dict(sorted(getattr(pc, attr).items())))
    return CounterSample(taken_at, dict(sorted(ports.items())))


telemetry = TelemetryProfile(default_port=GNMI_PORT, paths=PATHS, decode=decode)
