"""Job check: is the fabric under a training job's nodes healthy right now? (a Slurm prolog's question)

The job's nodes (servers of the compiled intent) give their NICs, the RTSW ports those NICs are cabled to,
the RTSWs' uplinks and the CTSW ports at the far end of those uplinks. The usual checks
(validators) run on an intent scoped to exactly those devices and ports: PFC state, watchdog and storms
(pfc), ECN configuration (ecn), lossless drops and pause rates over a short counter window (counters),
link state (interfaces), LLDP against the planned cabling (cabling: a swapped or missing rail cable) and ECMP
width from each of the job's RTSWs toward the job's other racks (ecmp), and what each node's NICs run: MTU,
trust, DSCP map, PFC, DCQCN or PFC-only, ToS (host, host-link). Every compute NIC of every node is
in scope: one the cabling plan gives no rail link is a finding (rails), not a NIC left out of the job.
A finding on a port outside the job is not the job's problem and is dropped.

Each switch is read and measured on its own, so a switch that does not answer within the budget costs only its
own verdict: the findings of the switches that did answer drain the job whatever else timed out, and the
switches left unanswered are named. Whether "could not check" alone drains is the site's choice
(`unknown_drains`; docs/slurm.md). The verdict is one line: "ok: ...", "drain: <device> <port> <what>
(<observed>)" or "unknown: <switches> not checked ...".
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nornir.core import Nornir

from nr_run.intent.models import FabricIntent, Link
from nr_run.platforms.state import DeviceState
from nr_run.validators.base import (
    SEVERITY_ORDER,
    Check,
    Finding,
    Selection,
    evaluate_all,
    required_sections,
    select,
)
from nr_run.validators.probes import Sleep

JOB_CHECKS = ["cabling", "counters", "ecmp", "ecn", "host", "host-link", "interfaces", "pfc"]
# a prolog has seconds, not minutes: the counter window is short unless an option says otherwise
DEFAULT_OPTIONS: dict[str, dict[str, Any]] = {"counters": {"interval_s": 1.0}}
# switches read at the same time: a job's switches all start at once up to this many (a bigger job queues the
# rest, which then may miss the budget and are named), so threads and connections stay bounded
MAX_PARALLEL = 128
# which failure names the drain reason when several fail: what hurts a job most first
_RANK = {"pfc": 0, "counters": 1, "rails": 2, "host": 2, "host-link": 2, "interfaces": 3, "cabling": 4, "ecmp": 5,
         "ecn": 6}


class UnknownNodes(ValueError):
    """Node names that are not servers of the site."""


@dataclass(frozen=True)
class JobSpan:
    """Which zones and CTSWs a job spans; a job across zones crosses the aggregation tier, whose bandwidth is
    oversubscribed by design (a topology-aware scheduler keeps jobs inside a zone)."""

    zones: tuple[int, ...] = ()
    spines: tuple[str, ...] = ()
    aggregation: tuple[str, ...] = ()
    oversubscription: float | None = None     # the worst CTSW's down/up ratio toward the aggregation tier
    lossy: bool = False                       # the aggregation tier carries RoCE without PFC (policy.cross_zone)

    @property
    def cross_zone(self) -> bool:
        return len(self.zones) > 1

    def text(self) -> str:
        where = f"zone(s) {', '.join(f'z{z}' for z in self.zones)}; " if self.zones else ""
        return f"spans {where}{len(self.spines)} CTSW(s)"

    def warning(self) -> str | None:
        if not self.cross_zone:
            return None
        ratio = f" ({self.oversubscription:.2f}:1 oversubscribed)" if self.oversubscription else ""
        lossy = ("; its RoCE traffic there is lossy (policy.cross_zone: lossy: no PFC on the CTSW-ATSW links, "
                 "ECN only, a drop costs a retransmission)" if self.lossy else "")
        return (f"warning: crosses the aggregation tier{ratio} through {len(self.aggregation)} ATSW(s): "
                f"cross-zone traffic gets less than in-zone bandwidth{lossy}; keep the job inside one zone")

    def as_dict(self) -> dict[str, Any]:
        return {"zones": list(self.zones), "ctsws": list(self.spines), "atsws": list(self.aggregation),
                "cross_zone": self.cross_zone, "oversubscription": self.oversubscription,
                "cross_zone_lossy": self.cross_zone and self.lossy, "warning": self.warning()}


@dataclass(frozen=True)
class JobScope:
    """What a job's traffic crosses: node NICs, their switch ports, the uplinks and the CTSW ends (and, across
    zones, the CTSWs' uplinks and the ATSW ends)."""

    nodes: tuple[str, ...]
    nics: tuple[tuple[str, str, str, str], ...]          # (node, nic, rtsw, rtsw port)
    ports: Mapping[str, frozenset[str]]                   # switch -> its ports the job uses
    uncabled: tuple[tuple[str, str], ...] = ()            # (node, compute NIC) the cabling plan gives no rail link
    span: JobSpan = JobSpan()

    @property
    def devices(self) -> list[str]:
        return sorted(self.ports)

    def port_set(self) -> set[tuple[str, str]]:
        """Every (device, port) of the job: the switch ports and the nodes' own NICs."""
        return {(d, p) for d, ports in self.ports.items() for p in ports} | {(n[0], n[1]) for n in self.nics}


