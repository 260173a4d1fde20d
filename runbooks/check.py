"""Post-check runbook: collect state once per device, run the probes the checks declare, evaluate, report.

Importable (usable in a user's own Nornir script):

    nr.run(task=collect_state, fabric=fabric, sections_by_host={...})   -> Result(result=DeviceState)
    run_checks(nr, fabric, checks, options) -> CheckReport
    run_checks(nr, fabric, checks, options, selection={host: Selection(checks, peers)})  -> a partial run

`checks` are check names or tags (None: all); `selection` (validators.base.Selection per host) narrows what
is read and judged on each host: only the named checks, their sections, findings toward `peers`; hosts
outside it are not judged. `options` maps a check name to its options, validated by
the check's pydantic Options model (unknown check or key, or a bad value: InvalidOption), e.g.
    {"counters": {"interval_s": 2.0, "max_pause_pps": 50}, "rdma": {"pattern": "same_rail", "seconds": 2},
     "cabling": {"host_ports_require_lldp": False}}
Probes (validators.probes) come from the selected checks; each distinct one runs once.

JSON schema of `CheckReport.to_dict()` ("schema": "nr-run.check/2"); lists are sorted, keys stable:
{
  "schema": "nr-run.check/2",
  "site": "dc1",
  "passed": false,                               # true iff every failed finding is a declared degradation
  "checks": ["bgp", "pfc", ...],                 # checks that ran, name order
  "summary": {"findings": 120, "passed": 118, "failed": 2, "declared": 0, "error": 1, "warning": 1, "info": 118,
              "devices": 10, "by_check": {"pfc": {"passed": 40, "failed": 1}, ...}},
  "findings": [                                   # failed first, then by severity, check, device, target
    {"check": "pfc", "device": "rtsw1", "target": "Ethernet1", "expected": "pfc priorities 3",
     "observed": "pfc priorities 4", "passed": false, "severity": "error", "hint": "...",
     "port": "Ethernet1", "peer_device": "ctsw1", "peer_port": "Ethernet1",
     "cause": "<cause id>" | null,                # null on a passed or a declared finding
     "declared": false}, ...],                    # true: a known degradation the inventory declares (fails nothing)
  "causes": [                                     # failed findings grouped by probable cause (validators.correlate):
    {"id": "link:ctsw1:Ethernet1|rtsw1:Ethernet1", "kind": "link" | "device" | "config",
     "layer": "physical" | "device" | "config",   # physical first, then devices, then configuration
     "summary": "link ctsw1:Ethernet1 <-> rtsw1:Ethernet1: oper down on ctsw1:Ethernet1",
     "root": "<finding id>", "hint": "...", "devices": ["ctsw1", "rtsw1"],
     "findings": ["<finding id>", ...]}, ...],   # the root first, then the consequences folded under it
  "collection_errors": {"rtsw3": {"bgp": "ConnectionException: ..."}},
  "port_counters": {"rtsw1": {"Ethernet1": {"pfc_rx_frames": 0, "pfc_tx_frames": 0, "ecn_marked_packets": 12,
                                            "queue_drops": 0}}},        # latest counter sample, when taken
  "rdma": null | {"pattern": "ring", "sources": ["gpu1:eth1", ...], "destinations": [...],
                  "cells": [{"src": "gpu1:eth1", "dst": "gpu2:eth1", "ping": true, "loss_pct": 0.0,
                             "gbps": 390.1, "status": "pass" | "fail", "detail": "..."}]}
}
Top-level keys after "collection_errors" are the probes' report keys (validators.probes.REPORT_KEYS), null when
the probe did not run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from nornir.core import Nornir
from nornir.core.task import AggregatedResult, Result, Task
from nornir.plugins.runners import ThreadedRunner

from nr_run.history.model import Observation, observations, with_changes
from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms.state import SECTIONS, CounterSample, DeviceState
from nr_run.runbooks.json_stream import dumps_streamed
from nr_run.runbooks.stream import StreamJudge
from nr_run.validators.base import (
    SEVERITY_ORDER,
    Check,
    Finding,
    Selection,
    all_checks,
    evaluate_all,
    required_prefixes,
    required_sections,
    select,
)
from nr_run.validators.collect import collect_sections, runner_for, supported
from nr_run.validators.correlate import Cause, cause_of, correlate
from nr_run.validators.helpers import distinct
from nr_run.validators.probes import REPORT_KEYS, Sleep

SCHEMA = "nr-run.check/2"


# ---------------------------------------------------------------- Nornir task

def collect_state(task: Task, fabric: FabricIntent, sections_by_host: Mapping[str, set[str]],
                  prefixes_by_host: Mapping[str, list[str] | None] | None = None,
                  judge: StreamJudge | None = None, release: Collection[str] = (),
                  ports_by_host: Mapping[str, tuple[str, ...] | None] | None = None) -> Result:
    """Collect the needed sections of one device into a DeviceState (never raises: errors go in state.errors).
    Sections the platform has no commands for are left to the probes that fill them. `prefixes_by_host`: the
    route prefixes the checks judge per host (absent or None: the whole routing table). `ports_by_host`: the
    ports whose counters are judged per host (absent or None: every port). `judge`: judges the
    state as soon as it is collected and keeps only what later checks read (runbooks.stream). `release`: hosts
    whose connections are closed once collected (nothing later in the run reads them in bulk)."""
    intent = fabric.devices[task.host.name]
    state = DeviceState(intent.name, intent.platform)
    state.counter_ports = (ports_by_host or {}).get(intent.name)
    wanted = sorted((s for s in sections_by_host.get(intent.name, set()) if supported(intent, s)),
                    key=SECTIONS.index)
    try:
        run = runner_for(task, intent)
    except Exception as exc:
        # name the address: a lab host the twin does not serve resolves nowhere, and the name says why
        where = f"{task.host.hostname}:{task.host.port}" if task.host.port else str(task.host.hostname)
        state.errors = {s: f"connection to {where} failed: {type(exc).__name__}: {exc}" for s in wanted}
        return Result(host=task.host, result=state)
    collect_sections(run, intent, wanted, state, (prefixes_by_host or {}).get(intent.name))
    if intent.name in release:
        task.host.close_connections()
    if judge is not None:
        judge.collected(intent.name, state)
    return Result(host=task.host, result=state)


# ---------------------------------------------------------------- report

@dataclass
class CheckReport:
    site: str
    checks: list[str]
    findings: list[Finding]
    collection_errors: dict[str, dict[str, str]] = field(default_factory=dict)
    probe_results: dict[str, Any] = field(default_factory=dict)     # probe report key -> its summary
    devices: int = 0
    port_counters: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)  # latest sample
    # the collected states, when the run kept them (run_checks' keep_states)
    states: dict[str, DeviceState] = field(default_factory=dict, repr=False, compare=False)
    # what the history records (runbooks.history): each device's latest counter sample (link status changes
    # included), the state observations, the hosts of the run and its wall-clock times
    samples: dict[str, CounterSample] = field(default_factory=dict, repr=False, compare=False)
    observations: list[Observation] = field(default_factory=list, repr=False, compare=False)
    hosts: list[str] = field(default_factory=list, repr=False, compare=False)
    started: float = 0.0
    finished: float = 0.0
    # the intent the findings were judged against: the links and adjacencies that group them by cause
    fabric: FabricIntent | None = field(default=None, repr=False, compare=False)
    _causes: list[Cause] | None = field(default=None, init=False, repr=False, compare=False)

    def causes(self) -> list[Cause]:
        """The failed findings the inventory does not declare, grouped by probable cause, physical layer first."""
        if self._causes is None:
            known = self.declared_ids()
            self._causes = correlate([f for f in self.findings if f.id not in known], self.fabric)
        return self._causes

    def declared(self) -> list[Finding]:
        """Failed findings that report what the inventory declares (a removed link, a NIC out of service):
        known degradations, reported every run, failing nothing."""
        checks = all_checks()
        return [f for f in self.findings if not f.passed and f.check in checks and checks[f.check].declared]

    def declared_ids(self) -> set[str]:
        return {f.id for f in self.declared()}

    @property
    def passed(self) -> bool:
        """No failed finding besides the declared degradations."""
        known = self.declared_ids()
        return all(f.passed or f.id in known for f in self.findings)

    def summary(self) -> dict[str, Any]:
        by_check: dict[str, dict[str, int]] = {c: {"passed": 0, "failed": 0} for c in self.checks}
        for f in self.findings:
            by_check.setdefault(f.check, {"passed": 0, "failed": 0})["passed" if f.passed else "failed"] += 1
        failed = [f for f in self.findings if not f.passed]
        return {
            "findings": len(self.findings),
            "passed": len(self.findings) - len(failed),
            "failed": len(failed),
            "declared": len(self.declared()),
            **{sev: sum(1 for f in self.findings if f.severity == sev) for sev in SEVERITY_ORDER},
            "devices": self.devices,
            "by_check": dict(sorted(by_check.items())),
        }

    def to_dict(self) -> dict[str, Any]:
        rest = self.to_dict_without_findings()
        head = ("schema", "site", "passed", "checks", "summary")          # the schema's key order
        return {**{k: rest[k] for k in head}, "findings": list(self.finding_dicts()),
                **{k: v for k, v in rest.items() if k not in head}}

    def finding_dicts(self) -> Iterator[dict[str, Any]]:
        """The findings as the report's JSON has them, one at a time."""
        owner = cause_of(self.causes())
        known = self.declared_ids()
        for f in self.findings:
            yield {**f.to_dict(), "cause": owner.get(f.id) if not f.passed else None, "declared": f.id in known}

    def json_chunks(self, extra: Mapping[str, Any] | None = None) -> Iterator[str]:
        """`json.dumps({**to_dict(), **extra}, indent=2, sort_keys=True) + "\n"` in pieces, a finding's dict
        made only when its text is written (what results.json holds)."""
        return dumps_streamed({**self.to_dict_without_findings(), **(extra or {})}, "findings", self.finding_dicts())

    def to_dict_without_findings(self) -> dict[str, Any]:
        causes = self.causes()
        return {
            "schema": SCHEMA,
            "site": self.site,
            "passed": self.passed,
            "checks": list(self.checks),
            "summary": self.summary(),
            "causes": [c.to_dict() for c in causes],
            "collection_errors": {d: dict(sorted(e.items())) for d, e in sorted(self.collection_errors.items())},
            "port_counters": {d: dict(sorted(p.items())) for d, p in sorted(self.port_counters.items())},
            **{key: self.probe_results.get(key) for key in sorted({*REPORT_KEYS, *self.probe_results})},
        }


