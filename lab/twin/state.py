"""Platform-neutral device state: what each platform's config interpreter produces.

The fabric model (lab.twin.fabric) computes operational state (links, LLDP, BGP, routes, ping,
PFC/ECN counters) from these objects only, so EOS, SONiC and Linux devices interoperate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nr_run.lab.twin.policy import RoutingPolicy


@dataclass
class EcnQueue:
    """ECN (WRED marking) settings of one egress queue."""

    min_bytes: int
    max_bytes: int
    max_mark_probability: int = 100


@dataclass
class Watchdog:
    """PFC watchdog settings (effective on a port: port values, else the device defaults)."""

    enabled: bool = False
    detection_ms: int = 0
    restoration_ms: int = 0
    poll_ms: int = 0
    action: str = "drop"


@dataclass
class IfState:
    """One data-plane interface (Ethernet port, host NIC)."""

    name: str
    admin_up: bool = True
    mtu: int = 1500
    ipv4: str | None = None                 # "10.254.0.1/31"; None when unnumbered or switched
    description: str = ""
    speed_mbps: int | None = None           # None: the cable/port speed
    lanes: int | None = None                # serdes lanes the port runs on; None: the speed's usual count
    pfc_enabled: bool = False
    pfc_priorities: set[int] = field(default_factory=set)   # lossless (no-drop) priorities
    trust_dscp: bool = False
    dcqcn: set[int] = field(default_factory=set)            # host NIC: priorities with DCQCN RP and NP on
    watchdog: Watchdog | None = None        # None: not enabled on the port
    ecn: dict[int, EcnQueue] = field(default_factory=dict)  # queue -> ECN settings
    strict_queues: set[int] = field(default_factory=set)
    queue_weights: dict[int, int] = field(default_factory=dict)  # queue -> DWRR weight / bandwidth %
    qos_profile: str | None = None
    lldp_port_id: str | None = None         # the LLDP port ID sent out of this port; None: the interface name


@dataclass
class QosGlobal:
    """Device-wide QoS settings."""

    dscp_to_tc: dict[int, int] = field(default_factory=dict)   # only the configured entries
    tc_to_queue: dict[int, int] = field(default_factory=dict)
    watchdog_default: Watchdog = field(default_factory=Watchdog)
    ecn_allow_non_ect: bool = False


@dataclass
class BgpNeighborConfig:
    remote_as: int | None = None
    description: str = ""
    shutdown: bool = False
    bfd: bool = False
    peer_group: str | None = None
    activated: bool = True                  # ipv4 unicast active (EOS: `no bgp default ipv4-unicast`)
    keepalive_s: int = 60                   # configured timers (EOS and FRR default to 60 / 180 s)
    hold_s: int = 180
    route_map_in: str | None = None         # routes learned from this peer pass it (a missing map accepts none)


@dataclass
class BgpConfig:
    asn: int
    router_id: str | None = None
    maximum_paths: int = 1
    ecmp: int | None = None
    redistribute_connected: bool = False
    redistribute_connected_route_map: str | None = None   # route-map on `redistribute connected`
    redistribute_static: bool = False       # advertised static routes (SONiC bgpcfgd: STATIC_ROUTE, tag 1)
    networks: list[str] = field(default_factory=list)          # "10.255.0.1/32" advertised if present
    neighbors: dict[str, BgpNeighborConfig] = field(default_factory=dict)
    aggregates: dict[str, bool] = field(default_factory=dict)   # `aggregate-address` prefix -> summary-only


@dataclass
class StaticRoute:
    prefix: str                             # "0.0.0.0/0"
    next_hop: str = ""                      # "10.10.0.0"; empty for a blackhole
    blackhole: bool = False                 # discard what no more specific route takes (a summary)
    advertise: bool = False                 # redistributed into BGP (with BgpConfig.redistribute_static)
    source: str | None = None               # policy route: only for packets from this address
                                            # (Linux `ip rule from SRC lookup <rail table>`)


@dataclass
class DeviceState:
    """Everything the fabric model needs from one device's configuration."""

    hostname: str
    loopbacks: dict[str, str] = field(default_factory=dict)    # "Loopback0" -> "10.255.0.1/32"
    interfaces: dict[str, IfState] = field(default_factory=dict)
    qos: QosGlobal = field(default_factory=QosGlobal)
    bgp: BgpConfig | None = None
    static_routes: list[StaticRoute] = field(default_factory=list)
    routing_policy: RoutingPolicy | None = None   # prefix-lists and route-maps (lab.twin.policy)
    ip_routing: bool = True                 # False: a host (no forwarding between interfaces)
    system_mac: str = ""                    # the chassis MAC every view reports (LLDP chassis ID, show version)