def job_scope(fabric: FabricIntent, nodes: list[str]) -> JobScope:
    """The job's scope from the compiled intent; UnknownNodes if a name is not a server of the site."""
    unknown = [n for n in nodes if n not in fabric.devices or fabric.devices[n].tier != 0]
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise UnknownNodes(f"not a GPU server of site {fabric.site}: {shown}")
    ports: dict[str, set[str]] = {}
    nics = []
    uncabled = []
    for node in nodes:
        cabled = set()
        for nic in fabric.devices[node].nics:
            if not nic.peer_device or nic.peer_device not in fabric.devices:
                continue
            cabled.add(nic.name)
            nics.append((node, nic.name, nic.peer_device, nic.peer_port))
            ports.setdefault(nic.peer_device, set()).add(nic.peer_port)
        # a compute NIC without a rail link carries none of the job's traffic: the job runs short of a rail
        uncabled += [(node, port) for port in fabric.devices[node].rails if port not in cabled]
    for rtsw in sorted({n[2] for n in nics}):
        for itf in fabric.devices[rtsw].interfaces:
            if itf.role == "fabric":     # ECMP spreads the job's traffic over every uplink
                ports[rtsw].add(itf.name)
                ports.setdefault(itf.peer_device, set()).add(itf.peer_port)
    span = _span(fabric, nodes, sorted(d for d in ports if fabric.devices[d].tier == 2))
    if span.cross_zone:
        for ctsw in span.spines:
            for itf in fabric.devices[ctsw].interfaces:
                if itf.peer_device in fabric.devices and fabric.devices[itf.peer_device].tier > 2:
                    ports[ctsw].add(itf.name)
                    ports.setdefault(itf.peer_device, set()).add(itf.peer_port)
        span = JobSpan(span.zones, span.spines, tuple(sorted(d for d in ports if fabric.devices[d].tier > 2)),
                       span.oversubscription, fabric.cross_zone == "lossy")
    return JobScope(tuple(nodes), tuple(nics), {d: frozenset(p) for d, p in sorted(ports.items())}, tuple(uncabled),
                    span)


def _span(fabric: FabricIntent, nodes: list[str], spines: list[str]) -> JobSpan:
    devs = fabric.devices
    zones = tuple(sorted({z for n in nodes if (z := devs[n].zone) is not None}))
    worst = None
    for name in spines:
        up = sum(i.speed_mbps for i in devs[name].interfaces if i.peer_device in devs and devs[i.peer_device].tier > 2)
        down = sum(i.speed_mbps for i in devs[name].interfaces if i.peer_device in devs and devs[i.peer_device].tier < 2)
        if up and down:
            worst = max(worst or 0.0, down / up)
    return JobSpan(zones, tuple(spines), (), round(worst, 2) if worst is not None else None)


def scoped_fabric(fabric: FabricIntent, scope: JobScope) -> FabricIntent:
    """The intent of the job's switches with only the job's ports, and of the job's nodes (their NICs): the
    checks then judge nothing else."""
    devices = {name: fabric.devices[name].model_copy(update={"interfaces": [
        i for i in fabric.devices[name].interfaces if i.name in scope.ports[name]]}) for name in scope.devices}
    devices.update({name: fabric.devices[name] for name in scope.nodes})
    return fabric.model_copy(update={"devices": devices,
                                     "links": [lk for lk in fabric.links if _in(lk, scope)]})


def _in(link: Link, scope: JobScope) -> bool:
    """A link both of whose switch ends the job uses (host links end on a server: only the switch end counts)."""
    ends = [(link.a_device, link.a_port), (link.b_device, link.b_port)]
    return all(p in scope.ports[d] for d, p in ends if d in scope.ports) and any(d in scope.ports for d, _ in ends)


