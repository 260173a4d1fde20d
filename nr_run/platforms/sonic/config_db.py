"""A switch's SONiC CONFIG_DB as a Python dict (202111+ plain-name references); every value is a string."""

from __future__ import annotations

from typing import Any

from nr_run.intent.models import DeviceIntent, Interface
from nr_run.platforms.format import tx_queues
from nr_run.platforms.sonic import hwsku
from nr_run.platforms.sonic.buffers import buffer_tables, cable_lengths, sku

DEVICE_TYPES = {"rtsw": "LeafRouter", "ctsw": "SpineRouter", "atsw": "SpineRouter"}


def port_facts(itf: Interface, device: DeviceIntent) -> dict[str, str]:
    """PORT lanes, alias, index and speed of a port: its HWSKU's port_config.ini row at the link's speed."""
    return hwsku.port_entry(sku(device), itf.name, itf.speed_mbps)


def breakout_cfg(device: DeviceIntent) -> dict[str, dict[str, str]]:
    """BREAKOUT_CFG of every platform.json parent a cabled port belongs to: the mode that runs its links
    (hwsku.breakout_mode; preflight refuses two ports of one parent that need different modes)."""
    prof = sku(device)
    out: dict[str, dict[str, str]] = {}
    for itf in device.interfaces:
        parent = prof.parent_of(itf.name)
        mode = hwsku.breakout_mode(prof, itf.name, itf.speed_mbps) if parent is not None else None
        if parent is not None and mode is not None:
            out.setdefault(parent.name, {"brkout_mode": mode})
    return out


def management(device: DeviceIntent) -> dict[str, Any]:
    """MGMT_PORT and MGMT_INTERFACE (its keys refer to a MGMT_PORT entry: sonic-mgmt_interface leafref);
    `gwaddr` only when the site has a management gateway."""
    return {"MGMT_PORT": {"eth0": {"admin_status": "up", "alias": "eth0"}},
            "MGMT_INTERFACE": {f"eth0|{device.mgmt_prefix}":
                               {"gwaddr": device.mgmt_gateway} if device.mgmt_gateway else {}}}


def metadata(device: DeviceIntent) -> dict[str, Any]:
    return {
        "DEVICE_METADATA": {"localhost": {
            "hostname": device.name,
            "bgp_asn": str(device.asn),
            "bgp_router_id": device.router_id,
            "type": DEVICE_TYPES[device.role],
            "hwsku": device.model,
            "platform": device.hardware.platform_id,
            "docker_routing_config_mode": "separated",
            "buffer_model": "traditional",
            "default_pfcwd_status": "enable" if device.roce.watchdog.enabled else "disable",
        }},
        **management(device),
        "LLDP": {"GLOBAL": {"enabled": "true"}},
        # counter polling (`counterpoll`): PORT carries the per-priority PFC frames (`show pfc counters`), PFCWD
        # the watchdog, QUEUE/PG_DROP the drops, WRED_ECN_QUEUE the ECN marks (`show queue wredcounters`);
        # every group is a container of sonic-flex_counter.yang
        "FLEX_COUNTER_TABLE": {table: {"FLEX_COUNTER_STATUS": "enable"}
                               for table in ("PORT", "PFCWD", "QUEUE", "PG_DROP", "PG_WATERMARK", "QUEUE_WATERMARK",
                                             "WRED_ECN_QUEUE")},
    }


def ports(device: DeviceIntent) -> dict[str, Any]:
    prof = sku(device) if device.interfaces else None     # read once, not once per port
    return {
        "PORT": {itf.name: {**hwsku.port_entry(prof, itf.name, itf.speed_mbps), "mtu": str(itf.mtu),
                            "fec": itf.fec, "admin_status": "up", "description": itf.description}
                 for itf in device.interfaces if prof is not None},
        "DEVICE_NEIGHBOR": {itf.name: {"name": itf.peer_device, "port": itf.peer_port, "local_port": itf.name}
                            for itf in device.interfaces},
        "CABLE_LENGTH": {"AZURE": cable_lengths(device)},
        **({"BREAKOUT_CFG": cfg} if (cfg := breakout_cfg(device)) else {}),
    }


def routing(device: DeviceIntent) -> dict[str, Any]:
    if device.bgp is None or device.loopback is None:
        raise ValueError(f"{device.name}: a SONiC switch needs a loopback and BGP in the intent")
    bgp = device.bgp
    interfaces: dict[str, dict[str, str]] = {}
    for itf in device.interfaces:
        interfaces[itf.name] = {}
        interfaces[f"{itf.name}|{itf.address}"] = {}
    out: dict[str, Any] = {
        "INTERFACE": interfaces,
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{device.loopback}": {}},
        # bgpcfgd renders these into FRR; it has no per-neighbor BFD (bgp_neighbor_bfd is False)
        "BGP_NEIGHBOR": {peer.address: {"asn": str(peer.remote_asn), "name": peer.peer_device,
                                        "local_addr": peer.local_address, "admin_status": "up",
                                        "holdtime": str(bgp.holdtime), "keepalive": str(bgp.keepalive)}
                         for peer in bgp.peers},
    }
    if device.host_block:
        # bgpcfgd advertises only Loopback0, never routed-port subnets: a blackhole summary of the host /31s
        # is redistributed instead (StaticRouteMgr, tag 1 unless "advertise" is "false"). The key is
        # "<vrf>|<prefix>": a one-part key is sonic-static-route's template list, which has no blackhole.
        out["STATIC_ROUTE"] = {f"default|{device.host_block}": {"blackhole": "true"}}
    if device.zone_summary:
        out["BGP_AGGREGATE_ADDRESS"] = aggregate_addresses(device.zone_summary)
    return out


