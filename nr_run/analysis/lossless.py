"""Lossless-path proof: on every hop of every GPU-to-GPU path class, RoCE stays in one lossless class.

Each hop is judged by what its device is configured to do: the platform plug-in's view of the structured config
it renders (`nr_run.platforms.qos.device_qos`), or the intent for a device nr-run does not configure (a GPU
NIC). Per path class the first broken hop is reported with the fix, naming the inventory key (or the platform
plug-in, when the intent is right and the rendered config is not).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from nr_run.analysis.options import AnalysisOptions
from nr_run.analysis.paths import (
    HostPart,
    LinkRef,
    PathClass,
    PortRef,
    Position,
    example_path,
    path_classes,
)
from nr_run.analysis.result import AnalysisFinding, AnalysisResult, Figure, Table
from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.intent.preflight import ROCE_MIN_MTU
from nr_run.platforms.qos import DeviceQos, PortQos, device_qos, fabric_device_qos, from_intent

NAME = "lossless"
# Non-ECT packets on the lossless queue are meant to be dropped by the ECN/WRED curve on every switch (see
# docs/platforms.md): admitted, they fill the queue with no congestion signal and spread PFC pauses.
INTENDED_NON_ECT = "drop"


@dataclass(frozen=True)
class RoceClass:
    """What RoCE traffic should look like on every hop, from the GPU servers' profile."""

    dscp: int
    priority: int
    queue: int
    pg: int
    cnp_dscp: int
    cnp_tc: int
    watchdog: bool
    pfc_only: bool = False     # the site's congestion control: PFC alone (no ECN marking, DCQCN off on NICs)


@dataclass(frozen=True)
class Problem:
    check: str   # classification|trust|pfc|pg|queue|ecn|cnp|watchdog|watchdog-limit|mtu|non-ect|config
    message: str


def roce_class(fabric: FabricIntent) -> RoceClass:
    """The RoCE data class the NICs send: of the DSCPs their profile maps to a lossless priority, the one whose
    class is the ECN queue (DCQCN marks RoCE there), else the first."""
    devs = fabric.servers() or fabric.switches()
    roce = sorted(devs, key=lambda d: d.name)[0].roce
    lossless = [d for d, tc in sorted(roce.dscp_overrides.items()) if tc in roce.lossless_priorities]
    if roce.ecn.enabled:
        marked = [d for d in lossless if roce.tc_to_queue[roce.dscp_overrides[d]] == roce.ecn.queue]
        lossless = marked + [d for d in lossless if d not in marked]
    dscp = lossless[0] if lossless else next((d for d, tc in sorted(roce.dscp_to_tc.items())
                                               if tc in roce.lossless_priorities), 0)
    prio = roce.dscp_to_tc[dscp]
    nics = [n.qos for d in fabric.servers() for n in d.nics if n.qos is not None]
    return RoceClass(dscp=dscp, priority=prio, queue=roce.tc_to_queue[prio], pg=roce.tc_to_pg[prio],
                     cnp_dscp=roce.cnp_dscp, cnp_tc=roce.cnp_tc, watchdog=roce.watchdog.enabled,
                     pfc_only=bool(nics) and nics[0].congestion_control == "pfc-only")


def port_problems(ref: RoceClass, dev: DeviceIntent, qos: DeviceQos, port: str, direction: str) -> list[Problem]:
    """What is wrong with RoCE on one port in one direction ("rx": arriving, "tx": leaving)."""
    pq = qos.ports.get(port)
    if pq is None:
        return [Problem("config", f"port {port} is not in the configuration ({qos.source})")]
    out: list[Problem] = []
    p, switch = ref.priority, dev.role != "gpu"
    if pq.mtu < ROCE_MIN_MTU:
        out.append(Problem("mtu", f"MTU {pq.mtu} < {ROCE_MIN_MTU} (a 4096-byte RoCE payload + headers)"))
    if direction == "rx":
        out += _rx(ref, pq, switch)
    else:
        out += _tx(ref, qos, pq, switch)
    if ref.watchdog and switch:
        if p not in pq.watchdog_priorities:
            out.append(Problem("watchdog", f"PFC watchdog not armed on priority {p}"))
        # a timer the platform refuses: the intent's value is what has to change
        out += [Problem("watchdog-limit", w) for w in qos.watchdog_problems]
    return out


