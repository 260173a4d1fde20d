"""Post-check runbook: collect state once per device, evaluate the selected checks, report.

Importable Nornir tasks (usable in a user's own script):

    nr.run(task=collect_state, fabric=fabric, sections_by_host={...})   -> Result(result=DeviceState)
    nr.run(task=sample_counters, fabric=fabric, states=states)          -> second counter sample
    nr.run(task=rdma_ping, fabric=fabric, pairs=[...])                  -> Result(result=[RdmaProbe])

and the composition `run_checks(nr, fabric, checks, options) -> CheckReport`.

`options` maps a check name to its tunables (see each check's `defaults`), e.g.
    {"counters": {"interval_s": 2.0, "max_pause_pps": 50}, "rdma": {"pattern": "same_rail", "bw_fraction": 0.9},
     "cabling": {"host_ports_require_lldp": False}}

JSON schema of `CheckReport.to_dict()` ("schema": "nr-run.check/1"); lists are sorted, keys stable:
{
  "schema": "nr-run.check/1",
  "site": "dc1",
  "passed": false,                               # true iff no finding has passed=false
  "checks": ["bgp", "pfc", ...],                 # checks that ran, name order
  "summary": {"findings": 120, "passed": 118, "failed": 2, "error": 1, "warning": 1, "info": 118,
              "devices": 10, "by_check": {"pfc": {"passed": 40, "failed": 1}, ...}},
  "findings": [                                   # failed first, then by severity, check, device, target
    {"check": "pfc", "device": "rtsw1", "target": "Ethernet1", "expected": "pfc priorities 3",
     "observed": "pfc priorities 4", "passed": false, "severity": "error", "hint": "..."}, ...],
  "collection_errors": {"rtsw3": {"bgp": "ConnectionException: ..."}},
  "rdma": null | {"pattern": "ring", "sources": ["gpu1:eth1", ...], "destinations": [...],
                  "cells": [{"src": "gpu1:eth1", "dst": "gpu2:eth1", "ping": true, "loss_pct": 0.0,
                             "gbps": 390.1, "status": "pass" | "fail", "detail": "..."}]}
}
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nornir.core import Nornir
from nornir.core.task import Result, Task

from nr_run.intent.models import FabricIntent
from nr_run.platforms.linux import collect as linux_collect
from nr_run.platforms.state import SECTIONS, DeviceState, RdmaProbe
from nr_run.validators.base import SEVERITY_ORDER, Check, Finding, evaluate_all, required_sections, select
from nr_run.validators.collect import collect_sections, runner_for
from nr_run.validators.rdma import Pair, plan_pairs

SCHEMA = "nr-run.check/1"


# ---------------------------------------------------------------- Nornir tasks

def collect_state(task: Task, fabric: FabricIntent, sections_by_host: dict[str, set[str]]) -> Result:
    """Collect the needed sections of one device into a DeviceState (never raises: errors go in state.errors)."""
    intent = fabric.devices[task.host.name]
    state = DeviceState(intent.name, intent.platform)
    wanted = sorted(sections_by_host.get(intent.name, set()) - {"rdma"}, key=SECTIONS.index)
    try:
        run = runner_for(task, intent)
    except Exception as exc:
        state.errors = {s: f"connection failed: {type(exc).__name__}: {exc}" for s in wanted}
        return Result(host=task.host, result=state)
    collect_sections(run, intent, wanted, state)
    return Result(host=task.host, result=state)


def sample_counters(task: Task, fabric: FabricIntent, states: dict[str, DeviceState]) -> Result:
    """Second counter sample into an existing state (first one came with collect_state)."""
    intent = fabric.devices[task.host.name]
    state = states[intent.name]
    if "counters" not in state.sections:
        return Result(host=task.host, result=state)
    try:
        collect_sections(runner_for(task, intent), intent, ["counters"], state)
    except Exception as exc:
        state.errors["counters"] = f"second sample: {type(exc).__name__}: {exc}"
        state.sections.discard("counters")
    return Result(host=task.host, result=state)


def rdma_ping(task: Task, fabric: FabricIntent, pairs: list[Pair]) -> Result:
    """Jumbo DF ping at the RoCE DSCP from this server's NICs to their planned destinations."""
    intent = fabric.devices[task.host.name]
    nic = {n.name: n for n in intent.nics}
    probes = []
    run = runner_for(task, intent)
    for p in pairs:
        if p.src_device != intent.name:
            continue
        probe = RdmaProbe(p.src_device, p.src_nic, p.dst_device, p.dst_nic, p.dst_ip)
        cmd = linux_collect.ping_command(p.src_ip, p.dst_ip, nic[p.src_nic].mtu, _roce_dscp(fabric, intent.name))
        try:
            probe.ping_ok, probe.ping_loss_pct, probe.ping_detail = linux_collect.parse_ping(run([cmd])[cmd])
        except Exception as exc:
            probe.ping_ok, probe.ping_detail = False, f"{type(exc).__name__}: {exc}"
        probes.append(probe)
    return Result(host=task.host, result=probes)


