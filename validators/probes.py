"""Probes: measurements a check needs beyond the collected state sections.

A check returns probe declarations from `Check.probes()`; the check runbook runs each distinct probe
once (probes are frozen dataclasses, so equal declarations from several checks are one run), after the
sections are collected and before the checks evaluate. A probe writes into the DeviceStates and marks
what it filled in `state.sections`, so a check only `requires` the section. A probe with a `report_key`
adds its summary to the check report under that key.

Built-in probes:
  CounterResample(interval_s)       a second counter sample `interval_s` after the first (rates, deltas)
  RdmaPairs(pattern, ...)           jumbo DF ping, then an RDMA write bandwidth test, per planned NIC pair
                                    (pings of a host at once; bandwidth pairs that share no NIC at once)

Probes run at the same time as each other (the counter interval passes while the RDMA tests run); they
touch disjoint hosts (switches vs servers) and disjoint parts of the states. An `on_endpoints` probe starts
once the endpoints are collected, while the switches still are.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
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
    # True: it measures between endpoint hosts (RdmaEndpoint platforms) only, and needs nothing the other devices'
    # collection reads, so it runs while they are collected (runbooks.check.gather_states' lanes)
    on_endpoints: ClassVar[bool]

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
    """Second sample of the "counters" section, at least `interval_s` after each device's first one. The
    window starts with the first samples, taken during collection: on a large site most of it has passed by
    the time collection ends, and only the rest is waited for."""

    interval_s: float
    report_key: ClassVar[str | None] = None
    on_endpoints: ClassVar[bool] = False

    def run(self, nr: Nornir, fabric: FabricIntent, states: dict[str, DeviceState], sleep: Sleep) -> None:
        hosts = [h for h in sorted(states) if "counters" in states[h].sections and h in nr.inventory.hosts]
        if not hosts:
            return
        firsts = [s.counters_first.taken_at for h in hosts if (s := states[h]).counters_first is not None]
        rest = (max(firsts) + self.interval_s - time.monotonic()) if firsts else self.interval_s
        if rest > 0:
            sleep(min(rest, self.interval_s))
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

    def start_command(self, task: Any, command: str) -> Any: ...

    def wait_ready(self, handle: Any, timeout: float) -> bool: ...

    def finish_command(self, task: Any, handle: Any, timeout: float) -> str: ...


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


def rdma_ping(task: Task, fabric: FabricIntent, pairs: Mapping[str, list[Pair]], with_devices: bool = False) -> Result:
    """Jumbo DF ping at the RoCE DSCP from this server's NICs to their planned destinations (`pairs`: by source
    device). With `with_devices`, the host's RDMA device list comes in the same batch (Result attribute
    `devices`)."""
    intent = fabric.devices[task.host.name]
    ep = _endpoint(fabric, intent.name)
    run = runner_for(task, intent)
    mine = pairs.get(intent.name, [])
    dscp = roce_dscp(fabric, intent.name)
    cmds = [ep.ping_command(p.src_ip, p.dst_ip, ping_size(fabric, p), dscp) for p in mine]
    extra = [ep.rdma_devices_command()] if with_devices else []
    try:
        outputs: dict[str, Any] | None = run(list(dict.fromkeys(cmds + extra)))   # all of this host's at once
        batch_error = ""
    except Exception as exc:
        outputs, batch_error = None, f"{type(exc).__name__}: {exc}"
    probes = []
    for p, cmd in zip(mine, cmds, strict=True):
        probe = RdmaProbe(p.src_device, p.src_nic, p.dst_device, p.dst_nic, p.dst_ip)
        if outputs is None:
            probe.ping_ok, probe.ping_detail = False, batch_error
        else:
            try:
                probe.ping_ok, probe.ping_loss_pct, probe.ping_detail = ep.parse_ping(outputs[cmd])
            except Exception as exc:
                probe.ping_ok, probe.ping_detail = False, f"{type(exc).__name__}: {exc}"
        probes.append(probe)
    devices = outputs.get(extra[0]) if outputs is not None and extra else None
    return Result(host=task.host, result=probes, devices=devices)


def run_command(task: Task, fabric: FabricIntent, command: str) -> Result:
    """One command on a host (perftest client, rdma link)."""
    run = runner_for(task, fabric.devices[task.host.name])
    return Result(host=task.host, result=run([command])[command])


def start_servers(task: Task, fabric: FabricIntent, commands: Mapping[str, list[str]], ready_s: float) -> Result:
    """Start this host's bandwidth servers of a round, each on its own channel, and wait (at most `ready_s`)
    until each says it listens; command -> handle or the error that kept it from starting."""
    ep = _endpoint(fabric, task.host.name)
    handles: dict[str, Any] = {}
    for cmd in commands.get(task.host.name, []):
        try:
            handles[cmd] = ep.start_command(task, cmd)
        except Exception as exc:
            handles[cmd] = exc
    deadline = time.monotonic() + ready_s
    for handle in handles.values():
        if not isinstance(handle, Exception):
            ep.wait_ready(handle, max(0.0, deadline - time.monotonic()))
    return Result(host=task.host, result=handles)


def finish_servers(task: Task, fabric: FabricIntent, handles: Mapping[str, Mapping[str, Any]],
                   timeout: float) -> Result:
    """Collect what this host's servers printed once their clients are done."""
    ep = _endpoint(fabric, task.host.name)
    out: dict[str, str] = {}
    for cmd, handle in handles.get(task.host.name, {}).items():
        if isinstance(handle, Exception):
            continue
        try:
            out[cmd] = ep.finish_command(task, handle, timeout)
        except Exception as exc:
            out[cmd] = f"{type(exc).__name__}: {exc}"
    return Result(host=task.host, result=out)


