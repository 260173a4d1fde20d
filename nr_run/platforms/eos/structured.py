"""EOS structured config (pyavd style): a plain dict of everything the CLI templates print, of the shape
nr_run.platforms.eos.schema declares (TypedDicts, validated in the tests).

Every value is computed here (seconds from ms, watchdog actions, BFD per neighbor), so the templates in
templates/eos/ only format it.
"""

from __future__ import annotations

from nr_run.intent.models import Bgp, DeviceIntent, HardwareFacts, Roce, Watchdog
from nr_run.platforms import registry
from nr_run.platforms.eos.schema import (
    DscpGroup,
    EosStructuredConfig,
    Management,
    Pfc,
    PortWatchdog,
    PrefixEntry,
    PrefixList,
    QosProfile,
    RouteMap,
    RouterBgp,
    StaticRoute,
    TxQueue,
    WatchdogTimers,
)
from nr_run.platforms.format import tx_queues

# EOS watchdog actions are drop|notify-only (no-drop is gone since AVD 6.0, avd#6399); SONiC's alert and
# forward both keep forwarding, which notify-only does.
WATCHDOG_ACTIONS = {"drop": "drop", "alert": "notify-only", "forward": "notify-only"}


def seconds(ms: int) -> str:
    """200 -> '0.2' (EOS takes watchdog timers in seconds)."""
    return f"{ms / 1000:g}"


def dscp_groups(dscp_to_tc: dict[int, int]) -> list[DscpGroup]:
    """DSCPs grouped by traffic class, sorted: [{"dscps": [26], "traffic_class": 3}, ...]."""
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in dscp_to_tc.items():
        by_tc.setdefault(tc, []).append(dscp)
    return [{"dscps": sorted(by_tc[tc]), "traffic_class": tc} for tc in sorted(by_tc)]


def eos_speed(speed_mbps: int, hardware: HardwareFacts) -> str:
    """The `speed` of a port running at `speed_mbps`: EOS names a speed with its lane count ("400g-8",
    "100g-2") on multi-lane ports; a link below the port's native speed uses the matching share of its
    lanes (a 400G-8 OSFP at 100G runs two 50G PAM4 lanes)."""
    gbps = speed_mbps // 1000
    native, lanes = hardware.speed_mbps, hardware.lanes_per_port
    if lanes < 1 or native < 1:
        return f"{gbps}g"
    if speed_mbps > native or (speed_mbps * lanes) % native:
        raise ValueError(f"{speed_mbps} Mb/s does not fit a {native} Mb/s port of {lanes} lanes")
    return f"{gbps}g-{speed_mbps * lanes // native}"


def _watchdog_timers(wd: Watchdog) -> WatchdogTimers:
    return {"timeout": seconds(wd.detection_ms), "polling_interval": seconds(wd.poll_ms),
            "recovery_time": seconds(wd.restoration_ms), "action": WATCHDOG_ACTIONS[wd.action]}


def lossy_profile_name(roce: Roce) -> str:
    """The service profile of a port that carries RoCE without PFC (a lossy aggregation tier's links)."""
    return f"{roce.profile}-lossy"


def qos_profile(roce: Roce, lossless: bool = True) -> QosProfile:
    """The RoCE service profile; `lossless=False`: the same classification, queues and ECN without PFC."""
    wd = roce.watchdog
    pfc: Pfc | None = None
    if roce.lossless_priorities and lossless:
        port_wd: PortWatchdog | None = None
        if wd.enabled:
            comment = ("watchdog action forward: EOS has no forward action, notify-only keeps forwarding"
                       if wd.action == "forward" else None)
            port_wd = {**_watchdog_timers(wd), "comment": comment}
        pfc = {"priorities": list(roce.lossless_priorities), "watchdog": port_wd}
    queues: list[TxQueue] = []
    for txq in tx_queues(roce):
        sched = txq.scheduler
        ecn = roce.ecn
        queues.append({
            "id": txq.queue,
            "strict": sched is not None and sched.type == "strict",
            # EOS tx-queues are strict priority until `no priority` puts them in the weighted round-robin group
            "bandwidth_percent": sched.weight if sched is not None and sched.type == "dwrr" else None,
            # thresholds in `bytes`, the unit SONiC's WRED_PROFILE uses (sonic-wred-profile.yang: `units
            # bytes`): the same figure on both platforms, with no kbytes = 1000 or 1024 question
            "ecn": {"minimum_bytes": ecn.min_bytes, "maximum_bytes": ecn.max_bytes,
                    "max_mark_probability": ecn.max_mark_probability} if txq.ecn else None,
        })
    return {"name": roce.profile if lossless else lossy_profile_name(roce), "trust": roce.trust, "pfc": pfc,
            "tx_queues": queues}


