"""SONiC counters over gNMI: the telemetry container's COUNTERS_DB virtual paths.

Paths (sonic-net/SONiC doc/system-telemetry/grpc_telemetry.md "Virtual path"; sonic-gnmi
sonic_data_client/virtual_db.go pathTransFuncTbl), prefix target COUNTERS_DB:
  COUNTERS/Ethernet*          per port (keyed by the PORT alias when it has one): SAI_PORT_STAT_PFC_n_RX_PKTS,
                              SAI_PORT_STAT_PFC_n_TX_PKTS, SAI_PORT_STAT_PFC_n_{RX,TX}_PAUSE_DURATION_US
                              (n = 0..7; the durations where the ASIC counts them)
  COUNTERS/Ethernet*/Queues   per "<alias>:<queue>": SAI_QUEUE_STAT_DROPPED_PACKETS and, while the
                              WRED_ECN_QUEUE counter group is polled, SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS
  CONFIG_DB PORT              read once to map the aliases back to the port names (Ethernet0)
Only unicast queues 0-7 are read, as `show queue counters` UC0-UC7 (the polling collector's source).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nr_run.platforms.state import CounterSample, PortCounters
from nr_run.platforms.telemetry import TelemetryProfile

GNMI_PORT = 8080         # the telemetry container's port in SONiC's own examples (--port 8080)
PATHS = ("COUNTERS/Ethernet*", "COUNTERS/Ethernet*/Queues")
ECN_FIELD = "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS"


def _aliases(context: Mapping[str, Any]) -> dict[str, str]:
    table: Mapping[str, Any] = next((v for k, v in context.items() if k.strip("/") == "PORT"), {})
    return {str(f.get("alias") or name): name for name, f in (table or {}).items() if isinstance(f, dict)}


def decode(values: Mapping[str, Any], context: Mapping[str, Any], taken_at: float) -> CounterSample:
    """{update path: JSON value} -> the CounterSample the CLI collector builds from the same counters."""
    names = _aliases(context)
    ports: dict[str, PortCounters] = {}
    unreadable: dict[str, str] = {}
    port_stats = values.get("COUNTERS/Ethernet*") or {}
    for alias, fields in port_stats.items():
        pc = ports.setdefault(names.get(alias, alias), PortCounters())
        for prio in range(8):
            pc.pfc_rx[prio] = int(fields.get(f"SAI_PORT_STAT_PFC_{prio}_RX_PKTS", 0))
            pc.pfc_tx[prio] = int(fields.get(f"SAI_PORT_STAT_PFC_{prio}_TX_PKTS", 0))
            for direction, into in (("RX", pc.pfc_rx_pause_us), ("TX", pc.pfc_tx_pause_us)):
                duration = fields.get(f"SAI_PORT_STAT_PFC_{prio}_{direction}_PAUSE_DURATION_US")
                if duration is not None:
                    into[prio] = int(duration)
        pc.pfc_rx_total, pc.pfc_tx_total = sum(pc.pfc_rx.values()), sum(pc.pfc_tx.values())
    for key, fields in (values.get("COUNTERS/Ethernet*/Queues") or {}).items():
        alias, _, queue = key.rpartition(":")
        if not queue.isdigit() or int(queue) > 7:
            continue
        pc = ports.setdefault(names.get(alias, alias), PortCounters())
        pc.queue_drops[int(queue)] = int(fields.get("SAI_QUEUE_STAT_DROPPED_PACKETS", 0))
        if ECN_FIELD in fields:
            pc.ecn_marks[int(queue)] = int(fields[ECN_FIELD])
        else:
            unreadable.setdefault("ecn", f"{ECN_FIELD} absent (counterpoll wredqueue off?)")
    for pc in ports.values():
        pc.queue_drops, pc.ecn_marks = dict(sorted(pc.queue_drops.items())), dict(sorted(pc.ecn_marks.items()))
    return CounterSample(taken_at, dict(sorted(ports.items())), unreadable)


telemetry = TelemetryProfile(default_port=GNMI_PORT, paths=PATHS, decode=decode, target="COUNTERS_DB",
                             context=(("CONFIG_DB", "PORT"),))
