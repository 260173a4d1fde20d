"""Input schema of a site's fabric.yaml and of the per-host inventory data.

Unknown keys are errors (extra="forbid") so that a typo never silently becomes a default. Every string that
can reach a config, a file name or a message matches a safe pattern (nr_run.intent.names); every number is
range-checked against what a real fabric can have, so no value can make compilation slow or huge.
"""

from __future__ import annotations

import ipaddress
import sys
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from nr_run.intent.models import PlatformName
from nr_run.intent.nametypes import Ident, Name, Port, PortName, SiteName, Token
from nr_run.intent.nic import NicSettings

# Port speeds nr-run knows the PFC response delay of (nr_run.intent.headroom), as written in the inventory.
SPEEDS: dict[str, int] = {"25G": 25_000, "50G": 50_000, "100G": 100_000, "200G": 200_000, "400G": 400_000,
                          "800G": 800_000}
MAX_ASN = 4_294_967_295
# front-panel ports of one device: a 16-slot modular chassis (e.g. Arista 7816R3: 16 x 36 400G, 2,304 ports
# with 2x200G breakouts) fits, with room for 4-way breakouts of its 800G generation
MAX_PORTS = 4608
MAX_CABLE_M = 10_000       # longest cable whose headroom nr-run computes (10 km single-mode)

Role = Literal["ctsw", "rtsw", "gpu", "atsw"]
Shape = Literal["star", "clos", "multi-zone"]
MAX_ZONES = 64


def _speed(value: Any) -> str:
    """'400G', '400g', ' 400G ' -> '400G'; anything else (400GB, 40G, 400) is refused with the allowed set."""
    if isinstance(value, str):
        norm = value.strip().upper()
        if norm in SPEEDS:
            return norm
    raise ValueError(f"speed {value!r} is not one of {', '.join(SPEEDS)}")


Speed = Annotated[str, BeforeValidator(_speed)]


