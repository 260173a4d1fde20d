"""What a SONiC CONFIG_DB makes each port do with RoCE traffic (nr_run.platforms.qos.DeviceQos)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from nr_run.intent.models import DeviceIntent
from nr_run.platforms.qos import BufferView, DeviceQos, PortQos, Watchdog

# sonic-pfcwd.yang: detection_time 100..5000, restoration_time 100..60000 (each >= POLL_INTERVAL), POLL_INTERVAL
# 100..1000 ms, action drop|forward|alert
DETECTION_MS = (100, 5000)
RESTORATION_MS = (100, 60000)
POLL_MS = (100, 1000)
ACTIONS = frozenset({"drop", "forward", "alert"})


def _int_map(table: Mapping[str, Any], name: str | None) -> dict[int, int]:
    entries = table.get(name, {}) if name else {}
    return {int(k): int(v) for k, v in entries.items()}


@lru_cache(maxsize=1024)
def numbers(text: str) -> frozenset[int]:
    """'3,4' or '3-4' -> {3, 4} (SONiC writes priority lists and PG/queue ranges both ways); a config repeats a
    few such texts on every port, hence the cache."""
    out: set[int] = set()
    for part in filter(None, (p.strip() for p in text.split(","))):
        low, _, high = part.partition("-")
        out |= set(range(int(low), int(high or low) + 1))
    return frozenset(out)


def _watchdog(db: Mapping[str, Any], problems: list[str]) -> Watchdog | None:
    table = db.get("PFC_WD", {})
    poll = int(table.get("GLOBAL", {}).get("POLL_INTERVAL", "0") or 0)
    if poll and not POLL_MS[0] <= poll <= POLL_MS[1]:
        problems.append(f"PFC_WD GLOBAL POLL_INTERVAL {poll} ms outside {POLL_MS[0]}..{POLL_MS[1]}")
    first: Watchdog | None = None
    for port, entry in sorted(table.items()):
        if port == "GLOBAL":
            continue
        det, rest = int(entry["detection_time"]), int(entry["restoration_time"])
        for label, value, (low, high) in (("detection_time", det, DETECTION_MS), ("restoration_time", rest, RESTORATION_MS)):
            if not low <= value <= high:
                problems.append(f"PFC_WD {port} {label} {value} ms outside {low}..{high}")
            elif poll and value < poll:
                problems.append(f"PFC_WD {port} {label} {value} ms below POLL_INTERVAL {poll} ms")
        if entry.get("action") not in ACTIONS:
            problems.append(f"PFC_WD {port} action {entry.get('action')!r} is not one of {', '.join(sorted(ACTIONS))}")
        first = first or Watchdog(det, rest, poll, str(entry.get("action")))
    return first


def _buffers(db: Mapping[str, Any]) -> BufferView | None:
    pool = db.get("BUFFER_POOL", {}).get("ingress_lossless_pool")
    if not pool:
        return None
    profiles = db.get("BUFFER_PROFILE", {})
    lossless = {n for n, p in profiles.items() if "xoff" in p and p.get("pool") == "ingress_lossless_pool"}
    pg_xoff: dict[str, int] = {}
    per_port: dict[str, int] = {}
    reserved = 0
    alphas = set()
    for key, entry in db.get("BUFFER_PG", {}).items():
        port, _, pgs = key.partition("|")
        prof = profiles.get(entry.get("profile", ""), {})
        reserved += int(prof.get("size", "0")) * len(numbers(pgs))
        if entry.get("profile") in lossless:
            pg_xoff[port] = int(prof["xoff"])
            per_port[port] = per_port.get(port, 0) + len(numbers(pgs))
            alphas.add(int(prof.get("dynamic_th", "0")))
    return BufferView(pool_bytes=int(pool["size"]), headroom_pool_bytes=int(pool.get("xoff", "0")),
                      dynamic_th=min(alphas, default=0), pg_xoff=pg_xoff,
                      lossless_pgs_per_port=max(per_port.values(), default=0), reserved_bytes=reserved)


def qos_view(device: DeviceIntent, db: Mapping[str, Any]) -> DeviceQos:
    port_qos = db.get("PORT_QOS_MAP", {})
    glob = port_qos.get("global", {})
    lossless_profiles = {n for n, p in db.get("BUFFER_PROFILE", {}).items() if "xoff" in p}
    pgs: dict[str, set[int]] = {}
    for key, entry in db.get("BUFFER_PG", {}).items():
        port, _, pg = key.partition("|")
        if entry.get("profile") in lossless_profiles:
            pgs.setdefault(port, set()).update(numbers(pg))
    wred = db.get("WRED_PROFILE", {})
    ecn: dict[str, dict[int, tuple[int, int]]] = {}
    strict: set[int] = set()
    schedulers = db.get("SCHEDULER", {})
    for key, entry in db.get("QUEUE", {}).items():
        port, _, queue = key.partition("|")
        prof = wred.get(entry.get("wred_profile", ""))
        if prof and prof.get("ecn", "ecn_none") != "ecn_none":
            for q in numbers(queue):
                ecn.setdefault(port, {})[q] = (int(prof["green_min_threshold"]), int(prof["green_max_threshold"]))
        if schedulers.get(entry.get("scheduler", ""), {}).get("type") == "STRICT":
            strict |= numbers(queue)
    ports: dict[str, PortQos] = {}
    maps_read: dict[tuple[str, str | None], dict[int, int]] = {}    # ports share their maps: read each once

    def int_map(table: str, name: str | None) -> dict[int, int]:
        if (table, name) not in maps_read:
            maps_read[(table, name)] = _int_map(db.get(table, {}), name)
        return maps_read[(table, name)]

    # ports configured alike share one view (an analysis judges each distinct view once); alike means the same
    # map names, PFC and watchdog texts, lossless PGs, ECN thresholds and MTU
    alike: dict[tuple[Any, ...], PortQos] = {}
    for name, port in db.get("PORT", {}).items():
        maps = port_qos.get(name, {})
        lossless = frozenset(pgs.get(name, set()))
        marks = ecn.get(name, {})
        mtu = int(port.get("mtu", "9100"))     # portmgrd's default when the PORT entry has no mtu
        dscp_name = maps.get("dscp_to_tc_map") or glob.get("dscp_to_tc_map")
        key = (dscp_name, maps.get("tc_to_queue_map"), maps.get("tc_to_pg_map"), maps.get("pfc_to_queue_map"),
               maps.get("pfc_enable", ""), maps.get("pfcwd_sw_enable", ""), lossless, tuple(sorted(marks.items())), mtu)
        found = alike.get(key)
        if found is None:
            found = alike[key] = PortQos(
                dscp_to_tc=int_map("DSCP_TO_TC_MAP", dscp_name),
                tc_to_queue=int_map("TC_TO_QUEUE_MAP", maps.get("tc_to_queue_map")),
                tc_to_pg=int_map("TC_TO_PRIORITY_GROUP_MAP", maps.get("tc_to_pg_map")),
                pfc_priority_to_queue=int_map("MAP_PFC_PRIORITY_TO_QUEUE", maps.get("pfc_to_queue_map")),
                pfc_priorities=numbers(maps.get("pfc_enable", "")), lossless_pgs=lossless, ecn_queues=marks, mtu=mtu,
                # PFCWD watches pfcwd_sw_enable, not pfc_enable (swss pfcwdorch, 202205+)
                watchdog_priorities=numbers(maps.get("pfcwd_sw_enable", "")), trust="dscp")
        ports[name] = found
    problems: list[str] = []
    wd = _watchdog(db, problems)
    # WRED_PROFILE's wred_<colour>_enable drives the one curve that marks ECT and drops non-ECT packets
    return DeviceQos(source=f"{device.name} SONiC CONFIG_DB", ports=ports, strict_queues=frozenset(strict),
                     watchdog=wd, watchdog_problems=tuple(problems), non_ect="drop",
                     buffers=_buffers(db))