@dataclass
class JobVerdict:
    scope: JobScope
    findings: list[Finding] = field(default_factory=list)       # failed, within the job's ports
    unknown: dict[str, str] = field(default_factory=dict)       # device -> why it was not (fully) checked
    elapsed_s: float = 0.0
    budget_s: float = 0.0
    timed_out: bool = False                                      # some switch did not answer within the budget
    unknown_drains: bool = False                                 # the site's choice: "could not check" drains

    @property
    def drain(self) -> bool:
        return bool(self.findings) or (self.unknown_drains and bool(self.unknown))

    @property
    def verdict(self) -> str:
        """ok, drain, or unknown (some switch not checked, nothing found on the others, the site lets it pass)."""
        return "drain" if self.drain else "unknown" if self.unknown else "ok"

    def _unchecked(self) -> str:
        names = sorted(self.unknown)
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        late = sum(1 for d in names if self.unknown[d].startswith(NO_ANSWER))
        why = (f"no answer within the {self.budget_s:g} s budget" if late == len(names)
               else "unreadable" if not late else f"{late} without an answer within the {self.budget_s:g} s budget")
        # the job's nodes are read too (their NICs): say "device(s)" once one of them is among the unchecked
        what = "switch(es)" if all(n in self.scope.ports for n in names) else "device(s)"
        return f"{len(names)} {what} not checked ({why}): {shown}"

    def line(self) -> str:
        """The one line a prolog prints: ok, the drain reason, or what could not be checked."""
        if self.findings:
            first = self.findings[0]
            # what else fails, counted per port (or per path, for ECMP), not per finding
            more = len({(f.device, f.port or f.peer_device) for f in self.findings}) - 1
            line = f"drain: {reason(first, self.findings)}" + (f" (+{more} more)" if more > 0 else "")
            return line + (f"; {self._unchecked()}" if self.unknown else "")
        answered = sum(1 for d in self.scope.ports if d not in self.unknown)
        if self.unknown:
            tail = f"; nothing to drain on the {answered} switch(es) checked"
            if self.unknown_drains:
                return f"drain: {self._unchecked()} (site option: could not check drains){tail}"
            return f"unknown: {self._unchecked()}{tail}"
        what = (f"ok: {len(self.scope.nodes)} node(s), {len(self.scope.nics)} NIC(s), "
                f"{len(self.scope.ports)} switch(es) checked in {self.elapsed_s:.1f} s")
        if not self.scope.span.zones:     # a single-zone fabric: nothing more to say
            return what
        warning = self.scope.span.warning()
        return what + f"; {self.scope.span.text()}" + (f"; {warning}" if warning else "")

    def as_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "line": self.line(),
                "nodes": list(self.scope.nodes), "elapsed_s": round(self.elapsed_s, 3), "budget_s": self.budget_s,
                "timed_out": self.timed_out, "unknown_drains": self.unknown_drains,
                "nics": [{"node": n, "nic": c, "device": d, "port": p} for n, c, d, p in self.scope.nics],
                "ports": {d: sorted(p) for d, p in self.scope.ports.items()}, "span": self.scope.span.as_dict(),
                "findings": [f.to_dict() for f in self.findings], "unreadable": dict(sorted(self.unknown.items()))}


NO_ANSWER = "no answer within"


def reason(f: Finding, findings: list[Finding]) -> str:
    """A finding as a drain reason: device, port, what is wrong, the measured value."""
    if f.kind == "pfc-storm":
        rate = next((g.value for g in findings if g.kind == "pause-rate-rx" and g.device == f.device
                     and g.port == f.port and g.value is not None), None)
        return (f"{f.device} {f.port} prio {f.index} PFC storm"
                + (f" ({rate:.1f} pause frames/s)" if rate is not None else " (watchdog: queue stormed)"))
    if f.kind == "lossless-drops":
        queue = f"queue {f.index} " if f.index is not None else ""
        return f"{f.device} {f.port} {queue}lossless drops ({f.observed})"
    if f.kind in ("pause-rate-rx", "pause-rate-tx"):
        return (f"{f.device} {f.port} PFC pause {f.kind.rsplit('-', 1)[1]} {f.observed} "
                f"(expected {f.expected})")
    if f.check == "cabling":
        return f"{f.device} {f.port} LLDP sees {f.observed} (planned {f.expected})"
    if f.check == "rails":
        return f"{f.device} {f.port}: {f.observed} (the job would run short of a rail)"
    return f"{f.device} {f.target}: {f.observed} (expected {f.expected})"


def _order(f: Finding) -> tuple[Any, ...]:
    storm = 0 if f.kind == "pfc-storm" else 1
    return (SEVERITY_ORDER[f.severity], storm, _RANK.get(f.check, 9), f.device, f.port, f.target)


def judge(findings: list[Finding], errors: Mapping[str, Mapping[str, str]],
          scope: JobScope) -> tuple[list[Finding], dict[str, str]]:
    """Failed findings on the job's ports (or whole-device ones on the job's switches), worst first; and the
    switches that could not be read, with why."""
    unknown: dict[str, str] = {}
    failed = []
    for f in findings:
        if f.passed:
            continue
        if f.kind in ("unreachable", "not-collected"):
            unknown.setdefault(f.device, f"{f.target.removeprefix('section:') or 'device'}: {f.observed}")
            continue
        if f.device in scope.ports and f.port and f.port not in scope.ports[f.device]:
            continue
        if f.check == "ecmp" and f.peer_device not in scope.ports:
            continue
        failed.append(f)
    for device, errs in errors.items():
        if errs:
            unknown.setdefault(device, next(iter(sorted(errs.values()))))
    return sorted(failed, key=_order), unknown