def _bfd_capable(platform: str) -> bool:
    builder = registry.get(platform).config
    return builder is not None and builder.bgp_neighbor_bfd


# Names of the redistribution policy (AVD's RM-CONN-2-BGP convention).
PREFIX_LIST = "PL-LOOPBACKS-HOST-BLOCKS"
ROUTE_MAP = "RM-CONN-2-BGP"


def advertised_prefixes(device: DeviceIntent) -> list[PrefixEntry]:
    """Prefix-list entries: what the intent advertises into BGP, nothing else.

    Connected subnets reach BGP only through this list: the loopback /32 and the host /31s inside the
    switch's host block. Fabric /31s and the management subnet are denied (a route-map's implicit deny).
    """
    entries: list[PrefixEntry] = []
    if device.loopback:
        entries.append({"seq": 10, "action": "permit", "prefix": device.loopback, "ge": None, "le": None})
    if device.host_block:
        entries.append({"seq": 20, "action": "permit", "prefix": device.host_block, "ge": None, "le": 31})
    return entries


# The aggregation tier's inbound policy: every zone's summary, none of the host blocks inside it.
ZONE_SPECIFICS = "PL-ZONE-SPECIFICS"
ZONE_SUMMARIES_IN = "RM-ZONE-SUMMARIES-IN"


def zone_policy(device: DeviceIntent) -> tuple[list[PrefixList], list[RouteMap]]:
    """An ATSW's prefix-list of the routes more specific than a zone summary and the route-map its peer group
    applies inbound: they are denied, everything else (the summaries, loopbacks) accepted. The filter sits on
    the ATSW because a SONiC CTSW (bgpcfgd, separated mode) has no per-peer outbound policy to put it on."""
    if not device.zone_summaries:
        return [], []
    entries: list[PrefixEntry] = []
    for i, summary in enumerate(device.zone_summaries, 1):
        length = int(summary.split("/")[1])
        entries.append({"seq": 10 * i, "action": "permit", "prefix": summary, "ge": length + 1, "le": None})
    return ([{"name": ZONE_SPECIFICS, "entries": entries}],
            [{"name": ZONE_SUMMARIES_IN, "entries": [
                {"seq": 10, "action": "deny", "match_prefix_list": ZONE_SPECIFICS},
                {"seq": 20, "action": "permit", "match_prefix_list": None}]}])


def router_bgp(bgp: Bgp, local_bfd: bool, device: DeviceIntent) -> RouterBgp:
    # BFD only where both ends can configure it, else the session's BFD never comes up
    want = {p.address: bgp.bfd and local_bfd and _bfd_capable(p.peer_platform) for p in bgp.peers}
    group_bfd = bool(bgp.peers) and all(want.values())      # one peer-group line when every peer runs it
    return {
        "asn": bgp.asn,
        "router_id": bgp.router_id,
        "maximum_paths": bgp.maximum_paths,
        "ecmp": bgp.ecmp,
        "peer_group": {"name": bgp.peer_group, "bfd": group_bfd, "keepalive": bgp.keepalive,
                       "holdtime": bgp.holdtime, "maximum_routes": bgp.maximum_routes},
        "neighbors": [{"ip_address": p.address, "peer_group": bgp.peer_group, "remote_as": p.remote_asn,
                       "bfd": want[p.address] and not group_bfd, "description": p.description}
                      for p in bgp.peers],
        "activate_peer_groups": [bgp.peer_group],
        "peer_group_route_map_in": ZONE_SUMMARIES_IN if device.zone_summaries else None,
        "redistribute": [{"source": "connected", "route_map": ROUTE_MAP}],
        # a multi-zone CTSW originates its zone's summary while any host block inside it is in its table;
        # not summary-only: the zone's RTSWs keep every specific (RFC 7938 8.2: a summary toward them
        # blackholes the hosts of an RTSW that lost its link to one CTSW)
        "aggregate_addresses": ([{"prefix": device.zone_summary, "summary_only": False}]
                                if device.zone_summary else []),
    }


