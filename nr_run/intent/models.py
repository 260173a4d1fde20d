"""The compiled intent: one DeviceIntent per host, the single source of truth downstream.

Platform-neutral: port lanes and aliases, time formats, buffer pool sizes and per-platform capabilities
are derived by the platform plug-ins from the facts kept here. Validators compare observed state with them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints

from nr_run.intent.nic import NicQos

# A platform plug-in name (an entry point of the nr_run.platforms group); safe in file names and messages.
PLATFORM_PATTERN = r"^[a-z][a-z0-9_]{0,31}$"
PlatformName = Annotated[str, StringConstraints(pattern=PLATFORM_PATTERN)]


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Headroom(Frozen):
    """Lossless PG headroom of one port (bytes), from nr_run.intent.headroom."""

    xoff_bytes: int
    xon_bytes: int
    xon_offset_bytes: int
    size_bytes: int


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
    slot: int             # 0-based front-panel slot of the port on its hardware
    lossless_priorities: list[int] = []
    headroom: Headroom | None = None


class BgpPeer(Frozen):
    address: str
    remote_asn: int
    description: str
    peer_device: str
    local_address: str
    local_port: str
    peer_platform: PlatformName  # the peer's platform: whether BFD can come up depends on both ends' configs


class Bgp(Frozen):
    asn: int
    router_id: str
    peer_group: str
    bfd: bool             # BFD wanted on the sessions (where both ends' platforms can configure it)
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


class Roce(Frozen):
    """RoCE QoS profile, all maps complete (DSCP 0-63, TC 0-7)."""

    profile: str
    trust: str
    dscp_to_tc: dict[int, int]          # full map, 64 entries
    dscp_overrides: dict[int, int]      # the DSCPs the RoCE profile lists explicitly
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


class Buffers(Frozen):
    """A shared-buffer model nr-run configures (hardware with a buffer cell size); sizes are the platform's."""

    cell_bytes: int
    headroom_bytes: int   # lossless headroom of every port and lossless priority, summed


class HardwareFacts(Frozen):
    """Neutral facts of the device's hardware model (fabric.yaml `hardware.<name>`)."""

    name: str                 # the hardware key in fabric.yaml
    platform_id: str = ""     # the vendor's hardware platform string (ONIE platform), if it has one
    asic: str = ""            # switch ASIC family, e.g. "th" (Broadcom Tomahawk)
    lanes_per_port: int = 0   # SerDes lanes per front-panel port
    speed_mbps: int = 0       # native speed of a front-panel port (all its lanes)
    sku_dir: str = ""         # the operator's folder of HWSKU folders (absolute), searched before the shipped ones


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
    qos: NicQos | None = None  # what the NIC runs for RoCE (nr_run.intent.nic)


class DeviceIntent(Frozen):
    name: str
    site: str
    role: Literal["ctsw", "rtsw", "gpu", "atsw"]
    tier: int = 0                        # 0 servers, 1 leaves, 2 spines, 3 aggregation (nr_run.intent.shapes)
    zone: int | None = None              # multi-zone: the zone of a server, leaf or spine
    rack: str | None = None              # power and space: the rack it stands in
    power_kw: float = 0.0                # its hardware's typical draw
    platform: PlatformName
    mgmt_address: str                    # "172.20.20.21"
    mgmt_prefix: str = ""                # "172.20.20.21/24"
    mgmt_gateway: str = ""
    mgmt_vrf: str = "default"            # the VRF of the management interface ("default": none)
    model: str
    hardware: HardwareFacts
    su: int | None = None
    index: int
    asn: int | None = None
    loopback: str | None = None          # "10.255.0.1/32"
    router_id: str | None = None
    host_block: str | None = None        # RTSW: the summary of its host /31s, advertised into BGP
    zone_summary: str | None = None      # multi-zone CTSW: its zone's host blocks, one prefix toward the ATSWs
    zone_summaries: list[str] = []       # multi-zone ATSW: every zone's summary (it keeps none of their specifics)
    interfaces: list[Interface] = []
    bgp: Bgp | None = None
    roce: Roce
    buffers: Buffers | None = None
    nics: list[Nic] = []
    rails: list[str] = []                # server: the compute NIC ports meant to be on rails (cabled or not)


class Link(Frozen):
    """One cabled pair (sorted endpoints)."""

    a_device: str
    a_port: str
    b_device: str
    b_port: str
    role: Literal["fabric", "host"]
    speed_mbps: int
    cable_length_m: int


class PowerBudget(Frozen):
    """fabric.yaml `power:` (the budgets analyze compares each rack and zone with)."""

    rack_kw: float
    racks_per_zone: int | None = None
    zone_kw: float | None = None


class FabricIntent(Frozen):
    site: str
    lab: bool
    shape: Literal["star", "clos", "multi-zone"] = "clos"
    cross_zone: Literal["lossless", "lossy"] = "lossless"   # multi-zone: RoCE across the aggregation tier
    devices: dict[str, DeviceIntent]
    links: list[Link]
    fabric_file: str = ""     # the fabric.yaml it was compiled from, for findings that name a file
    power: PowerBudget | None = None

    def switches(self) -> list[DeviceIntent]:
        return [d for d in self.devices.values() if d.tier > 0]

    def servers(self) -> list[DeviceIntent]:
        return [d for d in self.devices.values() if d.tier == 0]

    def zones(self) -> list[int]:
        """The zones that have devices (empty outside multi-zone)."""
        return sorted({d.zone for d in self.devices.values() if d.zone is not None})