def rail_findings(fabric: FabricIntent, scope: JobScope) -> list[Finding]:
    """The job's compute NICs without a rail link, as the rails check words them (from the intent alone)."""
    from nr_run.validators.checks.cabling import RailsCheck

    check = RailsCheck()
    nodes = sorted({node for node, _ in scope.uncabled})
    found = [f for n in nodes for f in check.evaluate(fabric.devices[n], DeviceState(n, fabric.devices[n].platform),
                                                      fabric, {})]
    return [f for f in found if not f.passed]


def merge_options(options: Mapping[str, Mapping[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """The job-check defaults with the caller's options over them, key by key: setting one counters option keeps
    the short counter window."""
    merged = {check: dict(values) for check, values in DEFAULT_OPTIONS.items()}
    for check, values in (options or {}).items():
        merged.setdefault(check, {}).update(values)
    return merged


def check_device(nr: Nornir, fabric: FabricIntent, name: str, checks: list[Check], sleep: Sleep) -> DeviceState:
    """One switch (or node) of the job read and measured on its own (never raises: errors go in state.errors)."""
    from nr_run.runbooks.check import collect_state
    from nr_run.validators.helpers import distinct

    one = nr.filter(filter_func=lambda h: h.name == name)
    sections = required_sections(checks, fabric.devices[name])
    state = DeviceState(name, fabric.devices[name].platform)
    if name not in one.inventory.hosts:
        state.errors = {s: "not in the run's inventory" for s in sections}
        return state
    res = one.run(task=collect_state, fabric=fabric, sections_by_host={name: sections}, on_failed=True)
    got = res.get(name)
    if got is not None and not got.failed:
        state = got.result
    else:
        state.errors = {s: f"collection failed: {got.exception if got else 'no result'}" for s in sections}
    states = {name: state}
    for probe in distinct(p for c in checks for p in c.probes()):
        probe.run(one, fabric, states, sleep)
    return state


def run_job_check(nr: Nornir, fabric: FabricIntent, scope: JobScope, budget_s: float = 10.0,
                  options: Mapping[str, Mapping[str, Any]] | None = None, unknown_drains: bool = False,
                  clock: Callable[[], float] = time.monotonic, sleep: Sleep = time.sleep) -> JobVerdict:
    """The scoped check within `budget_s` (measured on `clock`): every switch is read on its own thread;
    at the deadline the switches that answered are judged together and the rest are named as not checked
    (their calls run on in daemon threads, on `nr`'s connections: the CLI exits without waiting for them, and a
    library caller gives a later run its own Nornir)."""
    merged = merge_options(options)
    scoped = scoped_fabric(fabric, scope)
    checks = select(JOB_CHECKS, merged)
    started = clock()
    deadline = started + budget_s
    done: dict[str, DeviceState] = {}
    failures: dict[str, Exception] = {}          # a switch whose check raised: not checked, named with why
    ready = threading.Condition()
    slots = threading.BoundedSemaphore(MAX_PARALLEL)

    def work(name: str) -> None:
        try:
            with slots:
                state = check_device(nr, scoped, name, checks, sleep)
        except Exception as exc:   # one switch's bug or broken answer costs only its own verdict
            with ready:
                failures[name] = exc
                ready.notify_all()
            return
        with ready:
            done[name] = state
            ready.notify_all()

    # every switch and every node (its NICs) on its own thread
    targets = scope.devices + sorted(scope.nodes)
    for name in targets:
        threading.Thread(target=work, args=(name,), name=f"nr-run-job-{name}", daemon=True).start()
    with ready:
        while len(done) + len(failures) < len(targets):
            left = deadline - clock()
            if left <= 0:
                break
            ready.wait(left)
        states = dict(done)
        broken = {d: f"check failed: {type(e).__name__}: {e}" for d, e in failures.items()}
    verdict = JobVerdict(scope, elapsed_s=clock() - started, budget_s=budget_s, unknown_drains=unknown_drains)
    selection = {name: Selection(frozenset(c.name for c in checks)) for name in states}
    findings = evaluate_all(checks, scoped, states, selection) + rail_findings(fabric, scope)
    verdict.findings, verdict.unknown = judge(findings, {d: s.errors for d, s in states.items()}, scope)
    verdict.unknown.update(broken)
    late = [d for d in targets if d not in states and d not in broken]
    for name in late:
        verdict.unknown[name] = f"{NO_ANSWER} the {budget_s:g} s budget"
    verdict.unknown = dict(sorted(verdict.unknown.items()))
    verdict.timed_out = bool(late)
    return verdict
