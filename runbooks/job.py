"""Job check: is the fabric under a training job's nodes healthy right now? (a Slurm prolog's question)

The job's nodes (servers of the compiled intent) give their NICs, the RTSW ports those NICs are cabled to,
the RTSWs' uplinks and the CTSW ports at the far end of those uplinks. The usual checks
(validators) run on an intent scoped to exactly those devices and ports: PFC state, watchdog and storms
(pfc), ECN configuration (ecn), lossless drops and pause rates over a short counter window (counters),
link state (interfaces), ECMP width from each of the job's RTSWs toward the job's other racks (ecmp), and
what each node's NICs run: MTU, trust, DSCP map, PFC, DCQCN or PFC-only, ToS (host, host-link).
A finding on a port outside the job is not the job's problem and is dropped. The verdict is one line:
"ok: ..." or "drain: <device> <port> <what> (<observed>)".
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nornir.core import Nornir

from nr_run.intent.models import FabricIntent, Link
from nr_run.validators.base import SEVERITY_ORDER, Finding

JOB_CHECKS = ["counters", "ecmp", "ecn", "host", "host-link", "interfaces", "pfc"]
# a prolog has seconds, not minutes: the counter window is short unless an option says otherwise
DEFAULT_OPTIONS: dict[str, dict[str, Any]] = {"counters": {"interval_s": 1.0}}
# which failure names the drain reason when several fail: what hurts a job most first
_RANK = {"pfc": 0, "counters": 1, "host": 2, "host-link": 2, "interfaces": 3, "ecmp": 4, "ecn": 5}


class UnknownNodes(ValueError):
    """Node names that are not servers of the site."""


@dataclass(frozen=True)
class JobScope:
    """What a job's traffic crosses: node NICs, their switch ports, the uplinks and the CTSW ends."""

    nodes: tuple[str, ...]
    nics: tuple[tuple[str, str, str, str], ...]          # (node, nic, rtsw, rtsw port)
    ports: Mapping[str, frozenset[str]]                   # switch -> its ports the job uses

    @property
    def devices(self) -> list[str]:
        return sorted(self.ports)

    def port_set(self) -> set[tuple[str, str]]:
        """Every (device, port) of the job: the switch ports and the nodes' own NICs."""
        return {(d, p) for d, ports in self.ports.items() for p in ports} | {(n[0], n[1]) for n in self.nics}


def job_scope(fabric: FabricIntent, nodes: list[str]) -> JobScope:
    """The job's scope from the compiled intent; UnknownNodes if a name is not a server of the site."""
    unknown = [n for n in nodes if n not in fabric.devices or fabric.devices[n].role != "gpu"]
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise UnknownNodes(f"not a GPU server of site {fabric.site}: {shown}")
    ports: dict[str, set[str]] = {}
    nics = []
    for node in nodes:
        for nic in fabric.devices[node].nics:
            if not nic.peer_device or nic.peer_device not in fabric.devices:
                continue          # a NIC that is not cabled carries none of the job's fabric traffic
            nics.append((node, nic.name, nic.peer_device, nic.peer_port))
            ports.setdefault(nic.peer_device, set()).add(nic.peer_port)
    for rtsw in sorted({n[2] for n in nics}):
        for itf in fabric.devices[rtsw].interfaces:
            if itf.role == "fabric":     # ECMP spreads the job's traffic over every uplink
                ports[rtsw].add(itf.name)
                ports.setdefault(itf.peer_device, set()).add(itf.peer_port)
    return JobScope(tuple(nodes), tuple(nics), {d: frozenset(p) for d, p in sorted(ports.items())})


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
    unknown: dict[str, str] = field(default_factory=dict)       # device -> what could not be read
    elapsed_s: float = 0.0
    budget_s: float = 0.0
    timed_out: bool = False

    @property
    def drain(self) -> bool:
        return bool(self.findings)

    def line(self) -> str:
        """The one line a prolog prints: ok or the drain reason."""
        if not self.findings:
            what = (f"ok: {len(self.scope.nodes)} node(s), {len(self.scope.nics)} NIC(s), "
                    f"{len(self.scope.ports)} switch(es) checked in {self.elapsed_s:.1f} s")
            if self.timed_out:
                return (f"ok: fabric check incomplete after the {self.budget_s:g} s budget "
                        f"({len(self.scope.ports)} switch(es)); nothing found to drain for")
            if self.unknown:
                what += f"; {len(self.unknown)} switch(es) unreadable: {', '.join(sorted(self.unknown)[:3])}"
            return what
        first = self.findings[0]
        # what else fails, counted per port (or per path, for ECMP), not per finding
        more = len({(f.device, f.port or f.peer_device) for f in self.findings}) - 1
        return f"drain: {reason(first, self.findings)}" + (f" (+{more} more)" if more > 0 else "")

    def as_dict(self) -> dict[str, Any]:
        return {"verdict": "drain" if self.drain else "ok", "line": self.line(),
                "nodes": list(self.scope.nodes), "elapsed_s": round(self.elapsed_s, 3), "budget_s": self.budget_s,
                "timed_out": self.timed_out,
                "nics": [{"node": n, "nic": c, "device": d, "port": p} for n, c, d, p in self.scope.nics],
                "ports": {d: sorted(p) for d, p in self.scope.ports.items()},
                "findings": [f.to_dict() for f in self.findings], "unreadable": dict(sorted(self.unknown.items()))}


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
    return f"{f.device} {f.target}: {f.observed} (expected {f.expected})"


