"""Normalized device state: what every per-platform parser produces and every check reads.

Sections are collected independently; `DeviceState.sections` records which ones were filled and
`DeviceState.errors` why a section could not be collected (a check needing it then fails loudly
instead of evaluating an empty section).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


def as_int(value: Any) -> int | None:
    """int(value), or None for anything a device prints that is not a number."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# Every section a check may require. "counters" are sampled twice (counters_first/counters_second).
SECTIONS = ("interfaces", "lldp", "bgp", "routes", "pfc", "qos", "buffers", "counters", "nics", "rdma")


@dataclass
class InterfaceState:
    name: str
    admin_up: bool
    oper_up: bool
    speed_mbps: int | None = None
    mtu: int | None = None
    alias: str | None = None        # the name the port goes by on the wire (SONiC's LLDP port ID), if another
    # oper status changes since boot, where the platform counts them (EOS linkStatusChanges, SONiC flap_count):
    # a flap between two polls shows here even when both polls see the link up
    link_changes: int | None = None


@dataclass
class LldpNeighbor:
    local_port: str
    remote_device: str
    remote_port: str


@dataclass
class BgpPeerState:
    address: str
    remote_asn: int | None
    state: str                       # "Established", "Active", "Idle", ...
    prefixes_received: int = 0


@dataclass
class NextHop:
    ip: str
    interface: str = ""


@dataclass
class RouteState:
    prefix: str
    protocol: str
    next_hops: list[NextHop] = field(default_factory=list)


@dataclass
class WatchdogState:
    """PFC watchdog as configured on one port (enabled=False when absent).

    `action` is platform-neutral: "drop" (the stormed queue drops) or "forward" (it keeps forwarding, whatever
    the OS calls it); an action with no neutral equivalent keeps the device's word, "" when disabled.
    """

    enabled: bool
    action: str = ""
    detection_ms: int | None = None
    restoration_ms: int | None = None


@dataclass
class StormState:
    """Watchdog status of one (port, priority/queue)."""

    port: str
    priority: int
    stormed: bool
    storms_detected: int = 0


@dataclass
class EcnQueueState:
    port: str
    queue: int
    enabled: bool
    min_bytes: int | None = None
    max_bytes: int | None = None
    max_mark_probability: int | None = None


DscpMapScope = Literal["complete", "configured"]


@dataclass
class QosPortState:
    """Classification and scheduling of one port.

    `dscp_map` says what `dscp_to_tc` holds: "complete" when it is the effective map of all 64 code points,
    "configured" when it holds only the entries configured on top of the OS default map.
    """

    port: str
    trust: str | None                 # "dscp", "cos" or None (untrusted)
    dscp_to_tc: dict[int, int] = field(default_factory=dict)
    schedulers: dict[int, str] = field(default_factory=dict)   # queue -> "strict" | "dwrr"
    dscp_map: DscpMapScope = "configured"


@dataclass
class BufferPgState:
    """A lossless ingress priority group and its profile (SONiC)."""

    port: str
    pgs: list[int]
    profile: str
    xoff_bytes: int | None = None
    xon_bytes: int | None = None
    size_bytes: int | None = None


@dataclass
class PortCounters:
    """Cumulative counters of one port. Per-priority PFC maps may be empty when the platform only
    reports per-port totals (EOS `show priority-flow-control counters`)."""

    pfc_rx: dict[int, int] = field(default_factory=dict)
    pfc_tx: dict[int, int] = field(default_factory=dict)
    pfc_rx_total: int = 0
    pfc_tx_total: int = 0
    queue_drops: dict[int, int] = field(default_factory=dict)
    ecn_marks: dict[int, int] = field(default_factory=dict)
    # time paused per priority (microseconds), where the platform counts it (SONiC's SAI pause duration):
    # a storm's harm is the time a port could not send, not its frame count
    pfc_rx_pause_us: dict[int, int] = field(default_factory=dict)
    pfc_tx_pause_us: dict[int, int] = field(default_factory=dict)
    # peak occupancy per egress queue (bytes) since the device last cleared its watermarks: a level, not a count
    queue_watermark_bytes: dict[int, int] = field(default_factory=dict)
    # link status changes of the port since boot (InterfaceState.link_changes; over gNMI, carrier-transitions)
    link_status_changes: int | None = None


