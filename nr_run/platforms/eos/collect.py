"""EOS collector: eAPI commands per state section and parsers from their output to the state model.

Commands go through the NAPALM eos driver's pyeapi Node (`device.device.run_commands`), JSON unless
the command has no verified JSON shape. QoS/PFC/ECN *configuration* is read from `show running-config`
text: its syntax is documented (AVD templates, shared/reference/eos.md §1), whereas the JSON of
`show priority-flow-control`, `show qos interfaces` and `show qos profile` is unverified (§3).

JSON shapes (shared/reference/eos.md §3, ANTA unit-test data):
  show interfaces                         interfaces.{if}.{interfaceStatus, lineProtocolStatus, mtu, bandwidth,
                                            interfaceCounters.linkStatusChanges}
  show lldp neighbors                     lldpNeighbors[{port, neighborDevice, neighborPort}]
  show ip bgp summary vrf all             vrfs.{vrf}.peers.{ip}.{peerState, prefixReceived, asn}
  show ip route vrf default               vrfs.default.routes.{prefix}.{routeType, vias[{nexthopAddr, interface}]}
  show ip route vrf default <prefix>      the same shape, holding that prefix only (absent: no route)
  show priority-flow-control counters     interfaceCounters.{if}.{rxFrames, txFrames}
  show interfaces counters queue detail   egressQueueCounters.interfaces.{if}.ucastQueues.trafficClasses.TCn
                                            .dropPrecedences.DPn.droppedPackets
  show qos interfaces ecn counters queue  intfQueueCounters.{if}.queueCounters.{q}: "n" | "-"
  (per-priority `priorities.{p}.{rxFrames, txFrames}` used when present)
  show queue-monitor length (LANZ)        lanzEnabled, entryList[{interface, trafficClass, queueLength}]
                                            (field names: aristanetworks/goeapi module/queue.go ShowQueueMonitor)
UNVERIFIED (no public JSON sample; the shape lab/twin/eos/show.py serves, storm status only is read):
  show priority-flow-control              interfaces.{if}.watchdog.stormDetected.{prio}: bool
Queue watermarks come from LANZ, EOS' queue-length monitor: the peak `queueLength` (bytes) of its entries per
(interface, traffic class) since `clear queue-monitor length statistics`; a queue with no entry stayed below
the LANZ threshold (0). UNVERIFIED: how many entries a switch keeps (an old peak may age out of the list).
LANZ is optional: a platform without it (cEOS lab images may refuse it) still gives every other counter.
EOS shows no PFC pause duration in its CLI (only frame counts), so none is read.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from nr_run.intent.models import DeviceIntent
from nr_run.platforms.collector import LookupCollector, once_per_output
from nr_run.platforms.eos.structured import EOS_DEFAULT_DSCP_TO_TC
from nr_run.platforms.state import (
    BgpPeerState,
    CounterSample,
    DeviceState,
    EcnQueueState,
    InterfaceState,
    LldpNeighbor,
    NextHop,
    PortCounters,
    QosPortState,
    RouteState,
    StormState,
    WatchdogState,
    as_int,
)

RUNNING = "show running-config"

# section -> [(command, encoding)]
# read in the same request as the PFC counters, right after them: its utcTime (epoch seconds) times the sample
CLOCK = "show clock"

COMMANDS: dict[str, list[tuple[str, str]]] = {
    "interfaces": [("show interfaces", "json")],
    "lldp": [("show lldp neighbors", "json")],
    "bgp": [("show ip bgp summary vrf all", "json")],
    "routes": [("show ip route vrf default", "json")],
    "pfc": [(RUNNING, "text"), ("show priority-flow-control", "json")],
    "qos": [(RUNNING, "text")],
    "counters": [("show priority-flow-control counters", "json"), (CLOCK, "json"),
                 ("show interfaces counters queue detail", "json"),
                 ("show qos interfaces ecn counters queue", "json")],
}

LANZ = "show queue-monitor length"
# commands a platform may not support: run on their own, a refusal leaves their data out
OPTIONAL: dict[str, list[tuple[str, str]]] = {"counters": [(LANZ, "json")]}
_OPTIONAL_NAMES = {c for cmds in OPTIONAL.values() for c, _ in cmds}

Runner = Callable[[list[tuple[str, str]]], dict[str, Any]]


def runner(task: Any) -> Runner:
    """Run commands over the host's NAPALM eos connection; returns {command: json dict | text}."""
    from pyeapi.eapilib import CommandError  # with the connection: loading the plug-in does not pay for it

    device = task.host.get_connection("napalm", task.nornir.config)

    def results(group: list[str], encoding: str) -> dict[str, Any]:
        replies = device.device.run_commands(group, encoding=encoding)
        return {c: reply(r, encoding) for c, r in zip(group, replies, strict=True)}

    def reply(r: Any, encoding: str) -> Any:
        return r if encoding == "json" else r.get("output", "")

    def run(cmds: list[tuple[str, str]]) -> dict[str, Any]:
        """One eAPI request per encoding, the optional commands last: eAPI stops at the first command that
        fails and returns the outputs before it, so a refused optional command costs its data, not a request
        of its own (nor the required ones' results)."""
        out: dict[str, Any] = {}
        for encoding in ("json", "text"):
            required = [c for c, e in cmds if e == encoding and c not in _OPTIONAL_NAMES]
            todo = required + [c for c, e in cmds if e == encoding and c in _OPTIONAL_NAMES]
            while todo:
                try:
                    out.update(results(todo, encoding))
                    break
                except CommandError as exc:
                    # the error's data: pyeapi's `enable`, each command's output, then the failing one's errors
                    done = list(exc.output or [])[1:-1]
                    if len(done) < len(required) or len(done) >= len(todo):
                        raise                 # a required command failed (or the reply says nothing usable)
                    out.update({c: reply(r, encoding) for c, r in zip(todo, done, strict=False)})
                    required = required[len(done):]
                    todo = todo[len(done) + 1:]   # the refused optional command's data is left out
        return out

    return run