def run_clients(task: Task, fabric: FabricIntent, commands: Mapping[str, list[str]]) -> Result:
    """This host's bandwidth clients of a round, all at once; command -> output."""
    cmds = commands.get(task.host.name, [])
    return Result(host=task.host, result=runner_for(task, fabric.devices[task.host.name])(cmds) if cmds else {})


def bandwidth_rounds(pairs: list[Pair]) -> list[list[Pair]]:
    """Pairs grouped into rounds in which no NIC takes part twice (as sender or receiver), so every pair of a
    round runs at the same time without sharing a link end; first fit, in plan order."""
    rounds: list[tuple[set[tuple[str, str]], list[Pair]]] = []
    for p in pairs:
        ends = {(p.src_device, p.src_nic), (p.dst_device, p.dst_nic)}
        for used, members in rounds:
            if not used & ends:
                used |= ends
                members.append(p)
                break
        else:
            rounds.append((set(ends), [p]))
    return [members for _, members in rounds]


@dataclass(frozen=True)
class RdmaPairs:
    """Per planned NIC pair: jumbo DF ping at the RoCE DSCP, then (if `bandwidth`) an RDMA write test of
    `seconds` on the pairs planned for bandwidth, in rounds of pairs that share no NIC, each server given up
    to `server_wait_s` to listen."""

    pattern: str = "auto"
    max_pairs: int = 64
    bandwidth: bool = True
    seconds: int = 2
    server_wait_s: float = 0.5
    base_port: int = 18515
    report_key: ClassVar[str | None] = "rdma"
    on_endpoints: ClassVar[bool] = True

    def hosts(self, fabric: FabricIntent) -> set[str]:
        """The servers the probe runs commands on (its pairs' ends): a run keeps their connections for it."""
        return {d for p in plan_pairs(fabric, self.pattern, self.max_pairs) for d in (p.src_device, p.dst_device)}

    def run(self, nr: Nornir, fabric: FabricIntent, states: dict[str, DeviceState], sleep: Sleep) -> None:
        by_src: dict[str, list[Pair]] = {}
        for p in plan_pairs(fabric, self.pattern, self.max_pairs):
            by_src.setdefault(p.src_device, []).append(p)
        srcs = sorted(h for h in by_src if h in states)
        res = _hosts(nr, srcs).run(task=rdma_ping, fabric=fabric, pairs=by_src, with_devices=self.bandwidth,
                                   on_failed=True)
        device_lists: dict[str, str] = {}
        for h in srcs:
            r = res.get(h)
            if r is not None and not r.failed:
                states[h].rdma = r.result
                states[h].sections.add("rdma")
                devices = getattr(r[0], "devices", None)
                if devices is not None:
                    device_lists[h] = devices
            else:
                states[h].errors["rdma"] = f"probe failed: {r.exception if r else 'no result'}"
        for s in fabric.servers():          # servers with nothing to send still "collected" rdma
            if s.name in states and s.name not in srcs:
                states[s.name].sections.add("rdma")
        if self.bandwidth:
            self._bandwidth(nr, fabric, states, sleep, device_lists)

    def _bandwidth(self, nr: Nornir, fabric: FabricIntent, states: dict[str, DeviceState], sleep: Sleep,
                   device_lists: Mapping[str, str]) -> None:
        """Rounds of pairs that share no NIC: the round's servers start (each waited for until it listens, at
        most server_wait_s), then every client of the round at once, then the servers' output is read."""
        servers = sorted(s.name for s in fabric.servers() if s.name in states)
        devmap: dict[str, dict[str, str]] = {}
        eps: dict[str, RdmaEndpoint] = {}
        for n in servers:
            col = collector_for(fabric.devices[n])
            if isinstance(col, RdmaEndpoint):
                eps[n] = col
        for n, text in device_lists.items():          # read with the pings
            if n in eps:
                devmap[n] = eps[n].rdma_device_map(text)
        cmds = {n: ep.rdma_devices_command() for n, ep in eps.items() if n not in device_lists}
        if cmds:
            res = _hosts(nr, sorted(cmds)).run(task=run_clients, fabric=fabric, on_failed=True,
                                               commands={n: [c] for n, c in cmds.items()})
            for n, c in cmds.items():
                r = res.get(n)
                text = r.result.get(c, "") if r is not None and not r.failed else ""
                devmap[n] = eps[n].rdma_device_map(text)
        probes = {(p.src_device, p.src_nic, p.dst_device, p.dst_nic): p
                  for name in sorted(states) for p in states[name].rdma if p.ping_ok}
        ping_only = {(p.src_device, p.src_nic, p.dst_device, p.dst_nic)
                     for p in plan_pairs(fabric, self.pattern, self.max_pairs) if not p.bandwidth}
        pairs = [Pair(src_device=k[0], src_nic=k[1], src_ip="", dst_device=k[2], dst_nic=k[3], dst_ip=v.dst_ip)
                 for k, v in probes.items() if k not in ping_only]
        port = self.base_port
        for members in bandwidth_rounds(pairs):
            server_cmds: dict[str, list[str]] = {}
            client_cmds: dict[str, list[str]] = {}
            plan: list[tuple[RdmaProbe, str, str, Any]] = []
            for p in members:
                probe = probes[(p.src_device, p.src_nic, p.dst_device, p.dst_nic)]
                try:
                    src_ep, dst_ep = _endpoint(fabric, p.src_device), _endpoint(fabric, p.dst_device)
                except TypeError as exc:
                    probe.bw_gbps, probe.bw_detail = None, str(exc)
                    continue
                dscp = roce_dscp(fabric, p.src_device)
                server_dev = devmap.get(p.dst_device, {}).get(p.dst_nic, p.dst_nic)
                client_dev = devmap.get(p.src_device, {}).get(p.src_nic, p.src_nic)
                srv = dst_ep.bw_server_command(server_dev, port, dscp, self.seconds)
                cli = src_ep.bw_client_command(client_dev, port, dscp, self.seconds, p.dst_ip)
                server_cmds.setdefault(p.dst_device, []).append(srv)
                client_cmds.setdefault(p.src_device, []).append(cli)
                plan.append((probe, srv, cli, src_ep))
                port += 1
            started = _hosts(nr, sorted(server_cmds)).run(task=start_servers, fabric=fabric, commands=server_cmds,
                                                          ready_s=self.server_wait_s, on_failed=True)
            handles: dict[str, dict[str, Any]] = {}
            for host in server_cmds:
                r = started.get(host)
                handles[host] = r.result if r is not None and not r.failed else {
                    c: RuntimeError(str(r.exception if r else "not run")) for c in server_cmds[host]}
            clients = _hosts(nr, sorted(client_cmds)).run(task=run_clients, fabric=fabric, commands=client_cmds,
                                                          on_failed=True)
            _hosts(nr, sorted(server_cmds)).run(task=finish_servers, fabric=fabric, handles=handles,
                                                timeout=float(self.seconds) + 30, on_failed=True)
            for probe, srv, cli, src_ep in plan:
                handle = handles.get(probe.dst_device, {}).get(srv)
                if isinstance(handle, Exception):
                    probe.bw_gbps = None
                    probe.bw_detail = f"bandwidth server not started on {probe.dst_device}: {handle}"
                    continue
                r = clients.get(probe.src_device)
                text = (r.result.get(cli, "") if r is not None and not r.failed
                        else str(r.exception if r is not None else "client not run"))
                probe.bw_gbps, probe.bw_detail = src_ep.parse_bw(text)

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
