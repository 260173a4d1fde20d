"""Probes: measurements a check needs beyond the collected state sections.

A check returns probe declarations from `Check.probes()`; the check runbook runs each distinct probe
once (probes are frozen dataclasses, so equal declarations from several checks are one run), after the
sections are collected and before the checks evaluate. A probe writes into the DeviceStates and marks
what it filled in `state.sections`, so a check only `requires` the section. A probe with a `report_key`
adds its summary to the check report under that key.

Built-in probes:
  CounterResample(interval_s)       a second counter sample `interval_s` after the first (rates, deltas)
  RdmaPairs(pattern, ...)           jumbo DF ping, then an RDMA write bandwidth test, per planned NIC pair
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

from nornir.core import Nornir
from nornir.core.task import Result, Task

from nr_run.intent.models import FabricIntent
from nr_run.platforms.state import DeviceState, RdmaProbe
from nr_run.validators.base import Finding
from nr_run.validators.collect import collect_sections, collector_for, runner_for
from nr_run.validators.rdma import Pair, ping_size, plan_pairs

Sleep = Callable[[float], None]


class Probe(Protocol):
    """A measurement run once per check run over the Nornir hosts of the run."""

    report_key: ClassVar[str | None]          # key of the probe's summary in the check report (None: no summary)

    def run(self, nr: Nornir, fabric: FabricIntent, states: dict[str, DeviceState], sleep: Sleep) -> None:
        """Measure and write the results into `states` (never raises for one device's failure)."""

    def summary(self, states: dict[str, DeviceState], findings: list[Finding]) -> dict[str, Any] | None:
        """The probe's part of the report, once the checks evaluated."""


def _hosts(nr: Nornir, names: list[str]) -> Nornir:
    wanted = set(names)
    return nr.filter(filter_func=lambda h: h.name in wanted)


# ---------------------------------------------------------------- counters

def sample_counters(task: Task, fabric: FabricIntent, states: dict[str, DeviceState]) -> Result:
    """Another counter sample into an existing state (the first one came with the section collection)."""
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


@dataclass(frozen=True)
class CounterResample:
    """Second sample of the "counters" section, `interval_s` after the first."""

    interval_s: float
    report_key: ClassVar[str | None] = None

    def run(self, nr: Nornir, fabric: FabricIntent, states: dict[str, DeviceState], sleep: Sleep) -> None:
        hosts = [h for h in sorted(states) if "counters" in states[h].sections and h in nr.inventory.hosts]
        if not hosts:
            return
        sleep(self.interval_s)
        _hosts(nr, hosts).run(task=sample_counters, fabric=fabric, states=states, on_failed=True)

    def summary(self, states: dict[str, DeviceState], findings: list[Finding]) -> dict[str, Any] | None:
        return None


# ---------------------------------------------------------------- RDMA

@runtime_checkable
class RdmaEndpoint(Protocol):
    """What a host platform's collector offers the RDMA probe: ping and perftest commands and parsers."""

    def ping_command(self, src_ip: str, dst_ip: str, mtu: int, dscp: int) -> str: ...

    def parse_ping(self, text: str) -> tuple[bool, float | None, str]: ...

    def rdma_devices_command(self) -> str: ...

    def rdma_device_map(self, text: str) -> dict[str, str]: ...

    def bw_server_command(self, dev: str, port: int, dscp: int, seconds: int) -> str: ...

    def bw_client_command(self, dev: str, port: int, dscp: int, seconds: int, dst_ip: str) -> str: ...

    def parse_bw(self, text: str) -> tuple[float | None, str]: ...

    def start_command(self, task: Any, command: str) -> None: ...

    def finish_command(self, task: Any, timeout: float) -> str: ...


def _endpoint(fabric: FabricIntent, device: str) -> RdmaEndpoint:
    col = collector_for(fabric.devices[device])
    if not isinstance(col, RdmaEndpoint):
        raise TypeError(f"platform {fabric.devices[device].platform!r} of {device} cannot run RDMA probes")
    return col


def roce_dscp(fabric: FabricIntent, device: str) -> int:
    """The DSCP of RoCE data: the one mapped to the (first) lossless TC."""
    roce = fabric.devices[device].roce
    tc = roce.lossless_priorities[0]
    return min(d for d, t in roce.dscp_overrides.items() if t == tc)


def rdma_ping(task: Task, fabric: FabricIntent, pairs: list[Pair]) -> Result:
    """Jumbo DF ping at the RoCE DSCP from this server's NICs to their planned destinations."""
    intent = fabric.devices[task.host.name]
    ep = _endpoint(fabric, intent.name)
    run = runner_for(task, intent)
    probes = []
    for p in pairs:
        if p.src_device != intent.name:
            continue
        probe = RdmaProbe(p.src_device, p.src_nic, p.dst_device, p.dst_nic, p.dst_ip)
        cmd = ep.ping_command(p.src_ip, p.dst_ip, ping_size(fabric, p), roce_dscp(fabric, intent.name))
        try:
            probe.ping_ok, probe.ping_loss_pct, probe.ping_detail = ep.parse_ping(run([cmd])[cmd])
        except Exception as exc:
            probe.ping_ok, probe.ping_detail = False, f"{type(exc).__name__}: {exc}"
        probes.append(probe)
    return Result(host=task.host, result=probes)


def run_command(task: Task, fabric: FabricIntent, command: str) -> Result:
    """One command on a host (perftest client, rdma link)."""
    run = runner_for(task, fabric.devices[task.host.name])
    return Result(host=task.host, result=run([command])[command])


def start_server(task: Task, fabric: FabricIntent, command: str) -> Result:
    """Start the bandwidth server on this host's session (it blocks that session until its client ran)."""
    _endpoint(fabric, task.host.name).start_command(task, command)
    return Result(host=task.host, result=command)


def finish_server(task: Task, fabric: FabricIntent, timeout: float = 30.0) -> Result:
    return Result(host=task.host, result=_endpoint(fabric, task.host.name).finish_command(task, timeout))


@dataclass(frozen=True)
class RdmaPairs:
    """Per planned NIC pair: jumbo DF ping at the RoCE DSCP, then (if `bandwidth`) an RDMA write test of
    `seconds`, one pair at a time, the server given `server_wait_s` to listen."""

    pattern: str = "auto"
    max_pairs: int = 64
    bandwidth: bool = True
    seconds: int = 2
    server_wait_s: float = 0.5
    base_port: int = 18515
    report_key: ClassVar[str | None] = "rdma"

    def run(self, nr: Nornir, fabric: FabricIntent, states: dict[str, DeviceState], sleep: Sleep) -> None:
        pairs = plan_pairs(fabric, self.pattern, self.max_pairs)
        srcs = sorted({p.src_device for p in pairs if p.src_device in states})
        res = _hosts(nr, srcs).run(task=rdma_ping, fabric=fabric, pairs=pairs, on_failed=True)
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
        if self.bandwidth:
            self._bandwidth(nr, fabric, states, sleep)

    def _bandwidth(self, nr: Nornir, fabric: FabricIntent, states: dict[str, DeviceState], sleep: Sleep) -> None:
        """Sequential pairs: server on the destination, then the client on the source."""
        devmap: dict[str, dict[str, str]] = {}
        for server in sorted(s.name for s in fabric.servers() if s.name in states):
            ep = collector_for(fabric.devices[server])
            if not isinstance(ep, RdmaEndpoint):
                continue
            res = _hosts(nr, [server]).run(task=run_command, fabric=fabric, command=ep.rdma_devices_command(),
                                           on_failed=True)
            r = res.get(server)
            devmap[server] = ep.rdma_device_map(r.result if r is not None and not r.failed else "")
        port = self.base_port
        ping_only = {(p.src_device, p.src_nic, p.dst_device, p.dst_nic)
                     for p in plan_pairs(fabric, self.pattern, self.max_pairs) if not p.bandwidth}
        for name in sorted(states):
            for probe in states[name].rdma:
                if not probe.ping_ok or (probe.src_device, probe.src_nic, probe.dst_device, probe.dst_nic) in ping_only:
                    continue
                dscp = roce_dscp(fabric, probe.src_device)
                try:
                    src_ep, dst_ep = _endpoint(fabric, probe.src_device), _endpoint(fabric, probe.dst_device)
                except TypeError as exc:
                    probe.bw_gbps, probe.bw_detail = None, str(exc)
                    continue
                server_dev = devmap.get(probe.dst_device, {}).get(probe.dst_nic, probe.dst_nic)
                client_dev = devmap.get(probe.src_device, {}).get(probe.src_nic, probe.src_nic)
                srv = _hosts(nr, [probe.dst_device])
                started = srv.run(task=start_server, fabric=fabric, on_failed=True,
                                  command=dst_ep.bw_server_command(server_dev, port, dscp, self.seconds))
                s = started.get(probe.dst_device)
                if s is None or s.failed:
                    probe.bw_gbps = None
                    probe.bw_detail = (f"bandwidth server not started on {probe.dst_device}: "
                                       f"{s.exception if s else 'not run'}")
                    continue
                sleep(self.server_wait_s)
                res = _hosts(nr, [probe.src_device]).run(
                    task=run_command, fabric=fabric, on_failed=True,
                    command=src_ep.bw_client_command(client_dev, port, dscp, self.seconds, probe.dst_ip))
                srv.run(task=finish_server, fabric=fabric, timeout=float(self.seconds) + 30, on_failed=True)
                r = res[probe.src_device]
                text = r.result if not r.failed and isinstance(r.result, str) else str(r.exception or r.result)
                probe.bw_gbps, probe.bw_detail = src_ep.parse_bw(text)
                port += 1

    def summary(self, states: dict[str, DeviceState], findings: list[Finding]) -> dict[str, Any] | None:
        return rdma_matrix(self.pattern, states, findings)


# Report keys of the built-in probes: the check report always carries them (null when the probe did not run),
# so its JSON schema does not depend on the selected checks.
REPORT_KEYS: list[str] = [k for k in (CounterResample.report_key, RdmaPairs.report_key) if k]


def rdma_matrix(pattern: str, states: dict[str, DeviceState], findings: list[Finding]) -> dict[str, Any]:
    """Source x destination results of the RDMA probes; a cell fails when a failed finding of the check
    names that NIC pair (device/port -> peer_device/peer_port)."""
    failed = {(f.device, f.port, f.peer_device, f.peer_port) for f in findings
              if not f.passed and f.port and f.peer_port}
    cells = []
    for name in sorted(states):
        for p in sorted(states[name].rdma, key=lambda p: (p.src_nic, p.dst_device, p.dst_nic)):
            src, dst = f"{p.src_device}:{p.src_nic}", f"{p.dst_device}:{p.dst_nic}"
            bad = (p.src_device, p.src_nic, p.dst_device, p.dst_nic) in failed
            cells.append({"src": src, "dst": dst, "ping": p.ping_ok, "loss_pct": p.ping_loss_pct,
                          "gbps": p.bw_gbps, "status": "fail" if bad else "pass",
                          "detail": p.bw_detail if p.ping_ok else p.ping_detail})
    return {"pattern": pattern, "sources": sorted({c["src"] for c in cells}),
            "destinations": sorted({c["dst"] for c in cells}), "cells": cells}