@dataclass
class CounterSample:
    taken_at: float                    # time.monotonic() of the sample
    ports: dict[str, PortCounters] = field(default_factory=dict)
    # counter kinds ("ecn", ...) the device could not report, with why: a check fails them as not collected
    unreadable: dict[str, str] = field(default_factory=dict)
    # the device's own clock (epoch seconds) read next to its PFC counters, where the platform reports one
    clock: float | None = None


def sample_window_s(first: CounterSample, second: CounterSample) -> float:
    """Seconds between two samples, on the device's clock when both read it: the client's stamps also carry
    its own queueing (a thread waiting behind other devices' parsing, a longer first batch), which over a
    one-second window moves a rate by several per cent. The client's stamps otherwise."""
    if first.clock is not None and second.clock is not None and second.clock > first.clock:
        return second.clock - first.clock
    return second.taken_at - first.taken_at


@dataclass
class NicState:
    name: str
    oper_up: bool
    mtu: int | None
    addresses: list[str] = field(default_factory=list)          # "10.10.0.1/31"
    pfc_priorities: list[int] | None = None                     # None: could not be read
    trust: str | None = None                                    # the first selector of the DCB APP trust order
    dscp_to_prio: dict[int, int] | None = None                  # the DCB APP dscp-prio table
    ecn_rp: list[int] | None = None                             # priorities with the DCQCN reaction point on
    ecn_np: list[int] | None = None                             # ... and with the notification point on
    dcqcn: dict[str, int] = field(default_factory=dict)         # DCQCN parameters by their mlx5 sysfs name
    roce_tos: int | None = None                                 # RDMA CM default ToS of the NIC's port
    unreadable: dict[str, str] = field(default_factory=dict)    # knob -> why it could not be read


@dataclass
class RdmaProbe:
    """One source NIC -> destination NIC test: jumbo ping with DF, then an RDMA write pair."""

    src_device: str
    src_nic: str
    dst_device: str
    dst_nic: str
    dst_ip: str
    ping_ok: bool | None = None
    ping_loss_pct: float | None = None
    ping_detail: str = ""
    bw_gbps: float | None = None
    bw_detail: str = ""


@dataclass
class DeviceState:
    device: str
    platform: str
    sections: set[str] = field(default_factory=set)
    errors: dict[str, str] = field(default_factory=dict)
    interfaces: dict[str, InterfaceState] = field(default_factory=dict)
    lldp: list[LldpNeighbor] = field(default_factory=list)
    bgp: dict[str, BgpPeerState] = field(default_factory=dict)
    routes: dict[str, RouteState] = field(default_factory=dict)
    pfc_priorities: dict[str, list[int]] = field(default_factory=dict)     # port -> enabled priorities
    watchdog: dict[str, WatchdogState] = field(default_factory=dict)
    storms: list[StormState] = field(default_factory=list)
    ecn: dict[tuple[str, int], EcnQueueState] = field(default_factory=dict)
    qos: dict[str, QosPortState] = field(default_factory=dict)
    buffer_pgs: dict[str, list[BufferPgState]] = field(default_factory=dict)
    counters_first: CounterSample | None = None
    counters_second: CounterSample | None = None
    nics: dict[str, NicState] = field(default_factory=dict)
    rdma: list[RdmaProbe] = field(default_factory=list)
    # the ports whose counters are judged when not every port's are (None: all); each sample reads these
    counter_ports: tuple[str, ...] | None = None

    def add_counter_sample(self, sample: CounterSample) -> None:
        """The first collection fills counters_first, a later one (the resample) counters_second."""
        if self.counters_first is None:
            self.counters_first = sample
        else:
            self.counters_second = sample

    def missing(self, sections: tuple[str, ...] | list[str]) -> dict[str, str]:
        """Required sections that are absent, with the reason."""
        return {s: self.errors.get(s, "not collected") for s in sections if s not in self.sections}