def speed_to_mbps(speed: str) -> int:
    """'400G' -> 400000 (any spelling _speed accepts)."""
    return SPEEDS[_speed(speed)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AsnPlan(Strict):
    # the CTSW tier of a clos shares one ASN; in a multi-zone site zone z's CTSWs share ctsw + z - 1
    ctsw: int | None = Field(default=None, ge=1, le=MAX_ASN)
    rtsw_base: int = Field(ge=1, le=MAX_ASN)   # the last RTSW's ASN is checked at compile time
    atsw: int | None = Field(default=None, ge=1, le=MAX_ASN)   # the aggregation tier shares one ASN


class LoopbackPools(Strict):
    ctsw: ipaddress.IPv4Network | None = None
    rtsw: ipaddress.IPv4Network
    atsw: ipaddress.IPv4Network | None = None


class Pools(Strict):
    loopback: LoopbackPools
    fabric_p2p: ipaddress.IPv4Network | None = None    # switch-to-switch /31s (none in a star)
    host_p2p: ipaddress.IPv4Network


class Plan(Strict):
    """Capacities fixed on day one. Every address, ASN and port is a function of a device's place (zone, unit,
    index) within them, never of how many devices exist, so growth inside them renumbers nothing."""

    zones: int = Field(default=1, ge=1, le=MAX_ZONES)
    units_per_zone: int = Field(ge=1, le=4096)
    rtsw_per_unit: int = Field(ge=1, le=64)           # = compute NICs (rails) per server, or fewer in a star
    ctsw_per_zone: int = Field(default=0, ge=0, le=512)
    atsw: int = Field(default=0, ge=0, le=512)


class PortBlock(Strict):
    from_: int = Field(alias="from", ge=0, lt=MAX_PORTS)
    count: int | None = Field(default=None, ge=1, le=MAX_PORTS)


class Hardware(Strict):
    """A switch or server model: how its ports are named and which slots are uplinks/downlinks.

    Only neutral facts: what a platform makes of them (lanes, aliases, buffer pools) is the platform's.
    """

    platform: PlatformName        # an installed platform plug-in (checked at the platforms layer)
    model: Token = ""
    # the vendor's hardware platform string; `sonic_platform` is its earlier name
    platform_id: Token = Field(default="", validation_alias=AliasChoices("platform_id", "sonic_platform"))
    asic: str = Field(default="", pattern=r"^[a-z0-9_]{0,32}$")
    port_name: PortName | None = None   # e.g. "Ethernet{n}", "Ethernet{n}/1", "eth{n}", "ens{n}np0"
    # the names slot by slot where no formula gives them (a server's PCI-derived NIC names, e.g.
    # [enp65s0f0np0, enp65s0f1np0, enp129s0f0np0]); one name per port, instead of port_name
    port_names: list[Port] | None = Field(default=None, max_length=MAX_PORTS)
    first_port: int = Field(default=1, ge=0, le=10_000)
    port_step: int = Field(default=1, ge=1, le=64)
    lanes_per_port: int = Field(default=0, ge=0, le=16)
    ports: int = Field(ge=1, le=MAX_PORTS)
    speed: Speed                  # the fastest a port of this model runs (links are checked against it)
    fec: Literal["rs", "fc", "none", "auto"] = "rs"
    # set where nr-run configures the shared-buffer model (headroom is rounded to these cells)
    buffer_cell_bytes: int | None = Field(default=None, ge=64, le=4096)
    # a folder of HWSKU folders (sonic-buildimage's device/<vendor>/<platform>/ layout) searched before the
    # shipped ones, relative to fabric.yaml's folder: an operator's own SKU without editing the package
    sku_dir: str = Field(default="", max_length=200,
                         pattern=r"^([A-Za-z0-9_+-][A-Za-z0-9_.+-]*(/[A-Za-z0-9_+-][A-Za-z0-9_.+-]*)*)?$")
    uplinks: PortBlock | None = None
    power_kw: float | None = Field(default=None, ge=0, le=200)   # typical draw of one device (power budgets)
    # switches: ports toward the tier below; servers: the compute NICs that go on rails (from, count);
    # other server ports (storage, management) are outside the block and ignored by the rail rule
    downlinks: PortBlock | None = None

    @model_validator(mode="after")
    def _one_naming(self) -> Hardware:
        if (self.port_name is None) == (self.port_names is None):
            raise ValueError("give either port_name (a pattern with {n}) or port_names (one name per port)")
        if self.port_names is not None:
            if len(self.port_names) != self.ports:
                raise ValueError(f"port_names has {len(self.port_names)} names for {self.ports} ports")
            if len(set(self.port_names)) != len(self.port_names):
                raise ValueError("port_names repeats a name")
        return self

    def port(self, slot: int) -> str:
        """Name of the port in 0-based slot `slot` (interned: every device of a model has the same names)."""
        if self.port_names is not None:
            return sys.intern(self.port_names[slot])
        assert self.port_name is not None
        return sys.intern(self.port_name.format(n=self.first_port + slot * self.port_step))

    def slot_of(self, name: str) -> int | None:
        """Inverse of port(): the slot of a port name, or None if it is not a port of this model."""
        if self.port_names is not None:
            return self.port_names.index(name) if name in self.port_names else None
        assert self.port_name is not None
        prefix, _, suffix = self.port_name.partition("{n}")
        if not (name.startswith(prefix) and name.endswith(suffix)):
            return None
        number = name[len(prefix) : len(name) - len(suffix)]
        if not number.isdigit():
            return None
        offset = int(number) - self.first_port
        if offset < 0 or offset % self.port_step:
            return None
        slot = offset // self.port_step
        return slot if slot < self.ports else None


class RoleSettings(Strict):
    mtu: int = Field(ge=1280, le=9216)
    roce_profile: Ident


class LeafSpineRule(Strict):
    """Uplink j of every leaf -> spine j of its zone (the site, outside multi-zone)."""

    type: Literal["leaf-spine"]
    leaf_role: Role = "rtsw"
    spine_role: Role = "ctsw"
    speed: Speed
    cable_length_m: int = Field(ge=0, le=MAX_CABLE_M)


class SpineAggregationRule(Strict):
    """Uplink j of every zone's spine -> aggregation switch j (multi-zone)."""

    type: Literal["spine-aggregation"]
    spine_role: Role = "ctsw"
    aggregation_role: Role = "atsw"
    speed: Speed
    cable_length_m: int = Field(ge=0, le=MAX_CABLE_M)


class RailRule(Strict):
    """NIC i of a server -> leaf i // nics_per_leaf + 1 of its unit. nics_per_leaf > 1 puts several NICs of a
    server on one switch (a star of one or two big switches)."""

    type: Literal["rail"]
    server_role: Role = "gpu"
    leaf_role: Role = "rtsw"
    speed: Speed
    cable_length_m: int = Field(ge=0, le=MAX_CABLE_M)
    nics_per_leaf: int = Field(default=1, ge=1, le=64)


ENDPOINT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}:[A-Za-z][A-Za-z0-9/_-]{0,63}$"
Endpoint = Annotated[str, Field(pattern=ENDPOINT_PATTERN)]