def run_command(task: Task, fabric: FabricIntent, command: str) -> Result:
    """One command on a server (perftest server/client steps)."""
    run = runner_for(task, fabric.devices[task.host.name])
    return Result(host=task.host, result=run([command])[command])


def _roce_dscp(fabric: FabricIntent, device: str) -> int:
    """The DSCP of RoCE data: the one mapped to the (first) lossless TC."""
    roce = fabric.devices[device].roce
    tc = roce.lossless_priorities[0]
    return min(d for d, t in roce.dscp_overrides.items() if t == tc)


# ---------------------------------------------------------------- report

@dataclass
class CheckReport:
    site: str
    checks: list[str]
    findings: list[Finding]
    collection_errors: dict[str, dict[str, str]] = field(default_factory=dict)
    rdma: dict[str, Any] | None = None
    devices: int = 0

    @property
    def passed(self) -> bool:
        return all(f.passed for f in self.findings)

    def summary(self) -> dict[str, Any]:
        by_check: dict[str, dict[str, int]] = {c: {"passed": 0, "failed": 0} for c in self.checks}
        for f in self.findings:
            by_check.setdefault(f.check, {"passed": 0, "failed": 0})["passed" if f.passed else "failed"] += 1
        failed = [f for f in self.findings if not f.passed]
        return {
            "findings": len(self.findings),
            "passed": len(self.findings) - len(failed),
            "failed": len(failed),
            **{sev: sum(1 for f in self.findings if f.severity == sev) for sev in SEVERITY_ORDER},
            "devices": self.devices,
            "by_check": dict(sorted(by_check.items())),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "site": self.site,
            "passed": self.passed,
            "checks": list(self.checks),
            "summary": self.summary(),
            "findings": [f.to_dict() for f in self.findings],
            "collection_errors": {d: dict(sorted(e.items())) for d, e in sorted(self.collection_errors.items())},
            "rdma": self.rdma,
        }


def rdma_matrix(pattern: str, states: dict[str, DeviceState], findings: list[Finding]) -> dict[str, Any]:
    """Source x destination results of the RDMA probes; a cell fails when its rdma finding failed."""
    failed = {(f.device, f.target.split(" (")[0]) for f in findings if f.check == "rdma" and not f.passed}
    cells = []
    for name in sorted(states):
        for p in sorted(states[name].rdma, key=lambda p: (p.src_nic, p.dst_device, p.dst_nic)):
            src, dst = f"{p.src_device}:{p.src_nic}", f"{p.dst_device}:{p.dst_nic}"
            bad = (p.src_device, f"{p.src_nic} -> {dst}") in failed
            cells.append({"src": src, "dst": dst, "ping": p.ping_ok, "loss_pct": p.ping_loss_pct,
                          "gbps": p.bw_gbps, "status": "fail" if bad else "pass",
                          "detail": p.bw_detail if p.ping_ok else p.ping_detail})
    return {"pattern": pattern, "sources": sorted({c["src"] for c in cells}),
            "destinations": sorted({c["dst"] for c in cells}), "cells": cells}