def aggregate_addresses(summary: str) -> dict[str, dict[str, str]]:
    """BGP_AGGREGATE_ADDRESS: bgpcfgd's AggregateAddressMgr renders `aggregate-address <prefix>` into FRR (once
    BBRMgr has set BBR's state, "disabled" at start, so an entry without bbr-required is always pushed) for a
    multi-zone CTSW's zone summary. Not summary-only, so the zone's RTSWs keep every specific (RFC 7938 8.2);
    the ATSWs drop the specifics on receipt (an EOS route-map; a SONiC ATSW is refused in preflight)."""
    return {summary: {"bbr-required": "false", "summary-only": "false", "as-set": "false"}}


def _int_map(mapping: dict[int, int]) -> dict[str, str]:
    return {str(k): str(v) for k, v in sorted(mapping.items())}


def qos(device: DeviceIntent) -> dict[str, Any]:
    roce = device.roce
    name = roce.profile.upper()
    wred = f"{roce.profile}_lossless".upper()
    maps = {"dscp_to_tc_map": name, "tc_to_queue_map": name, "tc_to_pg_map": name, "pfc_to_queue_map": name}
    port_qos: dict[str, dict[str, str]] = {"global": {"dscp_to_tc_map": name}}
    for itf in device.interfaces:
        pfc = ",".join(str(p) for p in itf.lossless_priorities)
        port_qos[itf.name] = {**maps, "pfc_enable": pfc, "pfcwd_sw_enable": pfc if roce.watchdog.enabled else ""}
    schedulers = {f"scheduler.q{s.queue}": {"type": "STRICT"} if s.type == "strict"
                  else {"type": "DWRR", "weight": str(s.weight)} for s in roce.schedulers}
    queues: dict[str, dict[str, str]] = {}
    txqs = tx_queues(roce)          # one profile for every port
    for itf in device.interfaces:
        for txq in txqs:
            entry: dict[str, str] = {}
            if txq.scheduler is not None:
                entry["scheduler"] = f"scheduler.q{txq.queue}"
            if txq.ecn:
                entry["wred_profile"] = wred
            queues[f"{itf.name}|{txq.queue}"] = entry
    out: dict[str, Any] = {
        "DSCP_TO_TC_MAP": {name: _int_map(roce.dscp_to_tc)},
        "TC_TO_PRIORITY_GROUP_MAP": {name: _int_map(roce.tc_to_pg)},
        "TC_TO_QUEUE_MAP": {name: _int_map(roce.tc_to_queue)},
        "MAP_PFC_PRIORITY_TO_QUEUE": {name: _int_map(roce.pfc_priority_to_queue)},
        "PORT_QOS_MAP": port_qos,
        "SCHEDULER": schedulers,
        "QUEUE": queues,
    }
    if roce.ecn.enabled:
        ecn = roce.ecn
        profile = {"ecn": "ecn_all"}
        for color in ("green", "yellow", "red"):
            profile |= {f"wred_{color}_enable": "true", f"{color}_min_threshold": str(ecn.min_bytes),
                        f"{color}_max_threshold": str(ecn.max_bytes),
                        f"{color}_drop_probability": str(ecn.max_mark_probability)}
        out["WRED_PROFILE"] = {wred: profile}
    else:
        # ECN off (a PFC-only site): the lossless queue gets a profile that neither marks nor drops early, which
        # also replaces the factory QoS's ECN profile on that queue (a merge would keep a reference left out)
        out["WRED_PROFILE"] = {wred: {"ecn": "ecn_none", "wred_green_enable": "false",
                                      "wred_yellow_enable": "false", "wred_red_enable": "false"}}
        for itf in device.interfaces:
            queues.setdefault(f"{itf.name}|{roce.ecn.queue}", {})["wred_profile"] = wred
    return out


def pfc_watchdog(device: DeviceIntent) -> dict[str, Any]:
    wd = device.roce.watchdog
    table: dict[str, dict[str, str]] = {"GLOBAL": {"POLL_INTERVAL": str(wd.poll_ms)}}
    if wd.enabled:
        for itf in device.interfaces:
            table[itf.name] = {"action": wd.action, "detection_time": str(wd.detection_ms),
                               "restoration_time": str(wd.restoration_ms)}
    return {"PFC_WD": table}


def config_db(device: DeviceIntent) -> dict[str, Any]:
    """The whole CONFIG_DB of a switch: every table, each built from the intent."""
    return {**metadata(device), **ports(device), **routing(device), **qos(device), **buffer_tables(device),
            **pfc_watchdog(device)}