# ---------------------------------------------------------------- composition

def describe(probe: Any) -> str:
    """A probe as a progress phase: its kind and parameters (its fields, not its class-level traits)."""
    import dataclasses

    fields = [f.name for f in dataclasses.fields(probe)] if dataclasses.is_dataclass(probe) else []
    params = ", ".join(f"{k}={getattr(probe, k)}" for k in fields)
    return f"probe {type(probe).__name__}({params})"


def gather_states(nr: Nornir, fabric: FabricIntent, selected: list[Check], sleep: Sleep = time.sleep,
                  progress: Any = None, selection: Mapping[str, Selection] | None = None,
                  judge: StreamJudge | None = None, release: bool = False,
                  ) -> tuple[list[str], dict[str, DeviceState], list[Any]]:
    """The collection half of run_checks: (hosts judged, their states, the probes that ran). A distributed run
    calls it on each shard's worker. `judge`: judges each state as it is collected (runbooks.stream), the
    states returned hold only what its late checks read. `release`: each device's connections are closed once
    the run no longer reads it: at once after its collection, or after its lane's probes for the hosts they
    revisit (a probe's `hosts(fabric)`, when it names them: the RDMA pairs' servers; else every device of its
    lane, as the second counter sample reads them all).

    Hosts go in lanes that run at the same time and share the run's workers (SharedRunner): the endpoints that
    the endpoint probes measure (RDMA between servers) are collected and probed while the other devices are
    collected and take their counter samples, instead of every probe waiting for the whole site's collection."""
    hosts = [h for h in sorted(nr.inventory.hosts) if h in fabric.devices and (selection is None or h in selection)]
    only = {h: selection[h].checks for h in hosts} if selection is not None else {}
    # the collection plan, once per run: the sections each host's checks need, and the routes they judge
    sections = {h: required_sections(selected, fabric.devices[h], only.get(h)) for h in hosts}
    prefixes = {h: required_prefixes(selected, fabric.devices[h], fabric, only.get(h))
                for h in hosts if "routes" in sections[h]}
    # a neighbour judged only on its links toward some devices reads only those ports' counters
    ports = ({h: judged_ports(fabric.devices[h], selection.get(h)) for h in hosts if "counters" in sections[h]}
             if selection is not None else {})
    targets = [h for h in hosts if any(supported(fabric.devices[h], s) for s in sections[h])]
    states: dict[str, DeviceState] = {h: DeviceState(h, fabric.devices[h].platform) for h in hosts}
    probes = distinct(p for c in selected for p in c.probes())   # checks declaring equal probes share one run
    if progress is not None and targets:
        progress.phase(f"collecting state from {len(targets)} device(s)")
    if progress is not None and probes:
        progress.phase("; ".join(describe(p) for p in probes))
    base = nr.filter(filter_func=lambda h: h.name in states) if selection is not None else nr   # probes: selected hosts
    ends = endpoint_hosts(fabric, hosts) if any(p.on_endpoints for p in probes) else set()
    lanes = [([h for h in targets if h not in ends], [p for p in probes if not p.on_endpoints]),
             ([h for h in targets if h in ends], [p for p in probes if p.on_endpoints])]
    lanes = [(members, lane_probes) for members, lane_probes in lanes if members or lane_probes]
    if len(lanes) > 1 and isinstance(nr.runner, ThreadedRunner):
        base = base.with_runner(SharedRunner(threading.BoundedSemaphore(nr.runner.num_workers),
                                             nr.runner.num_workers))

    def lane(members: list[str], lane_probes: list[Any]) -> None:
        # a probe that names the hosts it revisits (the RDMA pairs' servers) keeps only theirs open; any other
        # reads every device of the lane again (the second counter sample), which keeps them all until it ran
        revisit: set[str] = set()
        for p in lane_probes:
            revisit |= p.hosts(fabric) if hasattr(p, "hosts") else set(members)
        close = set(members) - revisit if release else set()
        _collect(base, fabric, members, sections, prefixes, states, progress, judge, close, ports)
        _probe(base, fabric, states, lane_probes, sleep)
        if release and lane_probes:
            for h in members:
                nr.inventory.hosts[h].close_connections()

    if len(lanes) > 1 and isinstance(base.runner, SharedRunner):
        with ThreadPoolExecutor(len(lanes), thread_name_prefix="nr-run-lane") as pool:
            for future in [pool.submit(lane, *one) for one in lanes]:
                future.result()
    else:
        for one in lanes:
            lane(*one)
    return hosts, states, probes