def section_commands(section: str, device: DeviceIntent) -> list[tuple[str, str]]:
    return COMMANDS.get(section, []) + OPTIONAL.get(section, [])


# ---------------------------------------------------------------- parsers (pure)

def parse_interfaces(data: dict[str, Any]) -> dict[str, InterfaceState]:
    result = {}
    for name, i in data.get("interfaces", {}).items():
        bw = i.get("bandwidth")
        result[name] = InterfaceState(
            name=name,
            admin_up=i.get("interfaceStatus") != "disabled",
            oper_up=i.get("lineProtocolStatus") == "up",
            speed_mbps=int(bw) // 1_000_000 if bw else None,
            mtu=i.get("mtu"),
            link_changes=as_int((i.get("interfaceCounters") or {}).get("linkStatusChanges")),
        )
    return result


def parse_lldp(data: dict[str, Any]) -> list[LldpNeighbor]:
    return [LldpNeighbor(n["port"], n["neighborDevice"], n["neighborPort"]) for n in data.get("lldpNeighbors", [])]


def parse_bgp(data: dict[str, Any], vrf: str = "default") -> dict[str, BgpPeerState]:
    peers = data.get("vrfs", {}).get(vrf, {}).get("peers", {})
    return {
        ip: BgpPeerState(ip, as_int(p.get("asn", p.get("peerAsn"))), p.get("peerState", ""),
                         as_int(p.get("prefixReceived", p.get("prefixAccepted"))) or 0)
        for ip, p in peers.items()
    }


def parse_routes(data: dict[str, Any], vrf: str = "default") -> dict[str, RouteState]:
    routes = data.get("vrfs", {}).get(vrf, {}).get("routes", {})
    return {
        prefix: RouteState(prefix, r.get("routeType", ""),
                           [NextHop(v.get("nexthopAddr", ""), v.get("interface", "")) for v in r.get("vias", [])])
        for prefix, r in routes.items()
    }


def _blocks(text: str) -> list[tuple[str, list[str]]]:
    """Top-level config lines with their indented children (children keep relative indentation)."""
    blocks: list[tuple[str, list[str]]] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.strip() == "!":
            continue
        if not line.startswith(" "):
            blocks.append((line.strip(), []))
        elif blocks:
            blocks[-1][1].append(line)
    return blocks