def _order(f: Finding) -> tuple[Any, ...]:
    storm = 0 if f.kind == "pfc-storm" else 1
    return (SEVERITY_ORDER[f.severity], storm, _RANK.get(f.check, 9), f.device, f.port, f.target)


def judge(report: Any, scope: JobScope) -> tuple[list[Finding], dict[str, str]]:
    """Failed findings on the job's ports (or whole-device ones on the job's switches), worst first; and the
    switches that could not be read (a management-plane problem, not a reason to drain)."""
    unknown: dict[str, str] = {}
    failed = []
    for f in report.findings:
        if f.passed:
            continue
        if f.kind in ("unreachable", "not-collected"):
            unknown.setdefault(f.device, f"{f.target.removeprefix('section:') or 'device'}: {f.observed}")
            continue
        if f.device in scope.nodes:
            if f.port and (f.device, f.port) not in scope.port_set():
                continue
        elif f.port and f.port not in scope.ports.get(f.device, ()):
            continue
        if f.check == "ecmp" and f.peer_device not in scope.ports:
            continue
        failed.append(f)
    for device, errors in report.collection_errors.items():
        if errors:
            unknown.setdefault(device, next(iter(sorted(errors.values()))))
    return sorted(failed, key=_order), unknown


def merge_options(options: Mapping[str, Mapping[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """The job-check defaults with the caller's options over them, key by key: setting one counters option keeps
    the short counter window."""
    merged = {check: dict(values) for check, values in DEFAULT_OPTIONS.items()}
    for check, values in (options or {}).items():
        merged.setdefault(check, {}).update(values)
    return merged


def run_job_check(nr: Nornir, fabric: FabricIntent, scope: JobScope, budget_s: float = 10.0,
                  options: Mapping[str, Mapping[str, Any]] | None = None) -> JobVerdict:
    """The scoped check, within `budget_s`: past it the verdict says the check is incomplete (the work left
    runs on in a daemon thread; the CLI exits without waiting for it)."""
    from nr_run.runbooks.check import run_checks

    merged = merge_options(options)
    scoped = scoped_fabric(fabric, scope)
    wanted = set(scope.devices) | set(scope.nodes)
    runner = nr.filter(filter_func=lambda h: h.name in wanted)
    started = time.monotonic()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["report"] = run_checks(runner, scoped, JOB_CHECKS, merged)
        except BaseException as exc:   # re-raised below, in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=work, name="nr-run-job-check", daemon=True)
    worker.start()
    worker.join(budget_s)
    verdict = JobVerdict(scope, elapsed_s=time.monotonic() - started, budget_s=budget_s)
    if worker.is_alive():
        verdict.timed_out = True
        return verdict
    if "error" in box:
        raise box["error"]
    verdict.findings, verdict.unknown = judge(box["report"], scope)
    return verdict