class SharedRunner:
    """Nornir's threaded runner, its hosts taking turns for `permits` that every lane of a run shares: the lanes
    together never hold more devices at once than the run's workers, and a lane with work uses what another
    leaves free."""

    def __init__(self, permits: threading.BoundedSemaphore, num_workers: int) -> None:
        self.permits, self.num_workers = permits, num_workers

    def run(self, task: Task, hosts: list[Any]) -> AggregatedResult:
        def one(host: Any) -> Any:
            with self.permits:
                return task.copy().start(host)

        with ThreadPoolExecutor(self.num_workers) as pool:
            futures = [pool.submit(one, host) for host in hosts]
        result = AggregatedResult(task.name)
        for future in futures:
            done = future.result()
            result[done.host.name] = done
        return result


def judged_ports(device: DeviceIntent, selection: Selection | None) -> tuple[str, ...] | None:
    """The device's ports a selection keeps findings of, those cabled toward its peers (a stage's neighbour:
    its links toward the stage); None for every port (no peers, or none of them cabled to the device)."""
    if selection is None or selection.peers is None:
        return None
    return tuple(sorted(i.name for i in device.interfaces if i.peer_device in selection.peers)) or None


def endpoint_hosts(fabric: FabricIntent, hosts: list[str]) -> set[str]:
    """The hosts whose platform can run the endpoint probes (RDMA ping and bandwidth between servers)."""
    from nr_run.validators.collect import collector_for
    from nr_run.validators.probes import RdmaEndpoint

    return {h for h in hosts if isinstance(collector_for(fabric.devices[h]), RdmaEndpoint)}