_UNITS = {"bytes": 1, "kbytes": 1000, "mbytes": 1_000_000}


class _PortQos:
    """QoS statements of an interface or a qos profile; None means "not stated here"."""

    def __init__(self) -> None:
        self.trust: str | None = None
        self.trust_set = False
        self.pfc_on: bool | None = None
        self.no_drop: dict[int, bool] = {}
        self.wd: bool | None = None
        self.wd_action: str | None = None
        self.wd_timeout: float | None = None
        self.wd_recovery: float | None = None
        self.queues: dict[int, dict[str, Any]] = {}
        self.profile: str | None = None
        self.routed = False
        self.mtu: int | None = None

    def feed(self, children: list[str]) -> None:
        queue: int | None = None
        for raw in children:
            depth = len(raw) - len(raw.lstrip())
            s = raw.strip()
            if s.startswith("tx-queue "):
                queue = int(s.split()[1])
                self.queues.setdefault(queue, {})
                continue
            if queue is not None and depth > 3:
                q = self.queues[queue]
                if s == "priority strict":
                    q["sched"] = "strict"
                elif s == "no priority":
                    q["sched"] = "dwrr"
                elif m := re.match(r"random-detect ecn minimum-threshold (\d+) (\w+) maximum-threshold (\d+) (\w+)"
                                   r"(?: max-mark-probability (\d+))?", s):
                    q["ecn"] = (int(m[1]) * _UNITS.get(m[2], 0) or None, int(m[3]) * _UNITS.get(m[4], 0) or None,
                                as_int(m[5]))
                continue
            queue = None
            if s.startswith("qos trust "):
                self.trust, self.trust_set = s.split()[2], True
            elif s == "no qos trust":
                self.trust, self.trust_set = None, True
            elif s == "priority-flow-control on":
                self.pfc_on = True
            elif s == "no priority-flow-control":
                self.pfc_on = False
            elif m := re.match(r"priority-flow-control priority (\d) (no-drop|drop)$", s):
                self.no_drop[int(m[1])] = m[2] == "no-drop"
            elif s == "priority-flow-control pause watchdog":
                self.wd = True
            elif s == "no priority-flow-control pause watchdog":
                self.wd = False
            elif m := re.match(r"priority-flow-control pause watchdog port action (\S+)", s):
                self.wd_action = m[1]
            elif m := re.match(r"priority-flow-control pause watchdog port timer timeout (\S+)"
                               r"(?: polling-interval \S+)?(?: recovery-time (\S+))?", s):
                self.wd_timeout, self.wd_recovery = float(m[1]), float(m[2]) if m[2] else None
            elif s.startswith("service-profile "):
                self.profile = s.split()[1]
            elif s == "no switchport":
                self.routed = True
            elif s.startswith("mtu "):
                self.mtu = int(s.split()[1])


def _merge(profile: _PortQos | None, intf: _PortQos) -> _PortQos:
    """Interface statements override the service-profile's."""
    if profile is None:
        return intf
    m = _PortQos()
    m.routed = intf.routed
    m.trust, m.trust_set = (intf.trust, True) if intf.trust_set else (profile.trust, profile.trust_set)
    for attr in ("pfc_on", "wd", "wd_action", "wd_timeout", "wd_recovery"):
        setattr(m, attr, getattr(intf, attr) if getattr(intf, attr) is not None else getattr(profile, attr))
    m.no_drop = {**profile.no_drop, **intf.no_drop}
    m.queues = {q: {**profile.queues.get(q, {}), **intf.queues.get(q, {})} for q in {*profile.queues, *intf.queues}}
    return m


# EOS port watchdog actions -> the neutral ones: notify-only keeps the queue forwarding.
_ACTIONS = {"drop": "drop", "notify-only": "forward"}


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