# ---------------------------------------------------------------- composition

def start_server(task: Task, command: str) -> Result:
    """Start the perftest server on this host's session (it blocks that session until its client ran)."""
    linux_collect.start_command(task, command)
    return Result(host=task.host, result=command)


def finish_server(task: Task, timeout: float = 30.0) -> Result:
    return Result(host=task.host, result=linux_collect.finish_command(task, timeout))


def _probe_bandwidth(nr: Nornir, fabric: FabricIntent, states: dict[str, DeviceState], opts: dict[str, Any],
                     sleep: Callable[[float], None]) -> None:
    """Sequential ib_write_bw pairs: server on the destination, then the client on the source."""
    devmap: dict[str, dict[str, str]] = {}
    for server in sorted(s.name for s in fabric.servers()):
        res = nr.filter(name=server).run(task=run_command, fabric=fabric, command="rdma link show",
                                         on_failed=True)
        r = res.get(server)
        devmap[server] = linux_collect.rdma_device_map(r.result if r is not None and not r.failed else "")
    port = int(opts.get("base_port", 18515))
    seconds = int(opts.get("seconds", 2))
    for name in sorted(states):
        for probe in states[name].rdma:
            if not probe.ping_ok:
                continue
            dscp = _roce_dscp(fabric, probe.src_device)
            server_dev = devmap[probe.dst_device].get(probe.dst_nic, probe.dst_nic)
            client_dev = devmap[probe.src_device].get(probe.src_nic, probe.src_nic)
            srv = nr.filter(name=probe.dst_device)
            started = srv.run(task=start_server, on_failed=True,
                              command=linux_collect.ib_server_command(server_dev, port, dscp, seconds))
            s = started.get(probe.dst_device)
            if s is None or s.failed:
                probe.bw_gbps = None
                probe.bw_detail = f"perftest server not started on {probe.dst_device}: {s.exception if s else 'not run'}"
                continue
            sleep(float(opts.get("server_wait_s", 0.5)))
            res = nr.filter(name=probe.src_device).run(
                task=run_command, fabric=fabric, on_failed=True,
                command=linux_collect.ib_client_command(client_dev, port, dscp, seconds, probe.dst_ip))
            srv.run(task=finish_server, timeout=float(seconds) + 30, on_failed=True)
            r = res[probe.src_device]
            text = r.result if not r.failed and isinstance(r.result, str) else str(r.exception or r.result)
            probe.bw_gbps, probe.bw_detail = linux_collect.parse_ib_write_bw(text)
            port += 1


