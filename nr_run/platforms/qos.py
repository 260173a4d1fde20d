"""What a device's rendered config makes its ports do with RoCE traffic, in platform-neutral terms.

A configured platform's builder is a `QosView` (nr_run.platforms.base): it reads the structured config the
platform renders (not the intent), so a per-platform or per-device difference between what was meant and what
gets configured shows up in the whole-fabric analyses. A device nr-run does not configure (a GPU server) is
viewed from its DeviceIntent (`from_intent`); a configured platform without a QosView is refused (the
analyses would otherwise pass vacuously on the intent).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from nr_run.platforms import registry
from nr_run.platforms.base import PREFLIGHT, QosView

if TYPE_CHECKING:
    from nr_run.intent.models import DeviceIntent, FabricIntent, Roce
    from nr_run.platforms.state import DeviceState


@dataclass(frozen=True)
class PortQos:
    """One port's classification, PFC and ECN as configured."""

    dscp_to_tc: Mapping[int, int]
    tc_to_queue: Mapping[int, int]
    tc_to_pg: Mapping[int, int] | None             # None: the platform has no priority-group map (buffers per priority)
    pfc_priority_to_queue: Mapping[int, int] | None
    pfc_priorities: frozenset[int]                 # priorities the port pauses and honours pauses for
    lossless_pgs: frozenset[int] | None            # PGs with a lossless (headroom) buffer profile; None: not modelled
    ecn_queues: Mapping[int, tuple[int, int]]      # egress queue -> (min, max) marking thresholds in bytes
    mtu: int                                       # L3 MTU
    watchdog_priorities: frozenset[int]
    trust: str = "dscp"
    dcqcn: frozenset[int] | None = None            # a NIC: priorities with DCQCN (reaction + notification) on


@dataclass(frozen=True)
class Watchdog:
    detection_ms: int
    restoration_ms: int
    poll_ms: int
    action: str


@dataclass(frozen=True)
class BufferView:
    """The ingress lossless pool as configured (a platform whose buffers nr-run sets, e.g. SONiC)."""

    pool_bytes: int                    # ingress lossless pool size
    headroom_pool_bytes: int           # the pool's shared headroom (xoff) reservation
    dynamic_th: int                    # lossless PG profiles' dynamic threshold: alpha = 2 ** dynamic_th
    pg_xoff: Mapping[str, int]         # port -> xoff of its lossless PG profile as rendered
    lossless_pgs_per_port: int         # lossless PGs each port reserves headroom for
    reserved_bytes: int = 0            # guaranteed (size) bytes of every PG on the pool, not shared


@dataclass(frozen=True)
class DeviceQos:
    source: str                                    # where the view was read from, for messages
    ports: Mapping[str, PortQos]
    strict_queues: frozenset[int]                  # egress queues served by strict priority
    watchdog: Watchdog | None = None
    watchdog_problems: tuple[str, ...] = ()        # what the platform would refuse or cannot honour
    non_ect: str = "drop"                          # non-ECT packets on an ECN queue: "drop" (WRED curve) | "admit"
    buffers: BufferView | None = None               # None: the platform's own buffer defaults (not configured)
    extra: Mapping[str, Any] = field(default_factory=dict)


def from_intent(device: DeviceIntent) -> DeviceQos:
    """The view a device's intent asks for (GPU NICs, platforms without a qos_view)."""
    roce = device.roce
    wd = roce.watchdog
    ports = {i.name: _intent_port(roce, i.mtu, tuple(i.lossless_priorities)) for i in device.interfaces}
    ports.update({n.name: replace(_intent_port(roce, n.mtu, tuple(n.lossless_priorities)),
                                  dscp_to_tc={**roce.dscp_to_tc, **n.qos.dscp_to_prio},
                                  dcqcn=frozenset(n.qos.ecn_priorities)) if n.qos is not None
                  else _intent_port(roce, n.mtu, tuple(n.lossless_priorities)) for n in device.nics})
    return DeviceQos(source=f"{device.name} intent", ports=ports,
                     strict_queues=frozenset(s.queue for s in roce.schedulers if s.type == "strict"),
                     watchdog=Watchdog(wd.detection_ms, wd.restoration_ms, wd.poll_ms, wd.action) if wd.enabled else None)


# (id of a Roce, MTU, priorities) -> (that Roce, its port view): a Roce holds dicts, so it cannot be a key itself;
# keeping it in the value keeps its id from being reused while the entry lives
_PORT_VIEWS: dict[tuple[int, int, tuple[int, ...]], tuple[Roce, PortQos]] = {}


def _intent_port(roce: Roce, mtu: int, priorities: tuple[int, ...]) -> PortQos:
    """One port's view of a RoCE profile; shared by every port with the same profile, MTU and priorities (the
    intent is immutable and most ports of a site are alike)."""
    key = (id(roce), mtu, priorities)
    found = _PORT_VIEWS.get(key)
    if found is not None and found[0] is roce:
        return found[1]
    if len(_PORT_VIEWS) > 4096:
        _PORT_VIEWS.clear()
    lossless = frozenset(roce.lossless_priorities)
    ecn = {roce.ecn.queue: (roce.ecn.min_bytes, roce.ecn.max_bytes)} if roce.ecn.enabled else {}
    view = PortQos(dscp_to_tc=roce.dscp_to_tc, tc_to_queue=roce.tc_to_queue, tc_to_pg=roce.tc_to_pg,
                   pfc_priority_to_queue=roce.pfc_priority_to_queue, pfc_priorities=frozenset(priorities),
                   lossless_pgs=frozenset(roce.tc_to_pg[p] for p in lossless), ecn_queues=ecn, mtu=mtu,
                   watchdog_priorities=frozenset(priorities) if roce.watchdog.enabled else frozenset(),
                   trust=roce.trust)
    _PORT_VIEWS[key] = (roce, view)
    return view