def parse_running_qos(text: str) -> dict[str, Any]:
    """PFC priorities, watchdog, ECN, trust, DSCP map and schedulers per Ethernet interface.

    Returns {"pfc": {port: [prio]}, "watchdog": {port: WatchdogState}, "ecn": {(port, q): EcnQueueState},
    "qos": {port: QosPortState}}. EOS defaults assumed where nothing is configured: a routed port trusts
    DSCP, a tx-queue without `no priority` is strict priority, a DSCP without a `qos map dscp` line keeps
    EOS' factory class. The DSCP map is therefore the complete (effective) one: all 64 code points.
    """
    profiles: dict[str, _PortQos] = {}
    intfs: dict[str, _PortQos] = {}
    dscp_map: dict[int, int] = {}
    wd_default: dict[str, Any] = {}
    for head, children in _blocks(text):
        if head.startswith("qos profile "):
            profiles[head.split()[2]] = p = _PortQos()
            p.feed(children)
        elif head.startswith("interface Ethernet"):
            intfs[head.split()[1]] = p = _PortQos()
            p.feed(children)
        elif m := re.match(r"qos map dscp ([\d ]+) to traffic-class (\d)$", head):
            for d in m[1].split():
                dscp_map[int(d)] = int(m[2])
        elif m := re.match(r"priority-flow-control pause watchdog default (timeout|recovery-time) (\S+)", head):
            wd_default[m[1]] = float(m[2])
        elif m := re.match(r"priority-flow-control pause watchdog action (\S+)", head):
            wd_default["action"] = m[1]
    out: dict[str, Any] = {"pfc": {}, "watchdog": {}, "ecn": {}, "qos": {}}
    for port, intf in intfs.items():
        p = _merge(profiles.get(intf.profile) if intf.profile else None, intf)
        prios = sorted(k for k, v in p.no_drop.items() if v) if p.pfc_on else []
        out["pfc"][port] = prios
        wd_on = bool(p.pfc_on and p.wd)
        out["watchdog"][port] = WatchdogState(
            enabled=wd_on,
            action=_neutral_action(p.wd_action or wd_default.get("action", "")) if wd_on else "",
            detection_ms=_ms(p.wd_timeout if p.wd_timeout is not None else wd_default.get("timeout")) if wd_on else None,
            restoration_ms=_ms(p.wd_recovery if p.wd_recovery is not None else wd_default.get("recovery-time"))
            if wd_on else None,
        )
        for q, qd in sorted(p.queues.items()):
            if "ecn" in qd:
                lo, hi, prob = qd["ecn"]
                out["ecn"][(port, q)] = EcnQueueState(port, q, True, lo, hi, prob)
        trust = p.trust if p.trust_set else ("dscp" if p.routed else "cos")
        out["qos"][port] = QosPortState(
            port=port, trust=trust, dscp_to_tc={**EOS_DEFAULT_DSCP_TO_TC, **dscp_map},
            schedulers={q: p.queues.get(q, {}).get("sched", "strict") for q in range(8)},
            dscp_map="complete",
        )
    return out


def _neutral_action(action: str) -> str:
    return _ACTIONS.get(action, action)


def parse_watchdog_status(data: dict[str, Any]) -> list[StormState]:
    storms = []
    for port, i in sorted(data.get("interfaces", {}).items()):
        detected = i.get("watchdog", {}).get("stormDetected", {})
        for prio, stormed in sorted(detected.items(), key=lambda kv: int(kv[0])):
            storms.append(StormState(port, int(prio), bool(stormed), int(bool(stormed))))
    return storms


def parse_lanz(data: dict[str, Any]) -> dict[str, dict[int, int]]:
    """`show queue-monitor length` -> {interface: {traffic class: peak queue length}} (empty when LANZ is off)."""
    out: dict[str, dict[int, int]] = {}
    if not data.get("lanzEnabled", False):
        return out
    for entry in data.get("entryList", []):
        port, tc, length = entry.get("interface"), as_int(entry.get("trafficClass")), as_int(entry.get("queueLength"))
        if port and tc is not None and length is not None:
            peaks = out.setdefault(str(port), {})
            peaks[tc] = max(peaks.get(tc, 0), length)
    return out


