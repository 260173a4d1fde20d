"""Fast in-process check of the CONFIG_DB references and YANG constraints that matter for RoCE.

Messages imitate libyang as relayed by GCU ("Leafref ... points to a non-existing leaf", range and
pattern errors), so a refused patch reads like the real one.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

PG_RANGE = re.compile(r"^[0-7](-[0-7])?$")
PRIO_LIST = re.compile(r"^([0-7](,[0-7])*)?$")
CABLE = re.compile(r"^[0-9]+m$")
QOS_MAPS = {
    "dscp_to_tc_map": "DSCP_TO_TC_MAP", "tc_to_queue_map": "TC_TO_QUEUE_MAP",
    "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP", "pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE",
    "pfc_to_pg_map": "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "dot1p_to_tc_map": "DOT1P_TO_TC_MAP",
    "tc_to_dscp_map": "TC_TO_DSCP_MAP", "scheduler": "SCHEDULER",
}
WRED_ECN = {"ecn_none", "ecn_green", "ecn_yellow", "ecn_red", "ecn_green_yellow", "ecn_green_red",
            "ecn_yellow_red", "ecn_all"}


def _leafref(module: str, table: str, leaf: str, value: str) -> str:
    return (f'Leafref "/sonic-{module}:sonic-{module}/{table}/{table}_LIST/{leaf}" of value "{value}" '
            f"points to a non-existing leaf.")


def _range(table: str, leaf: str, value: str, lo: int, hi: int) -> str | None:
    try:
        v = int(value)
    except (TypeError, ValueError):
        return f'Invalid value "{value}" in "{leaf}" element. ({table})'
    if not lo <= v <= hi:
        return f'Value "{value}" does not satisfy the constraint "{lo}..{hi}" (range, length, or pattern). ({table}/{leaf})'
    return None


def _enum(table: str, leaf: str, value: str, allowed: set[str]) -> str | None:
    return None if value in allowed else f'Invalid value "{value}" in "{leaf}" element. ({table})'


def check(db: dict[str, dict[str, Any]]) -> list[str]:
    """All violations, sorted (empty when the config is acceptable)."""
    errs: list[str] = []
    ports = db.get("PORT", {})
    lags = db.get("PORTCHANNEL", {})

    def port_ref(module: str, table: str, name: str) -> None:
        if name not in ports and name not in lags:
            errs.append(_leafref(module, table, "name" if table != "QUEUE" else "port", name))

    for name, f in ports.items():
        if "speed" not in f:
            errs.append(f'Mandatory node "speed" instance does not exist. (PORT/{name})')
        for leaf, lo, hi in (("mtu", 68, 9216), ("speed", 1, 4294967295)):
            if leaf in f and (e := _range("PORT", leaf, f[leaf], lo, hi)):
                errs.append(e)
        if "admin_status" in f and (e := _enum("PORT", "admin_status", f["admin_status"], {"up", "down"})):
            errs.append(e)
        if "fec" in f and (e := _enum("PORT", "fec", f["fec"], {"rs", "fc", "none", "auto"})):
            errs.append(e)
    for key in db.get("INTERFACE", {}):
        name, _, pfx = key.partition("|")
        port_ref("interface", "INTERFACE", name)
        if pfx:
            try:
                ipaddress.ip_interface(pfx)
            except ValueError:
                errs.append(f'Invalid value "{pfx}" in "ip-prefix" element. (INTERFACE)')
    for key in db.get("LOOPBACK_INTERFACE", {}):
        name, _, pfx = key.partition("|")
        if not re.fullmatch(r"Loopback\d+", name):
            errs.append(f'Invalid value "{name}" in "name" element. (LOOPBACK_INTERFACE)')
        if pfx:
            try:
                ipaddress.ip_interface(pfx)
            except ValueError:
                errs.append(f'Invalid value "{pfx}" in "ip-prefix" element. (LOOPBACK_INTERFACE)')
    meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
    if "bgp_asn" in meta and (e := _range("DEVICE_METADATA", "bgp_asn", meta["bgp_asn"], 1, 4294967295)):
        errs.append(e)
    for key, f in db.get("BGP_NEIGHBOR", {}).items():
        ip = key.split("|")[-1]
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            errs.append(f'Invalid value "{ip}" in "neighbor" element. (BGP_NEIGHBOR)')
        if "asn" in f and (e := _range("BGP_NEIGHBOR", "asn", f["asn"], 1, 4294967295)):
            errs.append(e)
        if "admin_status" in f and (e := _enum("BGP_NEIGHBOR", "admin_status", f["admin_status"], {"up", "down"})):
            errs.append(e)
    for key, f in db.get("BGP_AGGREGATE_ADDRESS", {}).items():
        # sonic-bgp-aggregate-address.yang: the key is an ip-prefix, the flags YANG booleans
        try:
            ipaddress.ip_network(key)
        except ValueError:
            errs.append(f'Invalid value "{key}" in "aggregate-address" element. (BGP_AGGREGATE_ADDRESS)')
        for leaf in ("bbr-required", "summary-only", "as-set"):
            if leaf in f and (e := _enum("BGP_AGGREGATE_ADDRESS", leaf, f[leaf], {"true", "false"})):
                errs.append(e)
    for table, leaf in (("BUFFER_PG", "profile"), ("BUFFER_QUEUE", "profile")):
        for key, f in db.get(table, {}).items():
            name, _, idx = key.partition("|")
            port_ref("buffer-pg" if table == "BUFFER_PG" else "buffer-queue", table, name)
            if not PG_RANGE.match(idx):
                errs.append(f'Value "{idx}" does not satisfy the constraint "[0-7]((-)[0-7])?" (range, length, or pattern). ({table})')
            prof = f.get(leaf)
            if prof and prof != "NULL" and prof not in db.get("BUFFER_PROFILE", {}):
                errs.append(_leafref(table.lower().replace("_", "-"), table, "profile", prof))
    for f in db.get("BUFFER_PROFILE", {}).values():
        if f.get("pool") not in db.get("BUFFER_POOL", {}):
            errs.append(_leafref("buffer-profile", "BUFFER_PROFILE", "pool", str(f.get("pool"))))
        if "dynamic_th" in f and (e := _range("BUFFER_PROFILE", "dynamic_th", f["dynamic_th"], -8, 7)):
            errs.append(e)
    for f in db.get("BUFFER_POOL", {}).values():
        if "type" in f and (e := _enum("BUFFER_POOL", "type", f["type"], {"ingress", "egress", "both"})):
            errs.append(e)
        if "mode" in f and (e := _enum("BUFFER_POOL", "mode", f["mode"], {"static", "dynamic"})):
            errs.append(e)
    for key, f in db.get("QUEUE", {}).items():
        name, _, idx = key.partition("|")
        port_ref("queue", "QUEUE", name)
        if not PG_RANGE.match(idx):
            errs.append(f'Value "{idx}" does not satisfy the constraint "[0-7]((-)[0-7])?" (range, length, or pattern). (QUEUE)')
        if "scheduler" in f and f["scheduler"] not in db.get("SCHEDULER", {}):
            errs.append(_leafref("queue", "QUEUE", "scheduler", f["scheduler"]))
        if "wred_profile" in f and f["wred_profile"] not in db.get("WRED_PROFILE", {}):
            errs.append(_leafref("queue", "QUEUE", "wred_profile", f["wred_profile"]))
    for f in db.get("SCHEDULER", {}).values():
        if "type" in f and (e := _enum("SCHEDULER", "type", f["type"], {"DWRR", "WRR", "STRICT"})):
            errs.append(e)
        if "weight" in f and (e := _range("SCHEDULER", "weight", f["weight"], 1, 100)):
            errs.append(e)
    for name, f in db.get("WRED_PROFILE", {}).items():
        if len(name) > 32:
            errs.append(f'Value "{name}" does not satisfy the constraint "1..32" (range, length, or pattern). (WRED_PROFILE/name)')
        if "ecn" in f and (e := _enum("WRED_PROFILE", "ecn", f["ecn"], WRED_ECN)):
            errs.append(e)
        for colour in ("green", "yellow", "red"):
            lo, hi = f.get(f"{colour}_min_threshold"), f.get(f"{colour}_max_threshold")
            if lo is not None and hi is not None and lo.isdigit() and hi.isdigit() and int(hi) < int(lo):
                errs.append(f"{colour}_max_threshold must be greater than or equal to {colour}_min_threshold. (WRED_PROFILE/{name})")
            prob = f.get(f"{colour}_drop_probability")
            if prob is not None and (e := _range("WRED_PROFILE", f"{colour}_drop_probability", prob, 0, 100)):
                errs.append(e)
    for name, f in db.get("PORT_QOS_MAP", {}).items():
        if name != "global":
            port_ref("port-qos-map", "PORT_QOS_MAP", name)
        for leaf, table in QOS_MAPS.items():
            if leaf in f and f[leaf] not in db.get(table, {}):
                errs.append(_leafref("port-qos-map", "PORT_QOS_MAP", leaf, f[leaf]))
        for leaf in ("pfc_enable", "pfcwd_sw_enable"):
            if leaf in f and not PRIO_LIST.match(f[leaf]):
                errs.append(f'Value "{f[leaf]}" does not satisfy the constraint "(([0-7])(,([0-7]))*)?" (range, length, or pattern). (PORT_QOS_MAP/{leaf})')
    wd = db.get("PFC_WD", {})
    poll = wd.get("GLOBAL", {}).get("POLL_INTERVAL")
    if poll is not None and (e := _range("PFC_WD", "POLL_INTERVAL", poll, 100, 1000)):
        errs.append(e)
    for name, f in wd.items():
        if name == "GLOBAL":
            continue
        port_ref("pfcwd", "PFC_WD", name)
        if "action" in f and (e := _enum("PFC_WD", "action", f["action"], {"drop", "forward", "alert"})):
            errs.append(e)
        for leaf, lo, hi in (("detection_time", 100, 5000), ("restoration_time", 100, 60000)):
            if leaf in f:
                if e := _range("PFC_WD", leaf, f[leaf], lo, hi):
                    errs.append(e)
                elif poll is not None and poll.isdigit() and int(f[leaf]) < int(poll):
                    errs.append(f"{leaf} must be greater than or equal to POLL_INTERVAL. (PFC_WD/{name})")
    for key, f in db.get("STATIC_ROUTE", {}).items():
        # a one-part key is sonic-static-route.yang's STATIC_ROUTE_TEMPLATE_LIST, which has no blackhole leaf
        if "|" not in key and "blackhole" in f:
            errs.append(f'Node "blackhole" not found as a child of "STATIC_ROUTE_TEMPLATE_LIST" node. '
                        f'(STATIC_ROUTE/{key})')
    for name, f in db.get("CABLE_LENGTH", {}).items():
        for port, length in f.items():
            port_ref("cable-length", "CABLE_LENGTH", port)
            if not CABLE.match(str(length)):
                errs.append(f'Value "{length}" does not satisfy the constraint "[0-9]+m" (range, length, or pattern). (CABLE_LENGTH/{name})')
    return sorted(set(errs))


def empty_tables(db: dict[str, dict[str, Any]]) -> list[str]:
    return sorted(t for t, v in db.items() if isinstance(v, dict) and not v)