def _rx(ref: RoceClass, pq: PortQos, switch: bool) -> list[Problem]:
    out: list[Problem] = []
    p = ref.priority
    if pq.trust != "dscp":
        out.append(Problem("trust", f"trusts {pq.trust}, not DSCP: DSCP {ref.dscp} is not classified"))
    tc = pq.dscp_to_tc.get(ref.dscp)
    if tc != p:
        out.append(Problem("classification", f"DSCP {ref.dscp} -> TC {tc}, not TC {p}"))
    if p not in pq.pfc_priorities:
        out.append(Problem("pfc", f"PFC off on priority {p}: this end never pauses its sender"))
    if pq.tc_to_pg is not None:
        pg = pq.tc_to_pg.get(p)
        if pg != ref.pg:
            out.append(Problem("pg", f"TC {p} -> PG {pg}, not PG {ref.pg}"))
        elif pq.lossless_pgs is not None and switch and pg not in pq.lossless_pgs:
            out.append(Problem("pg", f"PG {pg} has no lossless (headroom) buffer profile"))
    if switch and pq.dscp_to_tc.get(ref.cnp_dscp) != ref.cnp_tc:
        out.append(Problem("cnp", f"CNP DSCP {ref.cnp_dscp} -> TC {pq.dscp_to_tc.get(ref.cnp_dscp)}, "
                                  f"not TC {ref.cnp_tc}"))
    return out


def _tx(ref: RoceClass, qos: DeviceQos, pq: PortQos, switch: bool) -> list[Problem]:
    out: list[Problem] = []
    p = ref.priority
    queue = pq.tc_to_queue.get(p)
    if queue != ref.queue:
        out.append(Problem("queue", f"TC {p} -> queue {queue}, not queue {ref.queue}"))
    if p not in pq.pfc_priorities:
        out.append(Problem("pfc", f"PFC off on priority {p}: pauses from the next hop are ignored"))
    elif pq.pfc_priority_to_queue is not None and pq.pfc_priority_to_queue.get(p) != queue:
        out.append(Problem("pfc", f"a pause for priority {p} stops queue {pq.pfc_priority_to_queue.get(p)}, "
                                  f"not queue {queue} that carries RoCE"))
    if not switch:
        return out + _nic_dcqcn(ref, pq)
    if ref.pfc_only:
        # receiver-paced: PFC alone holds the queue; a mark would wait for a reaction no NIC runs
        if queue is not None and queue in pq.ecn_queues:
            out.append(Problem("ecn", f"ECN marking on queue {queue} at a PFC-only site (DCQCN is off on the "
                                      "NICs: nobody reacts to the marks)"))
    elif queue is None or queue not in pq.ecn_queues:
        out.append(Problem("ecn", f"no ECN marking on queue {queue}"))
    else:
        low, high = pq.ecn_queues[queue]
        if not 0 < low <= high:
            out.append(Problem("ecn", f"ECN thresholds {low}..{high} bytes are not an increasing range"))
        if qos.non_ect != INTENDED_NON_ECT:
            out.append(Problem("non-ect", f"non-ECT packets are {qos.non_ect}ed on the lossless queue {queue}, "
                                          f"meant to be {INTENDED_NON_ECT}ped (no congestion signal, PFC spreads)"))
    cnp_queue = pq.tc_to_queue.get(ref.cnp_tc)
    if cnp_queue not in qos.strict_queues and cnp_queue != max(pq.tc_to_queue.values(), default=None):
        out.append(Problem("cnp", f"CNP queue {cnp_queue} is neither strict priority nor the highest queue"))
    return out


def _nic_dcqcn(ref: RoceClass, pq: PortQos) -> list[Problem]:
    """A sending NIC runs DCQCN on the RoCE priority at a DCQCN site, and on no priority at a PFC-only one."""
    if pq.dcqcn is None:
        return []
    if ref.pfc_only and pq.dcqcn:
        on = ", ".join(str(p) for p in sorted(pq.dcqcn))
        return [Problem("dcqcn", f"DCQCN on priorities {on} at a PFC-only site (the NIC is left on DCQCN)")]
    if not ref.pfc_only and ref.priority not in pq.dcqcn:
        return [Problem("dcqcn", f"DCQCN off on priority {ref.priority}: the NIC neither slows on CNPs nor sends them")]
    return []