# EOS' factory DSCP -> traffic class map: DSCP d takes CoS d >> 3, and CoS 0 -> TC 1, CoS 1 -> TC 0, CoS n -> TC n
# (EOS User Manual, Quality of Service: "Default CoS to Traffic Class Map" and "Default DSCP to Traffic Class
# Map"). A DSCP without a `qos map dscp` line keeps this class, e.g. DSCP 24-31 land on TC 3.
EOS_DEFAULT_DSCP_TO_TC = {d: {0: 1, 1: 0}.get(d >> 3, d >> 3) for d in range(64)}

# Non-ECT packets on the ECN queue are dropped, not admitted, on both platforms. SONiC cannot express
# "mark ECT, admit non-ECT" in WRED_PROFILE: wred_<colour>_enable drives the one curve that both marks (ecn_all)
# and, for non-ECT packets, drops (SAI_WRED_ATTR_<COLOUR>_ENABLE/ECN_MARK_MODE). EOS admits non-ECT traffic
# only with `qos random-detect ecn allow non-ect`, which is therefore not rendered: non-ECT traffic on the
# RoCE class (a NIC with DCQCN off) shows up as queue drops in the counters check on either platform, instead
# of filling the lossless queue with no congestion signal and spreading PFC pauses.
ECN_ALLOW_NON_ECT = False


def management(device: DeviceIntent) -> Management:
    """Management interface, VRF and the services (eAPI, SSH) and default route inside that VRF."""
    vrf = device.mgmt_vrf if device.mgmt_vrf != "default" else None
    routes: list[StaticRoute] = ([{"vrf": vrf, "prefix": "0.0.0.0/0", "next_hop": device.mgmt_gateway}]
                                 if vrf and device.mgmt_gateway else [])
    return {
        "vrfs": [{"name": vrf, "ip_routing": False}] if vrf else [],
        "management_interfaces": ([{"name": "Management0", "vrf": vrf, "ip_address": device.mgmt_prefix}]
                                  if device.mgmt_prefix else []),
        "static_routes": routes,
        # eAPI and SSH serve in the management VRF; the default VRF (the fabric) keeps eAPI's default state
        "management_api_http": {"vrfs": [vrf] if vrf else []},
        "management_ssh": {"vrfs": [vrf] if vrf else []},
    }


def structured_config(device: DeviceIntent, local_bfd: bool) -> EosStructuredConfig:
    roce = device.roce
    zone_lists, zone_maps = zone_policy(device)
    # ports the intent leaves without PFC although the profile has lossless priorities (policy.cross_zone: lossy)
    lossy = {i.name for i in device.interfaces if roce.lossless_priorities and not i.lossless_priorities}
    redistributed_lists: list[PrefixList] = ([{"name": PREFIX_LIST, "entries": advertised_prefixes(device)}]
                                             if device.bgp else [])
    redistributed_maps: list[RouteMap] = ([{"name": ROUTE_MAP, "entries": [
        {"seq": 10, "action": "permit", "match_prefix_list": PREFIX_LIST}]}] if device.bgp else [])
    return {
        **management(device),
        "hostname": device.name,
        "site": device.site,
        "role": device.role,
        "qos_profiles": [qos_profile(roce)] + ([qos_profile(roce, lossless=False)] if lossy else []),
        "ethernet_interfaces": [{"name": i.name, "description": i.description, "mtu": i.mtu,
                                 "speed": eos_speed(i.speed_mbps, device.hardware), "ip_address": i.address,
                                 "service_profile": lossy_profile_name(roce) if i.name in lossy else roce.profile}
                                for i in device.interfaces],
        "loopback_interfaces": [{"name": "Loopback0", "ip_address": device.loopback}] if device.loopback else [],
        # every DSCP, unlisted ones to the profile's default TC: EOS' factory map would otherwise keep some
        "qos_maps": {"dscp_to_traffic_class": dscp_groups(roce.dscp_to_tc)},
        "qos_ecn_allow_non_ect": ECN_ALLOW_NON_ECT and roce.ecn.enabled,
        "prefix_lists": redistributed_lists + zone_lists,
        "route_maps": redistributed_maps + zone_maps,
        "pfc_watchdog": _watchdog_timers(roce.watchdog) if roce.watchdog.enabled else None,
        "router_bgp": router_bgp(device.bgp, local_bfd, device) if device.bgp else None,
    }