def device_qos(device: DeviceIntent, fabric: FabricIntent | None = None) -> DeviceQos:
    """The device's view from its platform's rendered structured config, or from its intent when nr-run does
    not configure it. A configured platform without a QosView raises registry.MissingCapability."""
    try:
        builder = registry.get(device.platform).config
    except registry.UnknownPlatform:
        builder = None
    if builder is None:
        return from_intent(device)
    if not isinstance(builder, QosView):
        registry.require([device.platform], PREFLIGHT)
        return from_intent(device)     # unreachable: require raised (kept for the type checker's sake)
    from nr_run.platforms import built

    return builder.qos_view(device, built.structured_config(builder, device, fabric))


# The views of the last fabric asked about: the analyses of one run (and the safety preflight) each read every
# device's view; building a structured config per device once per fabric, not once per analysis, halves the time.
_LAST: tuple[FabricIntent, dict[str, DeviceQos | Exception]] | None = None


def fabric_device_qos(device: DeviceIntent, fabric: FabricIntent) -> DeviceQos:
    """device_qos, remembered for the most recent fabric (the intent is immutable); re-raises what building the
    config raised."""
    global _LAST
    if _LAST is None or _LAST[0] is not fabric:
        _LAST = (fabric, {})
    views = _LAST[1]
    if device.name not in views:
        try:
            views[device.name] = device_qos(device, fabric)
        except (ValueError, KeyError, LookupError) as exc:
            views[device.name] = exc
    found = views[device.name]
    if isinstance(found, Exception):
        raise found
    return found


def use_views(fabric: FabricIntent, views: Mapping[str, DeviceQos]) -> None:
    """Make `views` (e.g. built from collected state) what the analyses of `fabric` read; devices left out are
    viewed from their rendered config as usual."""
    global _LAST
    _LAST = (fabric, dict(views))


STATE_SECTIONS = ("interfaces", "pfc", "qos", "buffers", "nics")


def from_state(device: DeviceIntent, state: DeviceState, base: DeviceQos) -> DeviceQos:
    """What the device was seen doing (normalized collected state) over `base`, its rendered view, for what the
    state does not carry (TC -> queue and PG maps). Sections that could not be collected are listed in
    `extra["uncollected"]`; the analyses fail the device's hops on them rather than trust the rendered view."""
    got = state.sections
    ports: dict[str, PortQos] = {}
    for name, pq in base.ports.items():
        q = state.qos.get(name)
        dscp = dict(pq.dscp_to_tc)
        if q is not None and q.dscp_to_tc:
            dscp = dict(q.dscp_to_tc) if q.dscp_map == "complete" else {**dscp, **q.dscp_to_tc}
        nic = state.nics.get(name)
        itf = state.interfaces.get(name)
        pfc = pq.pfc_priorities
        if name in state.pfc_priorities:
            pfc = frozenset(state.pfc_priorities[name])
        elif nic is not None and nic.pfc_priorities is not None:
            pfc = frozenset(nic.pfc_priorities)
        ecn = pq.ecn_queues
        if "pfc" in got and nic is None:
            ecn = {queue: (e.min_bytes or 0, e.max_bytes or 0) for (port, queue), e in state.ecn.items()
                   if port == name and e.enabled}
        wd = state.watchdog.get(name)
        pgs = pq.lossless_pgs
        if name in state.buffer_pgs:
            pgs = frozenset(pg for entry in state.buffer_pgs[name] if entry.xoff_bytes for pg in entry.pgs)
        mtu = (itf.mtu if itf is not None and itf.mtu else None) or (nic.mtu if nic is not None and nic.mtu else None)
        trust = (q.trust or "none") if q is not None else (nic.trust or pq.trust if nic is not None else pq.trust)
        dcqcn = pq.dcqcn
        if nic is not None:
            # what the NIC classifies by: its DCB APP table over the default priority 0 (trust DSCP)
            if nic.dscp_to_prio is not None:
                dscp = {d: nic.dscp_to_prio.get(d, 0) for d in range(64)}
            if nic.ecn_rp is not None and nic.ecn_np is not None:
                dcqcn = frozenset(nic.ecn_rp) & frozenset(nic.ecn_np)
            elif "dcqcn" in nic.unreadable:
                dcqcn = frozenset()
        ports[name] = replace(
            pq, dscp_to_tc=dscp, pfc_priorities=pfc, ecn_queues=ecn, lossless_pgs=pgs, mtu=mtu or pq.mtu,
            trust=trust, watchdog_priorities=(pfc if wd.enabled else frozenset()) if wd is not None
            else pq.watchdog_priorities, dcqcn=dcqcn)
    strict = {queue for q in state.qos.values() for queue, kind in q.schedulers.items() if kind == "strict"}
    wanted = ("nics",) if device.role == "gpu" else ("interfaces", "pfc", "qos")
    uncollected = {s: state.errors.get(s, "not collected") for s in wanted if s not in got}
    return replace(base, source=f"{device.name} collected state", ports=ports,
                   strict_queues=frozenset(strict) or base.strict_queues,
                   extra={**base.extra, "uncollected": uncollected})
