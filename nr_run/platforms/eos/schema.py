"""The EOS structured config's schema: what structured.py builds, templates/eos/ print and qosview.py reads.

TypedDicts, so mypy holds the builder and the QoS view to the same keys; `validate` checks a built config
against them at run time with pydantic (no key missing, none extra, every value of its type), which the
tests do for every EOS switch of the shipped sites and which `templates/eos/` are tested against.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import ConfigDict, TypeAdapter, with_config
from typing_extensions import TypedDict  # pydantic validates typing_extensions' TypedDict on Python 3.11

_CLOSED = ConfigDict(extra="forbid", strict=True)


@with_config(_CLOSED)
class Vrf(TypedDict):
    name: str
    ip_routing: bool


@with_config(_CLOSED)
class ManagementInterface(TypedDict):
    name: str
    vrf: str | None
    ip_address: str


@with_config(_CLOSED)
class StaticRoute(TypedDict):
    vrf: str | None
    prefix: str
    next_hop: str


@with_config(_CLOSED)
class ServiceVrfs(TypedDict):
    vrfs: list[str]


@with_config(_CLOSED)
class WatchdogTimers(TypedDict):
    timeout: str                  # seconds, as EOS takes them ("0.2")
    polling_interval: str
    recovery_time: str
    action: str                   # drop | notify-only (per profile); the global one may also errdisable


@with_config(_CLOSED)
class PortWatchdog(WatchdogTimers):
    comment: str | None


@with_config(_CLOSED)
class Pfc(TypedDict):
    priorities: list[int]
    watchdog: PortWatchdog | None


@with_config(_CLOSED)
class Ecn(TypedDict):
    minimum_bytes: int
    maximum_bytes: int
    max_mark_probability: int


@with_config(_CLOSED)
class TxQueue(TypedDict):
    id: int
    strict: bool
    bandwidth_percent: int | None      # None: strict priority (no `no priority`)
    ecn: Ecn | None


@with_config(_CLOSED)
class QosProfile(TypedDict):
    name: str
    trust: str
    pfc: Pfc | None
    tx_queues: list[TxQueue]


@with_config(_CLOSED)
class EthernetInterface(TypedDict):
    name: str
    description: str
    mtu: int
    speed: str                    # "400g-8"
    ip_address: str
    service_profile: str


@with_config(_CLOSED)
class LoopbackInterface(TypedDict):
    name: str
    ip_address: str


@with_config(_CLOSED)
class DscpGroup(TypedDict):
    dscps: list[int]
    traffic_class: int


@with_config(_CLOSED)
class QosMaps(TypedDict):
    dscp_to_traffic_class: list[DscpGroup]


@with_config(_CLOSED)
class PrefixEntry(TypedDict):
    seq: int
    action: str
    prefix: str
    ge: int | None
    le: int | None


@with_config(_CLOSED)
class PrefixList(TypedDict):
    name: str
    entries: list[PrefixEntry]


@with_config(_CLOSED)
class RouteMapEntry(TypedDict):
    seq: int
    action: str
    match_prefix_list: str | None      # None: the entry matches every route


@with_config(_CLOSED)
class RouteMap(TypedDict):
    name: str
    entries: list[RouteMapEntry]


@with_config(_CLOSED)
class PeerGroup(TypedDict):
    name: str
    bfd: bool
    keepalive: int
    holdtime: int
    maximum_routes: int


@with_config(_CLOSED)
class Neighbor(TypedDict):
    ip_address: str
    peer_group: str
    remote_as: int
    bfd: bool
    description: str


@with_config(_CLOSED)
class Redistribute(TypedDict):
    source: str
    route_map: str


@with_config(_CLOSED)
class AggregateAddress(TypedDict):
    prefix: str
    summary_only: bool


@with_config(_CLOSED)
class RouterBgp(TypedDict):
    asn: int
    router_id: str
    maximum_paths: int
    ecmp: int
    peer_group: PeerGroup
    neighbors: list[Neighbor]
    activate_peer_groups: list[str]
    peer_group_route_map_in: str | None     # address-family ipv4: what the peer group accepts
    redistribute: list[Redistribute]
    aggregate_addresses: list[AggregateAddress]


@with_config(_CLOSED)
class Management(TypedDict):
    vrfs: list[Vrf]
    management_interfaces: list[ManagementInterface]
    static_routes: list[StaticRoute]
    management_api_http: ServiceVrfs
    management_ssh: ServiceVrfs


@with_config(_CLOSED)
class EosStructuredConfig(Management):
    """One EOS switch's structured config (the keys templates/eos/main.j2 is rendered with)."""

    hostname: str
    site: str
    role: str
    qos_profiles: list[QosProfile]
    ethernet_interfaces: list[EthernetInterface]
    loopback_interfaces: list[LoopbackInterface]
    qos_maps: QosMaps
    qos_ecn_allow_non_ect: bool
    prefix_lists: list[PrefixList]
    route_maps: list[RouteMap]
    pfc_watchdog: WatchdogTimers | None
    router_bgp: RouterBgp | None


@cache
def _adapter() -> TypeAdapter[EosStructuredConfig]:
    return TypeAdapter(EosStructuredConfig)


def validate(structured: Any) -> EosStructuredConfig:
    """The config checked against the schema (pydantic ValidationError naming the key path otherwise)."""
    return _adapter().validate_python(structured)


def keys() -> frozenset[str]:
    """The top-level keys of an EOS structured config (the variables templates/eos/ may use)."""
    return frozenset(EosStructuredConfig.__required_keys__ | EosStructuredConfig.__optional_keys__)