def _collect(nr: Nornir, fabric: FabricIntent, targets: list[str], sections: Mapping[str, set[str]],
             prefixes: Mapping[str, list[str] | None], states: dict[str, DeviceState], progress: Any,
             judge: StreamJudge | None = None, release: Collection[str] = (),
             ports: Mapping[str, tuple[str, ...] | None] | None = None) -> None:
    """collect_state on `targets`, each state into `states` (a failed host: an error per section)."""
    if not targets:
        return
    wanted = set(targets)
    runner = nr.filter(filter_func=lambda h: h.name in wanted)
    if progress is not None:
        from nr_run.runbooks.progress import ProgressProcessor

        runner = runner.with_processors([ProgressProcessor(progress, {"collect_state": "collecting"},
                                                           {"collect_state": "collected"})])
    res = runner.run(task=collect_state, fabric=fabric, sections_by_host=sections, prefixes_by_host=prefixes,
                     judge=judge, release=frozenset(release), ports_by_host=ports, on_failed=True)
    for h in targets:
        r = res.get(h)
        if r is not None and not r.failed:
            states[h] = r.result
        else:
            states[h].errors = {s: f"collection failed: {r.exception if r else 'no result'}" for s in sections[h]}


def _probe(nr: Nornir, fabric: FabricIntent, states: dict[str, DeviceState], probes: list[Any],
           sleep: Sleep) -> None:
    """Run probes at the same time (measurement windows overlap: the counter interval passes while others run)."""
    if len(probes) == 1:
        probes[0].run(nr, fabric, states, sleep)
    elif probes:
        with ThreadPoolExecutor(len(probes), thread_name_prefix="nr-run-probe") as pool:
            for future in [pool.submit(p.run, nr, fabric, states, sleep) for p in probes]:
                future.result()


