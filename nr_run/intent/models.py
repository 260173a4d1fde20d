"""The compiled intent: one DeviceIntent per host, the single source of truth downstream.

Templates only format these values; validators compare observed state with them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Headroom(Frozen):
    """Lossless PG headroom of one port (bytes), from nr_run.intent.headroom."""

    xoff_bytes: int
    xon_bytes: int
    xon_offset_bytes: int
    size_bytes: int
    profile_name: str


class Interface(Frozen):
    name: str
    role: Literal["fabric", "host"]
    peer_device: str
    peer_port: str
    speed_mbps: int
    cable_length_m: int
    mtu: int
    address: str          # "10.254.0.1/31"
    ip: str               # "10.254.0.1"
    peer_ip: str
    description: str
    fec: str = "rs"
    lanes: str = ""       # SONiC PORT lanes, "0,1,2,3,4,5,6,7"
    alias: str = ""
    index: int = 0
    lossless_priorities: list[int] = []
    headroom: Headroom | None = None


class BgpPeer(Frozen):
    address: str
    remote_asn: int
    description: str
    peer_device: str
    local_address: str
    local_port: str
    bfd: bool


class Bgp(Frozen):
    asn: int
    router_id: str
    peer_group: str
    maximum_paths: int
    ecmp: int
    keepalive: int
    holdtime: int
    maximum_routes: int
    peers: list[BgpPeer]


class Scheduler(Frozen):
    queue: int
    type: Literal["strict", "dwrr"]
    weight: int | None = None


class Ecn(Frozen):
    enabled: bool
    queue: int
    min_bytes: int
    max_bytes: int
    min_kbytes: int
    max_kbytes: int
    max_mark_probability: int


class Watchdog(Frozen):
    enabled: bool
    detection_ms: int
    restoration_ms: int
    poll_ms: int
    action: str
    detection_s: str = ""      # the same times in seconds ("0.2"), as EOS takes them
    restoration_s: str = ""
    poll_s: str = ""


class Roce(Frozen):
    """RoCE QoS profile, all maps complete (DSCP 0-63, TC 0-7)."""

    profile: str
    trust: str
    dscp_to_tc: dict[int, int]          # full map, 64 entries
    dscp_overrides: dict[int, int]      # the non-default entries only (what EOS configures)
    tc_to_queue: dict[int, int]
    tc_to_pg: dict[int, int]
    pfc_priority_to_queue: dict[int, int]
    lossless_priorities: list[int]
    lossless_queues: list[int]
    cnp_dscp: int
    cnp_tc: int
    cnp_queue: int
    ecn: Ecn
    schedulers: list[Scheduler]
    watchdog: Watchdog


class BufferPool(Frozen):
    name: str
    type: Literal["ingress", "egress"]
    mode: Literal["static", "dynamic"]
    size: int
    xoff: int | None = None


class Buffers(Frozen):
    """SONiC traditional buffer model: pools sized from the per-port headroom."""

    pools: list[BufferPool]
    cell_bytes: int


class Nic(Frozen):
    """A GPU server RoCE NIC (the host end of a rail link)."""

    name: str
    address: str
    ip: str
    gateway: str
    mtu: int
    rail: int
    peer_device: str
    peer_port: str
    speed_mbps: int
    lossless_priorities: list[int]
    trust: str
    routes: list[str] = []     # prefixes reached through this NIC's rail gateway (source-routed per NIC)


class DeviceIntent(Frozen):
    name: str
    site: str
    role: Literal["ctsw", "rtsw", "gpu"]
    platform: Literal["eos", "sonic", "linux"]
    mgmt_address: str                    # "172.20.20.21"
    mgmt_prefix: str = ""                # "172.20.20.21/24"
    mgmt_gateway: str = ""
    model: str
    sonic_platform: str = ""
    su: int | None = None
    index: int
    asn: int | None = None
    loopback: str | None = None          # "10.255.0.1/32"
    router_id: str | None = None
    host_block: str | None = None        # RTSW: the summary of its host /31s, advertised into BGP
    interfaces: list[Interface] = []
    bgp: Bgp | None = None
    roce: Roce
    buffers: Buffers | None = None
    nics: list[Nic] = []


class Link(Frozen):
    """One cabled pair (sorted endpoints)."""

    a_device: str
    a_port: str
    b_device: str
    b_port: str
    role: Literal["fabric", "host"]
    speed_mbps: int
    cable_length_m: int


class FabricIntent(Frozen):
    site: str
    lab: bool
    devices: dict[str, DeviceIntent]
    links: list[Link]

    def switches(self) -> list[DeviceIntent]:
        return [d for d in self.devices.values() if d.role != "gpu"]

    def servers(self) -> list[DeviceIntent]:
        return [d for d in self.devices.values() if d.role == "gpu"]
