"""What an EOS structured config makes each port do with RoCE traffic (nr_run.platforms.qos.DeviceQos).

It reads the keys nr_run.platforms.eos.schema declares (the builder's TypedDicts), so the view and the builder
cannot disagree on one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from nr_run.intent.models import DeviceIntent
from nr_run.platforms.eos.schema import EosStructuredConfig, QosProfile, WatchdogTimers
from nr_run.platforms.qos import DeviceQos, PortQos, Watchdog

# EOS maps traffic class n to tx-queue n unless `qos map traffic-class N to tx-queue Q` says otherwise (EOS User
# Manual, Quality of Service, "Default Traffic Class to Transmit Queue Map" on Strata platforms); a PFC priority
# p pauses traffic class p.
QUEUES = range(8)
# pyavd 6.4 eos_cli_config_gen schema (reference/eos.md): the global watchdog action takes drop|errdisable|
# notify-only, the per-profile port action drop|notify-only (no-drop is refused since EOS dropped it, avd#6399)
GLOBAL_ACTIONS = frozenset({"drop", "errdisable", "notify-only"})
PORT_ACTIONS = frozenset({"drop", "notify-only"})


def _ms(seconds: str) -> int | None:
    try:
        return round(float(seconds) * 1000)
    except ValueError:
        return None      # "auto" polling interval: the platform picks it


def _dscp_map(structured: EosStructuredConfig) -> dict[int, int]:
    from nr_run.platforms.eos.structured import EOS_DEFAULT_DSCP_TO_TC

    out = dict(EOS_DEFAULT_DSCP_TO_TC)
    for group in structured["qos_maps"]["dscp_to_traffic_class"]:
        for dscp in group["dscps"]:
            out[int(dscp)] = int(group["traffic_class"])
    return out


def _watchdog(timers: WatchdogTimers | None, actions: frozenset[str], where: str,
              problems: list[str]) -> Watchdog | None:
    if not timers:
        return None
    timeout, poll, recovery = (_ms(str(timers[k])) for k in ("timeout", "polling_interval", "recovery_time"))
    if timers["action"] not in actions:
        problems.append(f"{where}: watchdog action {timers['action']!r} is not one of {', '.join(sorted(actions))}")
    if timeout is not None and timeout <= 0:
        problems.append(f"{where}: watchdog timeout {timers['timeout']} s must be positive")
    if timeout is not None and poll is not None and poll > timeout:
        problems.append(f"{where}: watchdog polling-interval {timers['polling_interval']} s is longer than its "
                        f"timeout {timers['timeout']} s, so a storm is seen late")
    return Watchdog(timeout or 0, recovery or 0, poll or 0, str(timers["action"]))


def qos_view(device: DeviceIntent, structured: Mapping[str, Any]) -> DeviceQos:
    """The view of a config EosConfig built (the QosView capability takes any mapping: this one is typed)."""
    config = cast(EosStructuredConfig, structured)
    dscp = _dscp_map(config)
    tc_to_queue = {tc: tc for tc in QUEUES}
    profiles: dict[str, QosProfile] = {p["name"]: p for p in config["qos_profiles"]}
    problems: list[str] = []
    glob = _watchdog(config["pfc_watchdog"], GLOBAL_ACTIONS, "global", problems)
    ports: dict[str, PortQos] = {}
    strict: set[int] = set()
    pfc_to_queue = {p: tc_to_queue[p] for p in QUEUES}
    # what a port gets from its service profile, read once per profile (ports share a few profiles); a
    # profile's problems are still reported once per port that uses it, as when each port read it
    by_profile: dict[str, tuple[frozenset[int], frozenset[int], dict[int, tuple[int, int]], set[int], str, list[str]]] = {}
    alike: dict[tuple[str, int], PortQos] = {}
    for itf in config["ethernet_interfaces"]:
        name = itf["service_profile"]
        if name not in by_profile:
            prof = profiles.get(name)
            pfc = prof["pfc"] if prof is not None else None
            prios = frozenset(int(p) for p in pfc["priorities"]) if pfc is not None else frozenset()
            found: list[str] = []
            port_wd = (_watchdog(pfc["watchdog"], PORT_ACTIONS, f"qos profile {prof['name']}", found)
                       if prof is not None and pfc is not None else None)
            queues = prof["tx_queues"] if prof is not None else []
            ecn = {int(q["id"]): (int(e["minimum_bytes"]), int(e["maximum_bytes"]))
                   for q in queues if (e := q["ecn"]) is not None}
            # a tx-queue is strict priority until `no priority` moves it into the weighted group
            strict_queues = set(QUEUES) - {int(q["id"]) for q in queues if q["bandwidth_percent"] is not None}
            by_profile[name] = (prios, prios if (port_wd or glob) else frozenset(), ecn, strict_queues,
                                prof["trust"] if prof is not None else "none", found)
        prios, watched, ecn, strict_queues, trust, found = by_profile[name]
        problems += found
        strict |= strict_queues
        mtu = int(itf["mtu"])
        # ports of one profile and MTU share one view: an analysis judges each distinct view once
        pq = alike.get((name, mtu))
        if pq is None:
            pq = alike[(name, mtu)] = PortQos(
                dscp_to_tc=dscp, tc_to_queue=tc_to_queue, tc_to_pg=None,
                pfc_priority_to_queue=pfc_to_queue, pfc_priorities=prios, lossless_pgs=None,
                ecn_queues=ecn, mtu=mtu, watchdog_priorities=watched, trust=trust)
        ports[itf["name"]] = pq
    return DeviceQos(source=f"{device.name} EOS structured config", ports=ports, strict_queues=frozenset(strict),
                     watchdog=glob, watchdog_problems=tuple(problems),
                     non_ect="admit" if config["qos_ecn_allow_non_ect"] else "drop")