class LinkOverride(Strict):
    """Change (or add, or remove) one link; endpoints are 'device:port'."""

    a: Endpoint
    b: Endpoint | None = None
    speed: Speed | None = None
    cable_length_m: int | None = Field(default=None, ge=0, le=MAX_CABLE_M)
    remove: bool = False
    add: bool = False

    @model_validator(mode="after")
    def _mode(self) -> LinkOverride:
        if self.add and self.remove:
            raise ValueError("an override either adds or removes a link, not both")
        return self


# picked by `type`, so one typo gives the errors of one rule type, not of both
CablingRule = Annotated[LeafSpineRule | SpineAggregationRule | RailRule, Field(discriminator="type")]


class Cabling(Strict):
    rules: list[CablingRule] = Field(max_length=64)
    overrides: list[LinkOverride] = Field(default=[], max_length=100_000)


class BgpSettings(Strict):
    peer_group: Ident = "FABRIC"
    bfd: bool = True
    maximum_paths: int = Field(default=64, ge=1, le=512)
    keepalive: int = Field(default=3, ge=1, le=3600)
    holdtime: int = Field(default=9, ge=3, le=7200)
    # routes accepted per peer; 0 = no limit (EOS's default of 12000 is below what a CTSW of a
    # 512-RTSW site learns: every host /31 is redistributed)
    maximum_routes: int = Field(default=0, ge=0, le=4_294_967_294)

    @model_validator(mode="after")
    def _timers(self) -> BgpSettings:
        if self.holdtime < 3 * self.keepalive:
            raise ValueError(f"holdtime {self.holdtime} must be at least 3 x keepalive ({3 * self.keepalive})")
        return self