FIX_KEYS = {
    "classification": "roce_profiles.{profile}.dscp_to_tc",
    "trust": "roce_profiles.{profile}.trust",
    "pfc": "roce_profiles.{profile}.lossless_priorities",
    "pg": "roce_profiles.{profile}.lossless_priorities",
    "queue": "roce_profiles.{profile}.dscp_to_tc",
    "ecn": "roce_profiles.{profile}.ecn",
    "dcqcn": "nic.congestion_control",
    "cnp": "roce_profiles.{profile}.cnp / roce_profiles.{profile}.schedulers",
    "watchdog": "roce_profiles.{profile}.pfc_watchdog",
    "watchdog-limit": "roce_profiles.{profile}.pfc_watchdog",
    "mtu": "roles.{role}.mtu (or data.mtu in hosts.yaml)",
}


@dataclass
class _DeviceVerdicts:
    """A device's view and its verdicts: `fixed` when the whole device fails (unbuildable, not collected), else
    per direction the problems of each distinct PortQos, by id."""

    dev: DeviceIntent
    view: DeviceQos
    fixed: list[Problem] | None
    rx: dict[int, list[Problem]]
    tx: dict[int, list[Problem]]


class _Checker:
    """Per-port and per-link verdicts, each computed once and shared by every class that crosses it."""

    def __init__(self, fabric: FabricIntent) -> None:
        self.fabric = fabric
        self.ref = roce_class(fabric)
        self.view: Callable[[str], DeviceQos] = cache(self._view)
        self.rendered: Callable[[str], DeviceQos | None] = cache(self._rendered)
        self.unbuildable: dict[str, str] = {}
        # looked up by names, never by hashing a PortRef: a class lists tens of thousands of ports and links
        self._devices: dict[str, _DeviceVerdicts] = {}
        # every RTSW's host side is in every class through it: judged once per RTSW and hop
        self._host: dict[str, dict[str, list[tuple[str, str, str, Problem]]]] = {}
        self._positions: dict[int, tuple[Position, int, list[tuple[str, str, str, Problem]]]] = {}
        self._host_hops: dict[int, tuple[list[str], int]] = {}

    def _view(self, name: str) -> DeviceQos:
        dev = self.fabric.devices[name]
        try:
            return fabric_device_qos(dev, self.fabric)
        except (ValueError, KeyError, LookupError) as exc:    # a config the platform cannot build
            self.unbuildable[name] = str(exc)
            return from_intent(dev)

    def _rendered(self, name: str) -> DeviceQos | None:
        """The view of the config rendered from the intent (None: the platform cannot build it)."""
        try:
            return device_qos(self.fabric.devices[name], self.fabric)
        except (ValueError, KeyError, LookupError):
            return None

    def port(self, ref: PortRef) -> list[Problem]:
        """The problems of RoCE on one port in one direction."""
        return self._port(ref.device, ref.port, ref.direction)

    def _device(self, name: str) -> _DeviceVerdicts:
        found = self._devices.get(name)
        if found is None:
            dev, view = self.fabric.devices[name], self.view(name)
            fixed: list[Problem] | None = None
            if name in self.unbuildable:
                fixed = [Problem("config", f"the {dev.platform} config cannot be built: {self.unbuildable[name]}")]
            elif uncollected := view.extra.get("uncollected"):
                section, why = sorted(uncollected.items())[0]
                fixed = [Problem("config", f"state not collected ({section}: {why})")]
            found = self._devices[name] = _DeviceVerdicts(dev, view, fixed, {}, {})
        return found

    def _port(self, device: str, port: str, direction: str) -> list[Problem]:
        d = self._device(device)
        if d.fixed is not None:
            return d.fixed
        pq = d.view.ports.get(port)
        if pq is None:
            return port_problems(self.ref, d.dev, d.view, port, direction)
        # ports configured alike share one PortQos (the views intern them), so a device judges each distinct
        # one once per direction; the view keeps its ports alive as long as this checker, so ids stay unique
        verdicts = d.rx if direction == "rx" else d.tx
        found = verdicts.get(id(pq))
        if found is None:
            found = verdicts[id(pq)] = port_problems(self.ref, d.dev, d.view, port, direction)
        return found

    def position(self, position: Position, host_links: dict[str, list[tuple[str, str, str]]]
                 ) -> tuple[int, list[tuple[str, str, str, Problem]]]:
        """(hops, problems) of one position; once per position, which classes through one CTSW between the same
        RTSWs share (the entry keeps the position, so its id is not reused while the entry lives)."""
        found = self._positions.get(id(position))
        if found is not None and found[0] is position:
            return found[1], found[2]
        items: list[PortRef | LinkRef] = [*position.ports, *position.links]
        hops = len(items)
        broken = self.items(items)
        if position.part is not None:
            # the host positions of a class share one list of RTSWs (sources are destinations): counted once
            key = id(position.hosts)
            found_hops = self._host_hops.get(key)
            if found_hops is None or found_hops[0] is not position.hosts:
                found_hops = self._host_hops[key] = (
                    position.hosts, sum(len(host_links.get(rtsw, ())) for rtsw in position.hosts))
            hops += found_hops[1]
            broken += self.host_part(position.hosts, position.part, host_links)
        self._positions[id(position)] = (position, hops, broken)
        return hops, broken

    def items(self, items: list[PortRef | LinkRef]) -> list[tuple[str, str, str, Problem]]:
        out: list[tuple[str, str, str, Problem]] = []
        for item in items:
            if isinstance(item, PortRef):
                found = self._port(item.device, item.port, item.direction)
                if found:
                    out += [(item.device, item.port, item.direction, pr) for pr in found]
            else:
                tx, rx = item.tx, item.rx
                found = self._link(tx.device, tx.port, rx.device, rx.port)
                if found:
                    out += [(rx.device, rx.port, "rx", pr) for pr in found]
        return out

    def host_part(self, rtsws: list[str], part: HostPart,
                  host_links: dict[str, list[tuple[str, str, str]]]) -> list[tuple[str, str, str, Problem]]:
        """The problems of one host-side hop below each of `rtsws`, in their order; computed once per RTSW and hop."""
        per = self._host.setdefault(part, {})
        out: list[tuple[str, str, str, Problem]] = []
        for rtsw in rtsws:
            found = per.get(rtsw)
            if found is None:
                found = per[rtsw] = self._host_side(rtsw, part, host_links.get(rtsw, []))
            if found:
                out += found
        return out

    def _host_side(self, rtsw: str, part: HostPart,
                   hosts: list[tuple[str, str, str]]) -> list[tuple[str, str, str, Problem]]:
        """nr_run.analysis.paths.host_side's ports and links judged in its order, without building them."""
        out: list[tuple[str, str, str, Problem]] = []
        for port, gpu, nic in hosts:
            if part in ("nic-tx", "nic-rx"):
                where = (gpu, nic, "tx" if part == "nic-tx" else "rx")
            elif part in ("rtsw-rx", "rtsw-tx"):
                where = (rtsw, port, "rx" if part == "rtsw-rx" else "tx")
            else:
                tx, rx = ((gpu, nic), (rtsw, port)) if part == "up-link" else ((rtsw, port), (gpu, nic))
                found = self._link(tx[0], tx[1], rx[0], rx[1])
                out += [(rx[0], rx[1], "rx", pr) for pr in found]
                continue
            out += [(*where, pr) for pr in self._port(*where)]
        return out

    def link(self, link: LinkRef) -> list[Problem]:
        """PFC on the RoCE priority at both ends of a link (computed once per link)."""
        return self._link(link.tx.device, link.tx.port, link.rx.device, link.rx.port)

    def _link(self, tx_device: str, tx_port: str, rx_device: str, rx_port: str) -> list[Problem]:
        p = self.ref.priority
        tx, rx = self._device(tx_device).view.ports.get(tx_port), self._device(rx_device).view.ports.get(rx_port)
        if tx is not None and rx is not None and p in tx.pfc_priorities and p in rx.pfc_priorities:
            return []
        off = [f"{d}:{port}" for d, port, pq in ((tx_device, tx_port, tx), (rx_device, rx_port, rx))
               if pq is None or p not in pq.pfc_priorities]
        return [Problem("pfc", f"PFC priority {p} not enabled at both ends: off on {', '.join(off)}")]

    def fix(self, device: str, port: str, direction: str, problem: Problem) -> str:
        """Where to fix it: the inventory key, or the platform plug-in when the intent itself is right."""
        dev = self.fabric.devices[device]
        if problem.message.startswith("state not collected"):
            return f"collect {device}'s state again (reachable, credentials, collector for {dev.platform})"
        if self.view(device).source.endswith("collected state"):
            view = self.rendered(device)
            rendered = port_problems(self.ref, dev, view, port, direction) if view is not None else []
            if not any(p.check == problem.check for p in rendered):
                return (f"{device} runs another config than the one rendered from the intent (drift): "
                        "`nr-run compliance` shows the difference, `nr-run deploy` restores it")
        intended = port_problems(self.ref, dev, from_intent(dev), port, direction)
        platform_limit = problem.check == "watchdog-limit"
        if problem.check != "config" and not platform_limit and not any(p.check == problem.check for p in intended):
            return (f"the intent is right but the {dev.platform} platform plug-in renders it otherwise "
                    f"({self.view(device).source}): fix nr_run/platforms/{dev.platform}")
        key = FIX_KEYS.get(problem.check, "")
        if not key:
            return f"{dev.platform} platform plug-in (nr_run/platforms/{dev.platform})"
        return f"{self.fabric.fabric_file or 'fabric.yaml'}: " + key.format(profile=dev.roce.profile, role=dev.role)