def run_checks(nr: Nornir, fabric: FabricIntent, checks: list[str] | None = None,
               options: Mapping[str, Mapping[str, Any]] | None = None, sleep: Sleep = time.sleep,
               progress: Any = None, selection: Mapping[str, Selection] | None = None,
               keep_states: bool = False, keep_connections: bool = True) -> CheckReport:
    """Collect once per device (only the sections the selected checks need), run their probes, evaluate.

    `checks`: names or tags (None = all). `options`: {check: {key: value}}, validated (InvalidOption).
    Hosts of `nr` not in the fabric are ignored; devices of the fabric missing from `nr` get an error
    finding per applicable check. `selection`: per host, the checks read and judged there and the far ends
    its findings must name; only its hosts are read and judged. `progress`: a runbooks.progress.DeviceProgress
    (collection per device, then each probe as a phase).
    Memory: each device is judged as it is collected and its state reduced to what later checks read
    (runbooks.stream); `keep_states` instead keeps every collected state whole, judges them at the end and
    leaves them in `report.states`. `keep_connections` False: each device's connections are closed as soon as
    the run no longer reads it (a one-off check of a large site); True leaves them open for the caller (a
    deploy, a watch). The report is the same either way.
    """
    started = time.time()
    selected: list[Check] = select(checks, options)
    judge = None if keep_states else StreamJudge(selected, fabric, selection)
    hosts, states, probes = gather_states(nr, fabric, selected, sleep, progress, selection, judge,
                                          release=not keep_connections)
    findings = evaluate_all(selected, fabric, states, selection) if judge is None else judge.judge(states)
    results: dict[str, Any] = {}
    for probe in probes:
        if probe.report_key:
            results[probe.report_key] = probe.summary(states, findings)
    samples: dict[str, CounterSample] = {}
    seen: list[Observation] = []
    for name in sorted(states):
        st = states[name]
        sample = st.counters_second or st.counters_first
        if sample is not None and "counters" in st.sections:
            changes = (judge.link_changes.get(name, {}) if judge is not None else
                       {n: i.link_changes for n, i in st.interfaces.items() if i.link_changes is not None}
                       if "interfaces" in st.sections else {})
            samples[name] = with_changes(sample, changes)
        seen += judge.observations[name] if judge is not None and name in judge.observations else observations(st)
    return CheckReport(
        site=fabric.site,
        checks=[c.name for c in selected],
        findings=findings,
        collection_errors={h: s.errors for h, s in states.items() if s.errors},
        probe_results=results,
        devices=len(hosts),
        port_counters={h: port_counters(s) for h, s in states.items() if s.counters_second or s.counters_first},
        states=states if keep_states else {}, samples=samples, observations=seen, hosts=sorted(states),
        started=started, finished=time.time(), fabric=fabric,
    )