def run_checks(nr: Nornir, fabric: FabricIntent, checks: list[str] | None = None,
               options: dict[str, dict[str, Any]] | None = None,
               sleep: Callable[[float], None] = time.sleep) -> CheckReport:
    """Collect once per device (only the sections the selected checks need), then evaluate.

    `checks`: names or tags (None = all). Hosts of `nr` not in the fabric are ignored; devices of the
    fabric missing from `nr` get an error finding per applicable check.
    """
    options = options or {}
    selected: list[Check] = select(checks, options)
    hosts = [h for h in sorted(nr.inventory.hosts) if h in fabric.devices]
    sections = {h: required_sections(selected, fabric.devices[h]) for h in hosts}
    targets = [h for h in hosts if sections[h] - {"rdma"}]
    states: dict[str, DeviceState] = {h: DeviceState(h, fabric.devices[h].platform) for h in hosts}
    if targets:
        res = nr.filter(filter_func=lambda h: h.name in targets).run(
            task=collect_state, fabric=fabric, sections_by_host=sections, on_failed=True)
        for h in targets:
            r = res.get(h)
            if r is not None and not r.failed:
                states[h] = r.result
            else:
                states[h].errors = {s: f"collection failed: {r.exception if r else 'no result'}" for s in sections[h]}
    counter_hosts = [h for h in targets if "counters" in states[h].sections]
    if counter_hosts:
        sleep(float(options.get("counters", {}).get("interval_s", 2.0)))
        nr.filter(filter_func=lambda h: h.name in counter_hosts).run(task=sample_counters, fabric=fabric,
                                                                     states=states, on_failed=True)
    rdma_check = next((c for c in selected if c.name == "rdma"), None)
    pattern = None
    if rdma_check is not None:
        pattern = rdma_check.options["pattern"]
        pairs = plan_pairs(fabric, pattern, rdma_check.options["max_pairs"])
        srcs = sorted({p.src_device for p in pairs if p.src_device in states})
        res = nr.filter(filter_func=lambda h: h.name in srcs).run(task=rdma_ping, fabric=fabric, pairs=pairs,
                                                                           on_failed=True)
        for h in srcs:
            r = res.get(h)
            if r is not None and not r.failed:
                states[h].rdma = r.result
                states[h].sections.add("rdma")
            else:
                states[h].errors["rdma"] = f"probe failed: {r.exception if r else 'no result'}"
        for s in fabric.servers():          # servers with nothing to send still "collected" rdma
            if s.name in states and s.name not in srcs:
                states[s.name].sections.add("rdma")
        if rdma_check.options["bandwidth"]:
            _probe_bandwidth(nr, fabric, states, rdma_check.options, sleep)
    findings = evaluate_all(selected, fabric, states)
    return CheckReport(
        site=fabric.site,
        checks=[c.name for c in selected],
        findings=findings,
        collection_errors={h: s.errors for h, s in states.items() if s.errors},
        rdma=rdma_matrix(pattern, states, findings) if pattern else None,
        devices=len(hosts),
    )


# ---------------------------------------------------------------- rendering

_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}


def print_report(report: CheckReport, console: Any, show_passed: bool = False) -> None:
    """Rich rendering: one-line summary, failed findings grouped by severity, per-check counts, RDMA matrix."""
    from rich.table import Table

    s = report.summary()
    verdict = "[bold green]PASS[/]" if report.passed else "[bold red]FAIL[/]"
    console.print(f"{verdict} {report.site}: {len(report.checks)} checks on {s['devices']} devices, "
                  f"{s['passed']} passed, {s['failed']} failed ({sum(1 for f in report.findings if not f.passed and f.severity == 'error')} "
                  f"errors, {sum(1 for f in report.findings if not f.passed and f.severity == 'warning')} warnings)")
    for sev in ("error", "warning", "info"):
        rows = [f for f in report.findings if (not f.passed or show_passed) and f.severity == sev]
        if not rows:
            continue
        t = Table(title=f"{sev} ({len(rows)})", title_style=_STYLE[sev], show_lines=False)
        for col in ("check", "device", "target", "expected", "observed", "hint"):
            t.add_column(col, overflow="fold")
        for f in rows:
            t.add_row(f.check, f.device, f.target, f.expected, f.observed, f.hint)
        console.print(t)
    counts = Table(title="checks")
    counts.add_column("check")
    counts.add_column("passed", justify="right")
    counts.add_column("failed", justify="right")
    for name, c in s["by_check"].items():
        counts.add_row(name, str(c["passed"]), f"[red]{c['failed']}[/]" if c["failed"] else "0")
    console.print(counts)
    if report.rdma and report.rdma["cells"]:
        m = report.rdma
        grid = {(c["src"], c["dst"]): c for c in m["cells"]}
        t = Table(title=f"RDMA ({m['pattern']}): ping / Gb/s")
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
