"""CONFIG_DB -> platform-neutral DeviceState (what bgpcfgd, buffermgrd and qosorch would program)."""

from __future__ import annotations

import ipaddress
from typing import Any

from nr_run.lab.twin.state import (
    BgpConfig,
    BgpNeighborConfig,
    DeviceState,
    EcnQueue,
    IfState,
    QosGlobal,
    StaticRoute,
    Watchdog,
)


def _prios(text: str) -> set[int]:
    return {int(p) for p in text.split(",") if p.strip().isdigit()}


def _seconds(value: Any, default: int) -> int:
    return int(value) if str(value).isdigit() else default


def _qindexes(idx: str) -> list[int]:
    lo, _, hi = idx.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def to_state(db: dict[str, dict[str, Any]], default_hostname: str) -> DeviceState:
    meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
    st = DeviceState(hostname=meta.get("hostname", default_hostname), system_mac=str(meta.get("mac", "")))
    for key in db.get("LOOPBACK_INTERFACE", {}):
        name, _, pfx = key.partition("|")
        if pfx and "." in pfx:
            st.loopbacks.setdefault(name, pfx)
    qos_map = db.get("PORT_QOS_MAP", {})
    wred = db.get("WRED_PROFILE", {})
    sched = db.get("SCHEDULER", {})
    wd_tab = db.get("PFC_WD", {})
    poll = int(wd_tab.get("GLOBAL", {}).get("POLL_INTERVAL", "0") or 0)
    for name, f in db.get("PORT", {}).items():
        ifs = IfState(name=name, admin_up=f.get("admin_status", "down") == "up",  # YANG default: down
                      mtu=int(f.get("mtu", "9100")), description=f.get("description", ""),
                      speed_mbps=int(f["speed"]) if str(f.get("speed", "")).isdigit() else None,
                      # lldpmgrd: `lldpcli configure ports <port> lldp portidsubtype local <alias>`
                      lldp_port_id=f.get("alias") or None)
        qm = qos_map.get(name, {})
        ifs.pfc_priorities = _prios(qm.get("pfc_enable", ""))
        ifs.pfc_enabled = bool(ifs.pfc_priorities)
        ifs.trust_dscp = "dscp_to_tc_map" in qm or "dscp_to_tc_map" in qos_map.get("global", {})
        ifs.qos_profile = qm.get("dscp_to_tc_map")
        wd = wd_tab.get(name)
        # pfcwd follows pfcwd_sw_enable (swss 202205+), and only acts on PFC-enabled ports.
        if wd and _prios(qm.get("pfcwd_sw_enable", "")) and ifs.pfc_enabled:
            ifs.watchdog = Watchdog(True, int(wd.get("detection_time", 0)), int(wd.get("restoration_time", 0)),
                                    poll, wd.get("action", "drop"))
        st.interfaces[name] = ifs
    for key, f in db.get("QUEUE", {}).items():
        name, _, idx = key.partition("|")
        queue_if = st.interfaces.get(name)
        if queue_if is None:
            continue
        for q in _qindexes(idx):
            prof = wred.get(f.get("wred_profile", ""), {})
            if prof.get("ecn", "ecn_none") != "ecn_none" and "green_min_threshold" in prof:
                queue_if.ecn[q] = EcnQueue(int(prof["green_min_threshold"]), int(prof.get("green_max_threshold", 0)),
                                      int(prof.get("green_drop_probability", 100)))
            s = sched.get(f.get("scheduler", ""), {})
            if s.get("type") == "STRICT":
                queue_if.strict_queues.add(q)
            elif "weight" in s:
                queue_if.queue_weights[q] = int(s["weight"])
    for key in db.get("INTERFACE", {}):
        name, _, pfx = key.partition("|")
        if pfx and "." in pfx and name in st.interfaces:
            st.interfaces[name].ipv4 = pfx
    glob = qos_map.get("global", {})
    dscp_map = db.get("DSCP_TO_TC_MAP", {}).get(glob.get("dscp_to_tc_map", ""), {})
    if not dscp_map:
        names = {qm.get("dscp_to_tc_map") for qm in qos_map.values()} - {None}
        dscp_map = db.get("DSCP_TO_TC_MAP", {}).get(sorted(names)[0], {}) if names else {}
    st.qos = QosGlobal(dscp_to_tc={int(k): int(v) for k, v in dscp_map.items()},
                       tc_to_queue={int(k): int(v) for k, v in
                                    next(iter(db.get("TC_TO_QUEUE_MAP", {}).values()), {}).items()})
    for key, f in sorted(db.get("STATIC_ROUTE", {}).items()):
        vrf, _, prefix = key.rpartition("|")
        if vrf not in ("", "default"):
            continue
        st.static_routes.append(StaticRoute(prefix=prefix, next_hop=str(f.get("nexthop", "")).split(",")[0],
                                            blackhole=f.get("blackhole") == "true",
                                            advertise=f.get("advertise", "true") != "false"))
    asn = meta.get("bgp_asn")
    if asn and str(asn).isdigit():
        router_id = meta.get("bgp_router_id") or next((p.split("/")[0] for p in st.loopbacks.values()), None)
        # bgpd.main.conf.j2 (bgpcfgd): maximum-paths 64 and `network <Loopback0>/32` only; routed-port
        # subnets are NOT advertised. STATIC_ROUTE entries are (StaticRouteMgr: `redistribute static
        # route-map STATIC_ROUTE_FILTER`, tag 1 unless advertise is "false").
        bgp = BgpConfig(asn=int(asn), router_id=router_id, maximum_paths=64, ecmp=64,
                        redistribute_connected=False, redistribute_static=bool(st.static_routes),
                        networks=[st.loopbacks["Loopback0"]] if "Loopback0" in st.loopbacks else [])
        # AggregateAddressMgr: `aggregate-address <prefix> [summary-only]` once BBR's state is known (BBRMgr
        # starts it "disabled"), so an entry without bbr-required is always pushed
        bgp.aggregates = {str(ipaddress.ip_network(k)): f.get("summary-only") == "true"
                          for k, f in sorted(db.get("BGP_AGGREGATE_ADDRESS", {}).items())
                          if f.get("bbr-required", "false") != "true"}
        owned = {i.ipv4.split("/")[0] for i in st.interfaces.values() if i.ipv4}
        for key, f in db.get("BGP_NEIGHBOR", {}).items():
            ip = key.split("|")[-1]
            # bgpcfgd waits for an interface owning local_addr before it adds the peer
            if f.get("local_addr") and f["local_addr"] not in owned:
                continue
            down = f.get("admin_status", "down" if meta.get("default_bgp_status") == "down" else "up") == "down"
            bgp.neighbors[ip] = BgpNeighborConfig(remote_as=int(f["asn"]) if str(f.get("asn", "")).isdigit() else None,
                                                  description=f.get("name", ""), shutdown=down,
                                                  peer_group="PEER_V4",
                                                  keepalive_s=_seconds(f.get("keepalive"), 60),
                                                  hold_s=_seconds(f.get("holdtime"), 180))
        st.bgp = bgp
    return st
