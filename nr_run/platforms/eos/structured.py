"""EOS structured config (pyavd style): a plain dict of everything the CLI templates print.

Every value is computed here (seconds from ms, watchdog actions, BFD per neighbor), so the templates in
templates/eos/ only format it.
"""

from __future__ import annotations

from typing import Any

from nr_run.intent.models import Bgp, DeviceIntent, Roce, Watchdog
from nr_run.platforms import registry
from nr_run.platforms.format import tx_queues

# EOS watchdog actions are drop|notify-only (no-drop is gone since AVD 6.0, avd#6399); SONiC's alert and
# forward both keep forwarding, which notify-only does.
WATCHDOG_ACTIONS = {"drop": "drop", "alert": "notify-only", "forward": "notify-only"}


def seconds(ms: int) -> str:
    """200 -> '0.2' (EOS takes watchdog timers in seconds)."""
    return f"{ms / 1000:g}"


def dscp_groups(dscp_to_tc: dict[int, int]) -> list[dict[str, Any]]:
    """DSCPs grouped by traffic class, sorted: [{"dscps": [26], "traffic_class": 3}, ...]."""
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in dscp_to_tc.items():
        by_tc.setdefault(tc, []).append(dscp)
    return [{"dscps": sorted(by_tc[tc]), "traffic_class": tc} for tc in sorted(by_tc)]


def _watchdog_timers(wd: Watchdog) -> dict[str, str]:
    return {"timeout": seconds(wd.detection_ms), "polling_interval": seconds(wd.poll_ms),
            "recovery_time": seconds(wd.restoration_ms), "action": WATCHDOG_ACTIONS[wd.action]}


def qos_profile(roce: Roce) -> dict[str, Any]:
    wd = roce.watchdog
    pfc: dict[str, Any] | None = None
    if roce.lossless_priorities:
        port_wd: dict[str, Any] | None = None
        if wd.enabled:
            comment = ("watchdog action forward: EOS has no forward action, notify-only keeps forwarding"
                       if wd.action == "forward" else None)
            port_wd = {**_watchdog_timers(wd), "comment": comment}
        pfc = {"priorities": list(roce.lossless_priorities), "watchdog": port_wd}
    queues = []
    for txq in tx_queues(roce):
        sched = txq.scheduler
        ecn = roce.ecn
        queues.append({
            "id": txq.queue,
            "strict": sched is not None and sched.type == "strict",
            # EOS tx-queues are strict priority until `no priority` puts them in the weighted round-robin group
            "bandwidth_percent": sched.weight if sched is not None and sched.type == "dwrr" else None,
            "ecn": {"minimum_kbytes": ecn.min_kbytes, "maximum_kbytes": ecn.max_kbytes,
                    "max_mark_probability": ecn.max_mark_probability} if txq.ecn else None,
        })
    return {"name": roce.profile, "trust": roce.trust, "pfc": pfc, "tx_queues": queues}


def _bfd_capable(platform: str) -> bool:
    builder = registry.get(platform).config
    return builder is not None and builder.bgp_neighbor_bfd


def router_bgp(bgp: Bgp, local_bfd: bool) -> dict[str, Any]:
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
    }


def structured_config(device: DeviceIntent, local_bfd: bool) -> dict[str, Any]:
    roce = device.roce
    return {
        "hostname": device.name,
        "site": device.site,
        "role": device.role,
        "qos_profiles": [qos_profile(roce)],
        "ethernet_interfaces": [{"name": i.name, "description": i.description, "mtu": i.mtu,
                                 "ip_address": i.address, "service_profile": roce.profile}
                                for i in device.interfaces],
        "loopback_interfaces": [{"name": "Loopback0", "ip_address": device.loopback}] if device.loopback else [],
        # management stays in the default VRF with no default route: the containerlab/OOB network is directly
        # connected, and a default route would compete with the fabric
        "management_interfaces": ([{"name": "Management0", "ip_address": device.mgmt_prefix}]
                                  if device.mgmt_prefix else []),
        "qos_maps": {"dscp_to_traffic_class": dscp_groups(roce.dscp_overrides)},
        "pfc_watchdog": _watchdog_timers(roce.watchdog) if roce.watchdog.enabled else None,
        "router_bgp": router_bgp(device.bgp, local_bfd) if device.bgp else None,
    }