def port_counters(state: DeviceState) -> dict[str, dict[str, int]]:
    """Cumulative per-port PFC pause frames, ECN marks and queue drops of the device's latest sample."""
    sample = state.counters_second or state.counters_first
    out: dict[str, dict[str, int]] = {}
    for port, c in sorted((sample.ports if sample else {}).items()):
        out[port] = {"pfc_rx_frames": sum(c.pfc_rx.values()) if c.pfc_rx else c.pfc_rx_total,
                     "pfc_tx_frames": sum(c.pfc_tx.values()) if c.pfc_tx else c.pfc_tx_total,
                     "ecn_marked_packets": sum(c.ecn_marks.values()),
                     "queue_drops": sum(c.queue_drops.values())}
    return out


# ---------------------------------------------------------------- rendering

_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}


# consequences shown under each cause without -v (the rest are counted; results.json has them all)
FOLD_MAX = 5


def verdict_line(report: CheckReport) -> str:
    """The one line that says what the check found (rich markup)."""
    s = report.summary()
    errors = sum(1 for f in report.findings if not f.passed and f.severity == "error")
    warnings = sum(1 for f in report.findings if not f.passed and f.severity == "warning")
    verdict = "[bold green]PASS[/]" if report.passed else "[bold red]FAIL[/]"
    causes = len(report.causes())
    known = s["declared"]
    failed = s["failed"] - known
    why = f" from {causes} probable cause(s)" if causes else ""
    errors -= sum(1 for f in report.declared() if f.severity == "error")
    warnings -= sum(1 for f in report.declared() if f.severity == "warning")
    tail = f"; {known} known degradation(s) declared in the inventory" if known else ""
    return (f"{verdict} {report.site}: {len(report.checks)} checks on {s['devices']} devices, "
            f"{s['passed']} passed, {failed} failed ({errors} errors, {warnings} warnings){why}{tail}")


def declared_table(report: CheckReport) -> Any:
    """The known degradations: what the inventory declares, reported every run, failing nothing."""
    from rich.table import Table

    rows = report.declared()
    t = Table(title=f"known degradations, declared in the inventory ({len(rows)})", title_style="yellow")
    for col in ("check", "device", "target", "observed", "hint"):
        t.add_column(col, overflow="fold")
    for f in rows:
        t.add_row(f.check, f.device, f.target, f.observed, f.hint)
    return t


def causes_table(report: CheckReport, all_consequences: bool = False) -> Any:
    """Failed findings grouped by probable cause: one row per cause, its consequences folded under it."""
    from rich.markup import escape
    from rich.table import Table

    causes = report.causes()
    t = Table(title=f"causes ({len(causes)})", title_style="bold red", show_lines=True)
    for col in ("#", "layer", "cause / consequences", "hint"):
        t.add_column(col, overflow="fold")
    for n, cause in enumerate(causes, 1):
        shown = cause.consequences if all_consequences else cause.consequences[:FOLD_MAX]
        lines = [f"[{_STYLE[cause.root.severity]}]{escape(cause.summary)}[/]"]
        lines += [f"  {'└' if k == len(shown) - 1 else '├'} {escape(_short(f))}" for k, f in enumerate(shown)]
        hidden = len(cause.consequences) - len(shown)
        if hidden:
            lines.append(f"  … {hidden} more (-v, results.json)")
        t.add_row(str(n), cause.layer, "\n".join(lines), escape(cause.root.hint))
    return t


def _short(f: Finding) -> str:
    return f"{f.check} {f.device} {f.target}: {f.observed} (expected {f.expected})"