def parse_counters(pfc: dict[str, Any], queues: dict[str, Any], ecn: dict[str, Any], taken_at: float,
                   lanz: dict[str, Any] | None = None) -> CounterSample:
    ports: dict[str, PortCounters] = {}
    for port, c in pfc.get("interfaceCounters", {}).items():
        pc = ports.setdefault(port, PortCounters())
        pc.pfc_rx_total, pc.pfc_tx_total = int(c.get("rxFrames", 0)), int(c.get("txFrames", 0))
        for prio, pc_prio in c.get("priorities", {}).items():
            pc.pfc_rx[int(prio)] = int(pc_prio.get("rxFrames", 0))
            pc.pfc_tx[int(prio)] = int(pc_prio.get("txFrames", 0))
    for port, i in queues.get("egressQueueCounters", {}).get("interfaces", {}).items():
        pc = ports.setdefault(port, PortCounters())
        for tc, t in i.get("ucastQueues", {}).get("trafficClasses", {}).items():
            drops = sum(int(dp.get("droppedPackets", 0)) for dp in t.get("dropPrecedences", {}).values())
            pc.queue_drops[int(tc.removeprefix("TC"))] = drops
    for port, i in ecn.get("intfQueueCounters", {}).items():
        pc = ports.setdefault(port, PortCounters())
        for q, v in i.get("queueCounters", {}).items():
            if str(v).isdigit():
                pc.ecn_marks[int(q)] = int(v)
    if lanz is not None and lanz.get("lanzEnabled", False):
        peaks = parse_lanz(lanz)
        for port, pc in ports.items():
            pc.queue_watermark_bytes = {q: peaks.get(port, {}).get(q, 0) for q in range(8)}
    return CounterSample(taken_at, dict(sorted(ports.items())))


def parse_clock(data: Any) -> float | None:
    """`show clock` (json) -> the device's epoch time, or None when the reply has no usable utcTime."""
    value = data.get("utcTime") if isinstance(data, dict) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None


# the "pfc" and "qos" sections read the same running config
_running_qos = once_per_output(parse_running_qos)


def apply_section(section: str, out: Mapping[str, Any], state: DeviceState, device: DeviceIntent | None = None,
                  taken_at: float = 0.0) -> None:
    """Fill one state section from the raw outputs of its commands."""
    if section == "interfaces":
        state.interfaces = parse_interfaces(out["show interfaces"])
    elif section == "lldp":
        state.lldp = parse_lldp(out["show lldp neighbors"])
    elif section == "bgp":
        state.bgp = parse_bgp(out["show ip bgp summary vrf all"])
    elif section == "routes":
        state.routes = parse_routes(out["show ip route vrf default"])
    elif section == "pfc":
        q = _running_qos(out[RUNNING])
        state.pfc_priorities, state.watchdog = q["pfc"], q["watchdog"]
        state.storms = parse_watchdog_status(out["show priority-flow-control"])
    elif section == "qos":
        q = _running_qos(out[RUNNING])
        state.ecn, state.qos = q["ecn"], q["qos"]
    elif section == "counters":
        sample = parse_counters(out["show priority-flow-control counters"], out["show interfaces counters queue detail"],
                                out["show qos interfaces ecn counters queue"], taken_at, out.get(LANZ))
        sample.clock = parse_clock(out.get(CLOCK))
        state.add_counter_sample(sample)
    else:
        raise KeyError(f"EOS collector has no section {section!r}")
    state.sections.add(section)


def route_command(prefix: str) -> tuple[str, str]:
    """The lookup of one prefix (a valid IPv4/IPv6 network, so it can add nothing to the command)."""
    return (f"show ip route vrf default {ipaddress.ip_network(prefix)}", "json")


def route_commands(prefixes: Sequence[str]) -> list[tuple[str, str]]:
    """One lookup per prefix; the runner sends them all in one eAPI request."""
    return [route_command(p) for p in prefixes]


def apply_routes(out: Mapping[Any, Any], prefixes: Sequence[str], state: DeviceState) -> None:
    routes: dict[str, RouteState] = {}
    for prefix in prefixes:
        found = parse_routes(out[route_command(prefix)[0]])
        key = str(ipaddress.ip_network(prefix))
        if key in found:
            routes[key] = found[key]
    state.routes = routes
    state.sections.add("routes")


collector = LookupCollector(runner, section_commands, apply_section, route_commands, apply_routes)