class Management(Strict):
    """Out-of-band management network shared by the site's devices."""

    prefix_length: int = Field(default=24, ge=8, le=30)
    gateway: ipaddress.IPv4Address | None = None
    # management VRF of the switches ("default": none); keeps the OOB subnet out of the fabric's routing
    vrf: str = Field(default="MGMT", pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")


class Policy(Strict):
    max_oversubscription: float = Field(default=1.0, gt=0, le=64)
    min_ctsw: int = Field(default=2, ge=0, le=MAX_PORTS)
    # multi-zone: the most a zone's CTSW may carry down per unit of bandwidth up to the aggregation tier
    cross_zone_oversubscription: float | None = Field(default=None, gt=0, le=64)
    # multi-zone: whether RoCE stays lossless across the aggregation tier (lossy: no PFC on CTSW-ATSW links)
    cross_zone: Literal["lossless", "lossy"] = "lossless"


class EcnSettings(Strict):
    enabled: bool = True
    queue: int = Field(ge=0, le=7)
    min_kbytes: int = Field(ge=1, le=1_000_000)
    max_kbytes: int = Field(ge=1, le=1_000_000)
    max_mark_probability: int = Field(ge=1, le=100)

    @model_validator(mode="after")
    def _order(self) -> EcnSettings:
        if self.max_kbytes < self.min_kbytes:
            raise ValueError("ecn max_kbytes must be >= min_kbytes")
        return self


class SchedulerSettings(Strict):
    queue: int = Field(ge=0, le=7)
    type: Literal["strict", "dwrr"]
    weight: int | None = Field(default=None, ge=1, le=100)

    @model_validator(mode="after")
    def _weight(self) -> SchedulerSettings:
        if self.type == "dwrr" and self.weight is None:
            raise ValueError(f"queue {self.queue}: dwrr scheduler needs a weight")
        if self.type == "strict" and self.weight is not None:
            raise ValueError(f"queue {self.queue}: a strict scheduler takes no weight")
        return self


class WatchdogSettings(Strict):
    enabled: bool = True
    detection_ms: int = Field(ge=100, le=5000)
    restoration_ms: int = Field(ge=100, le=60000)
    poll_ms: int = Field(ge=100, le=1000)
    action: Literal["drop", "forward", "alert"] = "drop"

    @model_validator(mode="after")
    def _poll(self) -> WatchdogSettings:
        if self.detection_ms < self.poll_ms or self.restoration_ms < self.poll_ms:
            raise ValueError("pfc_watchdog detection_ms and restoration_ms must be >= poll_ms")
        return self


class CnpSettings(Strict):
    dscp: int = Field(ge=0, le=63)
    tc: int = Field(ge=0, le=7)


class RoceProfileSettings(Strict):
    trust: Literal["dscp"] = "dscp"
    default_tc: int = Field(default=0, ge=0, le=7)
    dscp_to_tc: dict[int, int]
    lossless_priorities: list[int] = Field(max_length=8)
    cnp: CnpSettings
    ecn: EcnSettings
    schedulers: list[SchedulerSettings] = Field(max_length=8)
    pfc_watchdog: WatchdogSettings

    @field_validator("dscp_to_tc")
    @classmethod
    def _dscp(cls, v: dict[int, int]) -> dict[int, int]:
        for dscp, tc in v.items():
            if not 0 <= dscp <= 63:
                raise ValueError(f"DSCP {dscp} out of range 0-63")
            if not 0 <= tc <= 7:
                raise ValueError(f"traffic class {tc} (DSCP {dscp}) out of range 0-7")
        return v

    @field_validator("lossless_priorities")
    @classmethod
    def _lossless(cls, v: list[int]) -> list[int]:
        if not v:
            raise ValueError("at least one lossless priority is needed")
        for prio in v:
            if not 0 <= prio <= 7:
                raise ValueError(f"priority {prio} out of range 0-7")
        if len(set(v)) != len(v):
            raise ValueError("lossless priorities repeat")
        return sorted(v)


class PowerPlan(Strict):
    """Power and space: each rack's budget, how many racks a zone (the site, outside multi-zone) may have, and
    each zone's budget; a device's draw is its hardware's power_kw, its rack is `data.rack` in hosts.yaml."""

    rack_kw: float = Field(gt=0, le=1000)
    racks_per_zone: int | None = Field(default=None, ge=1, le=100_000)
    zone_kw: float | None = Field(default=None, gt=0, le=1_000_000)


class FabricFile(Strict):
    """The whole fabric.yaml."""

    format: int = Field(default=1, ge=1)     # the inventory format (nr_run.intent.formats: compile reads it)
    site: SiteName
    lab: bool = False
    shape: Shape = "clos"
    plan: Plan | None = None
    asn: AsnPlan
    pools: Pools
    hardware: dict[Name, Hardware]
    roles: dict[Role, RoleSettings]
    cabling: Cabling
    management: Management = Management()
    bgp: BgpSettings = BgpSettings()
    policy: Policy = Policy()
    power: PowerPlan | None = None
    roce_profiles: dict[Ident, RoceProfileSettings]
    nic: NicSettings = NicSettings()       # GPU servers' RoCE NICs (nr_run.intent.nic)


class HostData(Strict):
    """The `data:` of one host (after group/default inheritance)."""

    role: Role
    hardware: Name
    index: int = Field(ge=1, le=100_000)
    su: int | None = Field(default=None, ge=1, le=100_000)
    zone: int | None = Field(default=None, ge=1, le=MAX_ZONES)
    rack: Name | None = None
    site: SiteName | None = None
    tier: Ident | None = None
    roce_profile: Ident | None = None
    mtu: int | None = Field(default=None, ge=1280, le=9216)
    # this host's own port names, slot by slot, where they differ from its hardware's (a server whose NICs sit
    # in other PCI slots, so Linux names them otherwise): as many as the hardware's ports
    port_names: list[Port] | None = Field(default=None, max_length=MAX_PORTS)
