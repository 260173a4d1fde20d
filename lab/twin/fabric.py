"""The fabric model: operational state computed from device states, cabling and faults.

Nothing here is canned: links, LLDP, BGP sessions, routes, ping and PFC/ECN counters all follow
from what the devices' configs say (DeviceState), the cables (Topology) and injected Faults.
Each job lives in its own module under lab.twin.model; Fabric composes them.
"""

from __future__ import annotations

from nr_run.lab.twin.model.bgp import BgpSessionView
from nr_run.lab.twin.model.core import Port
from nr_run.lab.twin.model.forwarding import Forwarding, PingResult
from nr_run.lab.twin.model.links import LldpNeighbor
from nr_run.lab.twin.model.qos import Qos, mark_probability, pause_totals, queue_depth
from nr_run.lab.twin.model.route import NextHop, Route

__all__ = ["BgpSessionView", "Fabric", "LldpNeighbor", "NextHop", "PingResult", "Port", "Route", "mark_probability",
           "pause_totals", "queue_depth"]


class Fabric(Forwarding, Qos):
    """Every view of the fabric model over one set of device states, cables and faults."""
