"""SONiC collector: CLI commands per state section and parsers of their text/JSON output.

Commands go through the project's `napalm_sonic` driver `cli([...])` (text). Table formats are the
sonic-utilities ones quoted verbatim in shared/reference/sonic.md §4. QoS, ECN and buffer
configuration are read from `show runningconfiguration all` (CONFIG_DB as JSON, plus "bgpraw"),
the single source the show commands themselves read. BGP and routes come from FRR as JSON through
vtysh: `show ip bgp summary json` (shape quoted in sonic.md §4) and `show ip route json` (FRR's
prefix -> [route] map, not quoted in the shared reference). `show queue wredcounters` (ECN marks, newer
sonic-utilities, polled only with `counterpoll wredqueue`) may fail or print N/A: the PFC and drop counters
are still used and the ECN marks are recorded as unreadable, which the counters check fails as not collected.
Queue watermarks: `show queue watermark unicast` (sonic-utilities scripts/watermarkstat, table layout as in its
tests/wm_input/wm_test_vectors.py): the USER watermarks, bytes of shared buffer each unicast queue held at most
since an operator last ran `sonic-clear queue watermark unicast` (nr-run never clears them). The PERSISTENT set
(`show queue persistent-watermark unicast`) is left to long-term use; the PERIODIC one (cleared by the
telemetry timer every 120 s) has no CLI. N/A cells (QUEUE_WATERMARK counter polling off) give no watermark.
PFC pause time: `show pfc counters --history` (sonic-utilities PR #3778, 2025: per port and priority, RX pause
transitions and "Total RX Pause Time US", from SAI_PORT_STAT_PFC_n_RX_PAUSE_DURATION_US or the watchdog's
estimate); older releases refuse the option and the pause time is then only read over gNMI.
Link flaps: `show interfaces flap` (sonic-utilities PR #3724, 2025: APPL_DB PORT_TABLE flap_count, which
sonic-swss portsorch raises on every oper status change since PR #3052, 2024, as EOS' linkStatusChanges); "Never"
(no change yet) reads 0; older releases refuse the command and leave the count unknown.
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from nr_run.intent.models import DeviceIntent
from nr_run.platforms.collector import PortScopedCollector, once_per_output
from nr_run.platforms.sonic.qosview import numbers
from nr_run.platforms.state import (
    BgpPeerState,
    BufferPgState,
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
from nr_run.platforms.transport import drop_connection, exec_batches, ssh_transport

RUNNING = "show runningconfiguration all"
BGP = "vtysh -c 'show ip bgp summary json'"
ROUTES = "vtysh -c 'show ip route json'"
# a route lookup (route_commands): FRR answers an absent prefix with a "%" line, which means no route, no failure
_LOOKUP = re.compile(r"^vtysh( -c 'show ip route [0-9a-fA-F.:/]+ json')+$")
# First lines of a failed command in an interactive session (sonic-utilities click, vtysh, bash).
_ERRORS = ("Error:", "% ", "Usage:", "bash: ")
WATERMARKS = "show queue watermark unicast"
FLAPS = "show interfaces flap"
PFC_HISTORY = "show pfc counters --history"
# GNU date's epoch time with nanoseconds, run just before `show pfc counters` on the same channel: it times the
# sample on the switch's clock (a failure leaves the client's stamp)
CLOCK = "date +%s.%N"
QUEUES = "show queue counters"
WRED = "show queue wredcounters"
OPTIONAL = {WRED, WATERMARKS, PFC_HISTORY, FLAPS, CLOCK}
# tables that take one port (sonic-utilities `show queue counters [INTERFACENAME]`, likewise wredcounters)
PER_PORT = (QUEUES, WRED)
_PORT_NAME = re.compile(r"Ethernet\d{1,4}")


def _is_table(cmd: str, table: str) -> bool:
    """Whether `cmd` reads `table`, whole or for one port (`<table> <port>`, as counter_commands writes it)."""
    return cmd == table or (cmd.startswith(table + " ") and _PORT_NAME.fullmatch(cmd[len(table) + 1:]) is not None)


def optional(cmd: str) -> bool:
    """Whether a failure of `cmd` leaves its section readable (a port's WRED table, as the whole one)."""
    return cmd in OPTIONAL or _is_table(cmd, WRED)


COMMANDS: dict[str, list[str]] = {
    "interfaces": ["show interfaces status", FLAPS],
    "lldp": ["show lldp table"],
    "bgp": [BGP],
    "routes": [ROUTES],
    "pfc": ["show pfc priority", "pfcwd show config", "pfcwd show stats"],
    "qos": [RUNNING],
    "buffers": [RUNNING],
    "counters": [CLOCK, "show pfc counters", QUEUES, WRED, WATERMARKS, PFC_HISTORY],
}

Runner = Callable[[list[str]], dict[str, Any]]


def parse_table(text: str, first_header: str | None = None) -> list[dict[str, str]]:
    """The SONiC driver's table parser, imported on first use: importing the driver package loads NAPALM,
    which loading the platform plug-in (every render and preflight does) should not pay for."""
    from napalm_sonic.parsers import parse_table as parse

    return parse(text, first_header)


# Exec channels a SONiC collection runs at once, each a batch of commands one after another
# (transport.exec_batches): a SONiC `show` is a Python program taking 0.5-1 s on a switch CPU, so running them side
# by side pays up to about its cores (4 on common platforms); one channel per command only adds channel set-ups.
CHANNELS = 4


def _texts(device: Any, cmds: list[str]) -> dict[str, Any]:
    """The commands in CHANNELS batches at once on exec channels of the driver's SSH session (no shell prompt
    read loop), in their order across the batches (the counters, first, start together); the driver's cli()
    when it has no SSH transport. A command that raises is left out (None)."""
    transport = ssh_transport(getattr(device, "device", None))
    if transport is not None:
        try:
            return exec_batches(transport, channel_groups(list(dict.fromkeys(cmds))),
                                timeout=float(getattr(device, "timeout", 60) or 60))
        except Exception as exc:          # paramiko's SSHException: the session is gone
            if type(exc).__module__.startswith("paramiko"):
                raise OSError(str(exc)) from exc
            raise
    out: dict[str, Any] = {}
    for cmd in cmds:
        try:
            out[cmd] = device.cli([cmd])[cmd]
        except (OSError, EOFError):
            raise
        except Exception as exc:
            out[cmd] = exc
    return out


def channel_groups(unique: list[str]) -> list[list[str]]:
    """The commands dealt round-robin over CHANNELS groups (the first ones start together), except the clock,
    which goes just before the command after it, on its channel: the two are read back to back."""
    if CLOCK not in unique or unique.index(CLOCK) + 1 >= len(unique):
        return [unique[i::CHANNELS] for i in range(CHANNELS)]
    paired = unique[unique.index(CLOCK) + 1]
    rest = [c for c in unique if c != CLOCK]
    groups = [rest[i::CHANNELS] for i in range(CHANNELS)]
    for group in groups:
        if paired in group:
            group.insert(group.index(paired), CLOCK)
    return groups


def parse_clock(text: str | None) -> float | None:
    """`date +%s.%N` -> epoch seconds, or None when the output is not one number."""
    try:
        value = float((text or "").strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and value > 0 else None


def runner(task: Any) -> Runner:
    """Run commands over the host's NAPALM sonic connection; optional commands may fail."""
    device = task.host.get_connection("napalm", task.nornir.config)

    def run(cmds: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        try:
            texts = _texts(device, list(cmds))
        except (OSError, EOFError, TimeoutError) as exc:     # dead session: reopen on the next run
            drop_connection(task, "napalm")
            raise RuntimeError(f"session lost ({exc})") from exc
        for cmd in cmds:
            text = texts[cmd]
            if isinstance(text, Exception):     # _texts raised a lost session above: this is the command's own
                if optional(cmd):
                    continue
                raise text
            first = text.strip().splitlines()[0] if text.strip() else ""
            if first.startswith(_ERRORS) and not _LOOKUP.match(cmd):    # a lookup's "% Network not in table"
                if optional(cmd):
                    continue
                raise RuntimeError(f"{cmd!r} failed: {first}")
            out[cmd] = text
        return out

    return run


def section_commands(section: str, device: DeviceIntent) -> list[str]:
    return COMMANDS.get(section, [])


# Ports read one by one at most: each takes a command per table, and a switch runs CHANNELS of them at once,
# so two ports' commands cost the switch what the two whole tables do, with a fraction of their output
MAX_PORTS = 2


def counter_commands(device: DeviceIntent, ports: Sequence[str]) -> list[str]:
    """The counters of `ports`: their queue and WRED tables one port at a time (the PFC tables, watermarks and
    pause history have no port argument and stay whole); every port's tables for more ports, or for a name
    that is not a SONiC port name (nothing else becomes part of a command)."""
    wanted = sorted(set(ports))
    if not wanted or len(wanted) > MAX_PORTS or not all(_PORT_NAME.fullmatch(p) for p in wanted):
        return section_commands("counters", device)
    return [f"{cmd} {port}" if cmd in PER_PORT else cmd
            for cmd in COMMANDS["counters"] for port in (wanted if cmd in PER_PORT else [""])]


def _tables(out: Mapping[str, Any], command: str) -> list[str]:
    """The outputs of `command`, whole or one per port (`command <port>`), in command order."""
    return [text for cmd, text in out.items() if _is_table(cmd, command)]


# SONiC pfcwd actions -> the neutral ones: "alert" only logs, so the stormed queue keeps forwarding.
_ACTIONS = {"drop": "drop", "forward": "forward", "alert": "forward"}


def _count(value: str) -> int | None:
    """A counter cell as sonic-utilities prints it ("2,450,120"); None for N/A or anything else not a count."""
    value = value.replace(",", "").strip()
    return int(value) if value.isdigit() else None


def _num(value: str) -> int:
    count = _count(value)
    return 0 if count is None else count


def _speed_mbps(value: str) -> int | None:
    m = re.fullmatch(r"(\d+)G", value.strip())
    if m:
        return int(m[1]) * 1000
    m = re.fullmatch(r"(\d+)M", value.strip())
    return int(m[1]) if m else None


# ---------------------------------------------------------------- parsers (pure)

def parse_interfaces(text: str) -> dict[str, InterfaceState]:
    return {
        r["Interface"]: InterfaceState(r["Interface"], r["Admin"] == "up", r["Oper"] == "up",
                                       _speed_mbps(r["Speed"]), int(r["MTU"]) if r["MTU"].isdigit() else None,
                                       r.get("Alias") or None)
        for r in parse_table(text, "Interface")
    }


def parse_flaps(text: str) -> dict[str, int]:
    """`show interfaces flap` -> {port: flap count} ("Never": no oper status change yet)."""
    out = {}
    for r in parse_table(text, "Interface"):
        cell = r.get("Flap Count", "")
        count = 0 if cell == "Never" else _count(cell)
        if count is not None:
            out[r["Interface"]] = count
    return out


def parse_lldp(text: str) -> list[LldpNeighbor]:
    return [LldpNeighbor(r["LocalPort"], r["RemoteDevice"], r["RemotePortID"]) for r in parse_table(text, "LocalPort")]


def parse_bgp(text: str) -> dict[str, BgpPeerState]:
    peers = {}
    for r in parse_table(text, "Neighbhor") or parse_table(text, "Neighbor"):
        ip = r.get("Neighbhor") or r.get("Neighbor", "")
        pfx = r.get("State/PfxRcd", "")
        established = pfx.replace(",", "").isdigit()
        peers[ip] = BgpPeerState(ip, int(r["AS"]) if r["AS"].isdigit() else None,
                                 "Established" if established else pfx, _num(pfx) if established else 0)
    return peers


def parse_bgp_json(data: dict[str, Any]) -> dict[str, BgpPeerState]:
    """vtysh `show ip bgp summary json`: ipv4Unicast.peers.{ip}.{remoteAs, state, pfxRcd}."""
    peers = data.get("ipv4Unicast", {}).get("peers", {})
    return {ip: BgpPeerState(ip, as_int(p.get("remoteAs")), str(p.get("state", "")), as_int(p.get("pfxRcd")) or 0)
            for ip, p in peers.items()}


def parse_routes(data: dict[str, Any]) -> dict[str, RouteState]:
    """FRR `show ip route json`: {prefix: [{protocol, selected, nexthops[{ip, interfaceName, active}]}]}."""
    routes = {}
    for prefix, entries in data.items():
        for e in entries:
            if not e.get("selected"):
                continue
            hops = [NextHop(h.get("ip", ""), h.get("interfaceName", "")) for h in e.get("nexthops", [])
                    if h.get("active", True)]
            routes[prefix] = RouteState(prefix, e.get("protocol", ""), hops)
    return routes


def parse_pfc_priority(text: str) -> dict[str, list[int]]:
    return {r["Interface"]: sorted(int(p) for p in re.findall(r"\d", r["Lossless priorities"]))
            for r in parse_table(text, "Interface")}


def parse_pfcwd_config(text: str) -> dict[str, WatchdogState]:
    wd = {}
    for r in parse_table(text, "PORT"):
        wd[r["PORT"]] = WatchdogState(True, _ACTIONS.get(r["ACTION"], r["ACTION"]), _num(r["DETECTION TIME"]), _num(r["RESTORATION TIME"]))
    for port in re.findall(r"SKIPPED: PFC is not enabled on port: (\S+)", text):
        wd[port] = WatchdogState(False)
    return wd


def parse_pfcwd_stats(text: str) -> list[StormState]:
    storms = []
    for r in parse_table(text, "QUEUE"):
        port, _, q = r["QUEUE"].partition(":")
        detected = r.get("STORM DETECTED/RESTORED", "0/0").split("/")[0]
        storms.append(StormState(port, int(q), r["STATUS"] == "stormed", _num(detected)))
    return storms


def _ref(value: str) -> str:
    """Plain name from either reference format ("AZURE" or "[DSCP_TO_TC_MAP|AZURE]")."""
    return value.strip("[]").split("|")[-1]


def _queue_entries(db: dict[str, Any]) -> dict[tuple[str, int], dict[str, str]]:
    out = {}
    for key, fields in db.get("QUEUE", {}).items():
        port, _, qs = key.partition("|")
        for q in sorted(numbers(qs)):
            out[(port, q)] = fields
    return out


def parse_qos(db: dict[str, Any]) -> dict[str, Any]:
    """ECN per queue, and trust/DSCP map/schedulers per port, from CONFIG_DB.

    SONiC has no trust knob: a port trusts DSCP when a DSCP_TO_TC_MAP is bound to it (or globally). The
    bound table is the whole classification (no hidden default map), so the DSCP map is "complete".
    """
    maps = db.get("PORT_QOS_MAP", {})
    glob = maps.get("global", {})
    wred, sched = db.get("WRED_PROFILE", {}), db.get("SCHEDULER", {})
    queues = _queue_entries(db)
    ecn: dict[tuple[str, int], EcnQueueState] = {}
    for (port, q), fields in sorted(queues.items()):
        prof = wred.get(_ref(fields.get("wred_profile", "")))
        if prof is None:
            continue
        on = prof.get("ecn", "ecn_none") != "ecn_none"
        ecn[(port, q)] = EcnQueueState(port, q, on, as_int(prof.get("green_min_threshold")),
                                       as_int(prof.get("green_max_threshold")), as_int(prof.get("green_drop_probability")))
    # each port's queues, found once: a switch's QUEUE table grows with its ports
    port_queues: dict[str, list[tuple[int, dict[str, str]]]] = {}
    for (p, q), fields in queues.items():
        port_queues.setdefault(p, []).append((q, fields))
    qos: dict[str, QosPortState] = {}
    for port in sorted(db.get("PORT", {})):
        name = maps.get(port, {}).get("dscp_to_tc_map") or glob.get("dscp_to_tc_map")
        table = db.get("DSCP_TO_TC_MAP", {}).get(_ref(name), {}) if name else {}
        scheds = {}
        for q, fields in port_queues.get(port, []):
            if fields.get("scheduler"):
                t = sched.get(_ref(fields["scheduler"]), {}).get("type", "WRR").lower()
                scheds[q] = "strict" if t == "strict" else "dwrr"
        qos[port] = QosPortState(port, "dscp" if name else None,
                                 {int(k): int(v) for k, v in sorted(table.items(), key=lambda kv: int(kv[0]))},
                                 dict(sorted(scheds.items())), dscp_map="complete")
    return {"ecn": ecn, "qos": qos}


def parse_buffers(db: dict[str, Any]) -> dict[str, list[BufferPgState]]:
    """Lossless PGs (profiles with an xoff) per port."""
    profiles = db.get("BUFFER_PROFILE", {})
    out: dict[str, list[BufferPgState]] = {}
    for key, fields in sorted(db.get("BUFFER_PG", {}).items()):
        port, _, pgs = key.partition("|")
        name = _ref(fields.get("profile", ""))
        prof = profiles.get(name, {})
        if "xoff" not in prof:
            continue
        out.setdefault(port, []).append(BufferPgState(port, sorted(numbers(pgs)), name, as_int(prof.get("xoff")),
                                                      as_int(prof.get("xon")), as_int(prof.get("size"))))
    return out


def parse_counters(pfc: str, queues: list[str], wred: list[str], taken_at: float) -> CounterSample:
    """The PFC, queue and WRED tables of one sample (queue and WRED tables whole, or one per port; no WRED
    table: ECN marks unreadable)."""
    ports: dict[str, PortCounters] = {}
    for header, attr in (("Port Rx", "pfc_rx"), ("Port Tx", "pfc_tx")):
        for r in parse_table(pfc, header):
            pc = ports.setdefault(r[header], PortCounters())
            per = {int(k[3:]): _num(v) for k, v in r.items() if k.startswith("PFC")}
            setattr(pc, attr, per)
            setattr(pc, attr + "_total", sum(per.values()))
    for r in (r for text in queues for r in parse_table(text, "Port")):
        if r["TxQ"].startswith("UC"):
            ports.setdefault(r["Port"], PortCounters()).queue_drops[int(r["TxQ"][2:])] = _num(r["Drop/pkts"])
    unreadable: dict[str, str] = {}
    if not wred:
        unreadable["ecn"] = "show queue wredcounters failed"
    for r in (r for text in wred for r in parse_table(text, "Port")):
        if r["TxQ"].startswith("UC") and "EcnMarked/pkts" in r:
            marks = _count(r["EcnMarked/pkts"])
            if marks is not None:
                ports.setdefault(r["Port"], PortCounters()).ecn_marks[int(r["TxQ"][2:])] = marks
            else:           # N/A: the WRED_ECN_QUEUE counter group is not polled
                unreadable.setdefault("ecn", f"show queue wredcounters: {r['EcnMarked/pkts']} "
                                      "(counterpoll wredqueue off?)")
    return CounterSample(taken_at, dict(sorted(ports.items())), unreadable)


def parse_watermarks(text: str) -> dict[str, dict[int, int]]:
    """`show queue watermark unicast` -> {port: {queue: bytes}}; N/A cells are left out."""
    out: dict[str, dict[int, int]] = {}
    for r in parse_table(text, "Port"):
        marks = {int(k[2:]): int(v) for k, v in r.items() if k.startswith("UC") and k[2:].isdigit() and v.isdigit()}
        if marks:
            out[r["Port"]] = marks
    return out


def parse_pfc_history(text: str) -> dict[str, dict[int, int]]:
    """`show pfc counters --history` -> {port: {priority: total RX pause time in microseconds}} (N/A left out).

    pfcstat separates the ports' row groups with blank lines (which end a table for parse_table): each group is
    read under the one header."""
    from napalm_sonic.parsers import is_rule, table_columns, table_rows

    lines = text.splitlines()
    head = next((i for i in range(len(lines) - 1) if "Total RX Pause Time US" in lines[i]), None)
    if head is None or not lines[head].strip().startswith("Port") or not is_rule(lines[head + 1]):
        return {}
    names, columns = table_columns(lines[head], lines[head + 1])
    out: dict[str, dict[int, int]] = {}
    at = head + 2
    while at < len(lines):
        if not lines[at].strip():
            at += 1
            continue
        group = table_rows(lines, at, names, columns)
        # the group ends at a blank line or, when a dashed line cut it short, at the blank line after it
        at += len(group)
        while at < len(lines) and lines[at].strip():
            at += 1
        for r in group:
            prio, total = r.get("Priority", ""), _count(r.get("Total RX Pause Time US", ""))
            if r.get("Port") and prio.startswith("PFC") and prio[3:].isdigit() and total is not None:
                out.setdefault(r["Port"], {})[int(prio[3:])] = total
    return out


def add_polled_extras(sample: CounterSample, watermarks: str | None, history: str | None) -> CounterSample:
    """Watermarks and RX pause time, where the switch printed them, onto the ports of a counter sample."""
    for port, marks in parse_watermarks(watermarks or "").items():
        if port in sample.ports:
            sample.ports[port].queue_watermark_bytes = dict(sorted(marks.items()))
    for port, paused in parse_pfc_history(history or "").items():
        if port in sample.ports:
            sample.ports[port].pfc_rx_pause_us = dict(sorted(paused.items()))
    return sample


# the "qos" and "buffers" sections read the same CONFIG_DB dump
_config_db = once_per_output(json.loads)


def apply_section(section: str, out: Mapping[str, Any], state: DeviceState, device: DeviceIntent | None = None,
                  taken_at: float = 0.0) -> None:
    if section == "interfaces":
        state.interfaces = parse_interfaces(out["show interfaces status"])
        for port, count in parse_flaps(out.get(FLAPS) or "").items():
            if port in state.interfaces:
                state.interfaces[port].link_changes = count
    elif section == "lldp":
        state.lldp = parse_lldp(out["show lldp table"])
    elif section == "bgp":
        state.bgp = parse_bgp_json(json.loads(out[BGP]))
    elif section == "routes":
        state.routes = parse_routes(json.loads(out[ROUTES]))
    elif section == "pfc":
        state.pfc_priorities = parse_pfc_priority(out["show pfc priority"])
        state.watchdog = parse_pfcwd_config(out["pfcwd show config"])
        state.storms = parse_pfcwd_stats(out["pfcwd show stats"])
    elif section == "qos":
        q = parse_qos(_config_db(out[RUNNING]))
        state.ecn, state.qos = q["ecn"], q["qos"]
    elif section == "buffers":
        state.buffer_pgs = parse_buffers(_config_db(out[RUNNING]))
    elif section == "counters":
        queues = _tables(out, QUEUES)
        if not queues:
            raise KeyError(QUEUES)
        sample = parse_counters(out["show pfc counters"], queues, _tables(out, WRED), taken_at)
        sample.clock = parse_clock(out.get(CLOCK))
        state.add_counter_sample(add_polled_extras(sample, out.get(WATERMARKS), out.get(PFC_HISTORY)))
    else:
        raise KeyError(f"SONiC collector has no section {section!r}")
    state.sections.add(section)


# prefixes looked up per vtysh invocation (one exec channel each; FRR prints one JSON object per -c)
LOOKUPS_PER_COMMAND = 64


def route_commands(prefixes: Sequence[str]) -> list[str]:
    """`show ip route <prefix> json` per prefix (valid networks only, so they can add nothing to the command),
    several in one vtysh invocation."""
    nets = [str(ipaddress.ip_network(p)) for p in prefixes]
    return ["vtysh " + " ".join(f"-c 'show ip route {n} json'" for n in nets[i:i + LOOKUPS_PER_COMMAND])
            for i in range(0, len(nets), LOOKUPS_PER_COMMAND)]


def json_objects(text: str) -> list[Any]:
    """The JSON objects printed one after another (vtysh with several -c); lines that are no JSON (FRR's
    "% Network not in table") are skipped."""
    decoder, pos, out = json.JSONDecoder(), 0, []
    while pos < len(text):
        start = text.find("{", pos)
        if start < 0:
            break
        try:
            obj, pos = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            pos = text.find("\n", start) + 1 or len(text)
            continue
        out.append(obj)
    return out


def apply_routes(out: Mapping[Any, Any], prefixes: Sequence[str], state: DeviceState) -> None:
    wanted = {str(ipaddress.ip_network(p)) for p in prefixes}
    routes: dict[str, RouteState] = {}
    for cmd in route_commands(prefixes):
        text = out[cmd]
        if isinstance(text, Exception):
            raise text
        for obj in json_objects(text):
            routes.update({p: r for p, r in parse_routes(obj).items() if p in wanted})
    state.routes = dict(sorted(routes.items()))
    state.sections.add("routes")


collector = PortScopedCollector(runner, section_commands, apply_section, route_commands, apply_routes,
                                counter_commands)