# What a lossy aggregation tier (policy.cross_zone: lossy) leaves out on purpose: no PFC, no lossless PG, so no
# watchdog. Classification, queue, MTU and ECN marking still have to hold on those hops.
LOSSY_BY_CHOICE = frozenset({"pfc", "pg", "watchdog"})


def _judge(checker: _Checker, pc: PathClass, only: frozenset[str] | None = None) -> AnalysisFinding:
    """The class holds, or its first broken hop (counting only the checks in `only`, when given). A cross-zone
    class of a site whose aggregation tier is lossy by choice is a warning saying so, unless a hop is broken
    for another reason."""
    lossy = pc.kind == "cross-zone" and checker.fabric.cross_zone == "lossy"
    hops = 0
    for position in pc.positions:
        count, broken = checker.position(position, pc.host_links)
        hops += count
        if only is not None:
            broken = [b for b in broken if b[3].check in only]
        if lossy:
            broken = [b for b in broken if b[3].check not in LOSSY_BY_CHOICE]
        if broken:
            device, port, direction, problem = min(broken, key=lambda b: (b[0], b[1], b[3].check))
            where = {f"{d}:{p}" for d, p, _, _ in broken}
            return AnalysisFinding(
                analysis=NAME, subject=pc.name, passed=False,
                message=f"first broken hop: {position.label} {device}:{port}: {problem.message}"
                        + (f" (and {len(where) - 1} more port(s) at this hop)" if len(where) > 1 else ""),
                fix=checker.fix(device, port, direction, problem),
                data={"position": position.label, "device": device, "port": port, "check": problem.check,
                      "field": FIX_KEYS.get(problem.check, "").split(" ")[0].format(
                          profile=checker.fabric.devices[device].roce.profile,
                          role=checker.fabric.devices[device].role),
                      "ports_affected": sorted(where)[:20], "example_path": pc.example, "pairs": pc.pairs})
    if lossy:
        return AnalysisFinding(
            analysis=NAME, subject=pc.name, passed=False, severity="warning",
            message=f"lossy by choice (policy.cross_zone: lossy): cross-zone RoCE crosses the aggregation tier "
                    f"without PFC; ECN still marks on queue {checker.ref.queue}, and a drop there costs a "
                    f"retransmission ({hops} hop(s) checked)",
            fix=f"{checker.fabric.fabric_file or 'fabric.yaml'}: policy.cross_zone: lossless",
            data={"example_path": pc.example, "pairs": pc.pairs, "hops_checked": hops, "lossy": True})
    return AnalysisFinding(analysis=NAME, subject=pc.name, passed=True,
                           message=f"{hops} hop(s) carry DSCP {checker.ref.dscp} losslessly "
                                   f"(TC {checker.ref.priority}, PG {checker.ref.pg}, queue {checker.ref.queue})",
                           data={"example_path": pc.example, "pairs": pc.pairs, "hops_checked": hops})


