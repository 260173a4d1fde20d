"""Input schema of a site's fabric.yaml and of the per-host inventory data.

Unknown keys are errors (extra="forbid") so that a typo never silently becomes a default.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from nr_run.intent.models import PlatformName

SPEED_RE = re.compile(r"^(\d+)G$")


def speed_to_mbps(speed: str) -> int:
    """'400G' -> 400000."""
    match = SPEED_RE.match(speed)
    if not match:
        raise ValueError(f"speed {speed!r} must look like '400G'")
    return int(match.group(1)) * 1000


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AsnPlan(Strict):
    ctsw: int = Field(ge=1, le=4294967295)
    rtsw_base: int = Field(ge=1, le=4294967295)


class LoopbackPools(Strict):
    ctsw: ipaddress.IPv4Network
    rtsw: ipaddress.IPv4Network


class Pools(Strict):
    loopback: LoopbackPools
    fabric_p2p: ipaddress.IPv4Network
    host_p2p: ipaddress.IPv4Network


class PortBlock(Strict):
    from_: int = Field(alias="from", ge=0)
    count: int | None = Field(default=None, ge=1)


class Hardware(Strict):
    """A switch or server model: how its ports are named and which slots are uplinks/downlinks.

    Only neutral facts: what a platform makes of them (lanes, aliases, buffer pools) is the platform's.
    """

    platform: PlatformName        # an installed platform plug-in (checked at the platforms layer)
    model: str = ""
    # the vendor's hardware platform string; `sonic_platform` is its earlier name
    platform_id: str = Field(default="", validation_alias=AliasChoices("platform_id", "sonic_platform"))
    asic: str = Field(default="", pattern=r"^[a-z0-9_]{0,32}$")
    port_name: str
    first_port: int = 1
    port_step: int = Field(default=1, ge=1)
    lanes_per_port: int = Field(default=0, ge=0)
    ports: int = Field(ge=1)
    speed: str
    fec: Literal["rs", "fc", "none", "auto"] = "rs"
    # set where nr-run configures the shared-buffer model (headroom is rounded to these cells)
    buffer_cell_bytes: int | None = Field(default=None, ge=1)
    uplinks: PortBlock | None = None
    downlinks: PortBlock | None = None

    @field_validator("speed")
    @classmethod
    def _speed(cls, v: str) -> str:
        speed_to_mbps(v)
        return v

    @field_validator("port_name")
    @classmethod
    def _port_name(cls, v: str) -> str:
        if "{n}" not in v:
            raise ValueError("port_name must contain '{n}'")
        return v

    def port(self, slot: int) -> str:
        """Name of the port in 0-based slot `slot`."""
        return self.port_name.format(n=self.first_port + slot * self.port_step)

    def slot_of(self, name: str) -> int | None:
        """Inverse of port(): the slot of a port name, or None if it is not a port of this model."""
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
    mtu: int = Field(ge=68, le=9216)
    roce_profile: str


class LeafSpineRule(Strict):
    type: Literal["leaf-spine"]
    leaf_role: str
    spine_role: str
    speed: str
    cable_length_m: int = Field(ge=0)


class RailRule(Strict):
    type: Literal["rail"]
    server_role: str
    leaf_role: str
    speed: str
    cable_length_m: int = Field(ge=0)


class LinkOverride(Strict):
    """Change (or add, or remove) one link; endpoints are 'device:port'."""

    a: str
    b: str | None = None
    speed: str | None = None
    cable_length_m: int | None = Field(default=None, ge=0)
    remove: bool = False
    add: bool = False

    @field_validator("a", "b")
    @classmethod
    def _endpoint(cls, v: str | None) -> str | None:
        if v is not None and v.count(":") != 1:
            raise ValueError(f"endpoint {v!r} must be 'device:port'")
        return v


class Cabling(Strict):
    rules: list[LeafSpineRule | RailRule] = Field(discriminator=None)
    overrides: list[LinkOverride] = []


class BgpSettings(Strict):
    peer_group: str = "FABRIC"
    bfd: bool = True
    maximum_paths: int = Field(default=64, ge=1, le=512)
    keepalive: int = Field(default=3, ge=1)
    holdtime: int = Field(default=9, ge=3)
    # routes accepted per peer; 0 = no limit (EOS's default of 12000 is below what a CTSW of a
    # 512-RTSW site learns: every host /31 is redistributed)
    maximum_routes: int = Field(default=0, ge=0)


class Management(Strict):
    """Out-of-band management network shared by the site's devices."""

    prefix_length: int = Field(default=24, ge=8, le=31)
    gateway: ipaddress.IPv4Address | None = None
    # management VRF of the switches ("default": none); keeps the OOB subnet out of the fabric's routing
    vrf: str = Field(default="MGMT", pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")


class Policy(Strict):
    max_oversubscription: float = Field(default=1.0, gt=0)
    min_ctsw: int = Field(default=2, ge=1)


class EcnSettings(Strict):
    enabled: bool = True
    queue: int = Field(ge=0, le=7)
    min_kbytes: int = Field(ge=1)
    max_kbytes: int = Field(ge=1)
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
    lossless_priorities: list[int]
    cnp: CnpSettings
    ecn: EcnSettings
    schedulers: list[SchedulerSettings]
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


class FabricFile(Strict):
    """The whole fabric.yaml."""

    site: str
    lab: bool = False
    asn: AsnPlan
    pools: Pools
    hardware: dict[str, Hardware]
    roles: dict[str, RoleSettings]
    cabling: Cabling
    management: Management = Management()
    bgp: BgpSettings = BgpSettings()
    policy: Policy = Policy()
    roce_profiles: dict[str, RoceProfileSettings]


class HostData(Strict):
    """The `data:` of one host (after group/default inheritance)."""

    role: Literal["ctsw", "rtsw", "gpu"]
    hardware: str
    index: int = Field(ge=1)
    su: int | None = Field(default=None, ge=1)
    site: str | None = None
    tier: str | None = None
    roce_profile: str | None = None
    mtu: int | None = Field(default=None, ge=68, le=9216)