def print_report(report: CheckReport, console: Any, show_passed: bool = False, quiet: bool = False,
                 verdict: bool = True) -> None:
    """Rich rendering: failed findings grouped by probable cause (consequences folded; all of them with
    `show_passed`, which -v sets), passed findings with `show_passed`, per-check counts, RDMA results (a grid
    for small matrices, a summary with the failed pairs listed for large ones), then the one-line verdict
    (unless `verdict` is False: the caller ends with its own). `quiet`: the causes and the verdict only."""
    from rich.table import Table

    if report.causes():
        console.print(causes_table(report, all_consequences=show_passed))
    if report.declared():
        console.print(declared_table(report))
    passed = [f for f in report.findings if f.passed] if show_passed else []
    if passed:
        t = Table(title=f"passed ({len(passed)})", title_style=_STYLE["info"], show_lines=False)
        for col in ("check", "device", "target", "expected", "observed"):
            t.add_column(col, overflow="fold")
        for f in passed:
            t.add_row(f.check, f.device, f.target, f.expected, f.observed)
        console.print(t)
    if not quiet:
        _print_counts(report, console)
    if verdict:
        console.print(verdict_line(report))


def _print_counts(report: CheckReport, console: Any) -> None:
    from rich.table import Table

    s = report.summary()
    counts = Table(title="checks")
    counts.add_column("check")
    counts.add_column("passed", justify="right")
    counts.add_column("failed", justify="right")
    for name, c in s["by_check"].items():
        counts.add_row(name, str(c["passed"]), f"[red]{c['failed']}[/]" if c["failed"] else "0")
    console.print(counts)
    for key, result in sorted(report.probe_results.items()):
        if isinstance(result, dict) and result.get("cells"):
            if len(result["sources"]) <= GRID_MAX and len(result["destinations"]) <= GRID_MAX:
                _print_matrix(key, result, console)
            else:
                _print_pair_summary(key, result, console)


# Larger source x destination matrices are summarised: a grid that wide is unreadable
GRID_MAX = 8


def pair_summary(m: dict[str, Any]) -> dict[str, Any]:
    """Counts and rates over a probe's cells, and the failed cells."""
    cells = m["cells"]
    rates = sorted(c["gbps"] for c in cells if c.get("gbps") is not None)
    failed = [c for c in cells if not c["ping"] or c["status"] != "pass"]
    return {"pairs": len(cells), "passed": len(cells) - len(failed), "failed": failed,
            "unreachable": sum(1 for c in cells if not c["ping"]),
            "gbps": (rates[0], rates[len(rates) // 2], rates[-1]) if rates else None}


def _print_pair_summary(key: str, m: dict[str, Any], console: Any) -> None:
    s = pair_summary(m)
    rate = (f"; Gb/s min {s['gbps'][0]:.0f} / median {s['gbps'][1]:.0f} / max {s['gbps'][2]:.0f}"
            if s["gbps"] else "")
    style = "green" if not s["failed"] else "red"
    console.print(f"[{style}]{key.upper()} ({m.get('pattern', '')}): {s['pairs']} pairs, {s['passed']} passed, "
                  f"{len(s['failed'])} failed ({s['unreachable']} unreachable){rate}[/]")
    for c in s["failed"][:50]:
        what = "unreachable" if not c["ping"] else (f"{c['gbps']:.0f} Gb/s" if c.get("gbps") is not None else "no rate")
        console.print(f"  [red]x[/] {c['src']} -> {c['dst']}: {what} {c.get('detail') or ''}".rstrip())
    if len(s["failed"]) > 50:
        console.print(f"  ... and {len(s['failed']) - 50} more (results.json)")


def _print_matrix(key: str, m: dict[str, Any], console: Any) -> None:
    """A probe's source x destination cells: unreachable, or the measured rate colored by status."""
    from rich.table import Table

    grid = {(c["src"], c["dst"]): c for c in m["cells"]}
    t = Table(title=f"{key.upper()} ({m.get('pattern', '')}): ping / Gb/s")
    t.add_column("src \\ dst")
    for d in m["destinations"]:
        t.add_column(d, justify="center")
    for src in m["sources"]:
        row = []
        for d in m["destinations"]:
            c = grid.get((src, d))
            if c is None:
                row.append("")
            elif not c["ping"]:
                row.append("[red]unreach[/]")
            else:
                gb = "-" if c["gbps"] is None else f"{c['gbps']:.0f}"
                row.append(f"[{'green' if c['status'] == 'pass' else 'red'}]{gb}[/]")
        t.add_row(src, *row)
    console.print(t)