def _hop_table(checker: _Checker, pc: PathClass, through: str | None) -> Table:
    """A path of the class (through the broken device, if any), hop by hop: what each port does with RoCE."""
    ref = checker.ref
    names, ports = example_path(pc, checker.fabric, through)
    rows: list[list[Any]] = []
    for pref in ports:
        view = checker.view(pref.device)
        pq = view.ports.get(pref.port)
        where = f"{pref.device}:{pref.port} ({pref.direction})"
        if pq is None:
            rows.append([where, "-", "-", "-", "-", "-", "-", view.source, "port not configured"])
            continue
        tc = pq.dscp_to_tc.get(ref.dscp)
        pg = pq.tc_to_pg.get(tc) if pq.tc_to_pg is not None and tc is not None else None
        queue = pq.tc_to_queue.get(tc) if tc is not None else None
        nic = checker.fabric.devices[pref.device].role == "gpu"
        problems = "; ".join(p.message for p in checker.port(pref)) or "ok"
        rows.append([where, tc, "-" if pg is None else pg, queue,
                     ",".join(map(str, sorted(pq.pfc_priorities))) or "off",
                     "-" if nic else ("yes" if queue in pq.ecn_queues else "no"), pq.mtu, view.source, problems])
    return Table(title=f"RoCE DSCP {ref.dscp} on each hop of {' -> '.join(names)} ({pc.name})",
                 columns=["port", "TC", "PG", "queue", "PFC", "ECN", "MTU", "read from", "verdict"], rows=rows)


MAX_DRAWN_DEVICES = 120
# What makes RoCE lossy or undeliverable on a hop, whatever the site's policy: these stop a deploy. ECN, CNP
# scheduling, watchdog arming and non-ECT handling fail the proof too, but a site may choose them (ECN off
# leaves PFC alone to do the work): they are the analysis' findings, not preflight errors.
UNSAFE_CHECKS = frozenset({"classification", "trust", "pfc", "pg", "queue", "mtu", "config", "watchdog-limit"})


def unsafe_findings(fabric: FabricIntent) -> list[AnalysisFinding]:
    """Per path class, the first hop where RoCE is not lossless (UNSAFE_CHECKS only); failed findings only."""
    checker = _Checker(fabric)
    findings = [_judge(checker, pc, UNSAFE_CHECKS) for pc in path_classes(fabric)]
    return [f for f in findings if not f.passed and f.severity == "error"]


def _topology(fabric: FabricIntent, findings: list[AnalysisFinding]) -> Figure | None:
    """The fabric by tier with the links at each class's first broken hop in red (servers drawn on small sites)."""
    devices = fabric.devices if len(fabric.devices) <= MAX_DRAWN_DEVICES else {
        n: d for n, d in fabric.devices.items() if d.role != "gpu"}
    if len(devices) > MAX_DRAWN_DEVICES:
        return None
    edges = sorted({(lk.a_device, lk.b_device) for lk in fabric.links
                    if lk.a_device in devices and lk.b_device in devices})
    broken = {tuple(where.split(":", 1)) for f in findings if not f.passed
              for where in f.data.get("ports_affected", [])}
    highlight = sorted({(lk.a_device, lk.b_device) for lk in fabric.links
                        if (lk.a_device, lk.a_port) in broken or (lk.b_device, lk.b_port) in broken})
    return Figure("Fabric (links at a first broken hop in red)", "topology", {
        "nodes": [{"name": n, "tier": d.role} for n, d in sorted(devices.items())],
        "edges": [list(e) for e in edges], "highlight": [list(e) for e in highlight if set(e) <= set(devices)]})


def analyse(fabric: FabricIntent, options: AnalysisOptions) -> AnalysisResult:
    start = time.perf_counter()
    checker = _Checker(fabric)
    classes = path_classes(fabric)
    findings = [_judge(checker, pc) for pc in classes]
    result = AnalysisResult(name=NAME, title="Lossless-path proof", findings=findings)
    result.tables.append(Table(
        title="Path classes", columns=["class", "RTSW pairs", "verdict", "first broken hop", "fix"],
        rows=[[f.subject, f.data.get("pairs", 0), "holds" if f.passed else "lossy" if f.data.get("lossy") else "BROKEN",
               "" if f.passed else f.message.removeprefix("first broken hop: "), f.fix] for f in findings]))
    broken = next(((pc, f) for pc, f in zip(classes, findings, strict=True) if not f.passed and "device" in f.data),
                  None)
    shown = broken[0] if broken else next((pc for pc in classes if pc.kind == "same-rail"),
                                          classes[0] if classes else None)
    if shown is not None:
        result.tables.append(_hop_table(checker, shown, str(broken[1].data["device"]) if broken else None))
    figure = _topology(fabric, findings)
    if figure is not None:
        result.figures.append(figure)
    ref = checker.ref
    result.summary = {"path_classes": len(classes), "broken": sum(not f.passed and not f.data.get("lossy") for f in findings),
                      "lossy_by_choice": sum(bool(f.data.get("lossy")) for f in findings),
                      "roce_dscp": ref.dscp, "priority": ref.priority, "queue": ref.queue, "pg": ref.pg,
                      "cnp_dscp": ref.cnp_dscp}
    if not classes:
        result.findings.append(AnalysisFinding(NAME, "fabric", "no GPU-to-GPU path found (no host links cabled)",
                                               passed=True, severity="warning"))
    result.seconds = time.perf_counter() - start
    return result
