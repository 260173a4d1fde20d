"""A check run split into shards that Dask distributed workers execute: the same Nornir tasks, per shard.

    with open_client("local") as client:                     # an embedded LocalCluster: one process per core
        report = run_checks_distributed(client, ShardJob(site="dc1", inventory_dir="inventory"), fabric)
    with open_client("tcp://scheduler:8786") as client: ...   # workers on other hosts (`dask worker ...`)

Why Dask distributed: it is an existing engine that schedules Python functions on worker processes of one or many
hosts, keeps a task's result on the worker that computed it (so a shard's collected state never travels: only its
findings do), and its LocalCluster gives a single host every core past the GIL with the same code.

Each shard (`plan_shards`: whole scalable units, a unit's RTSWs with its servers, CTSWs apart, at most
`per_shard` devices) runs in two tasks on one worker:
  1. collect: a Nornir of the shard's hosts (built on the worker from the inventory, with the credentials it is
     given) collects what the selected checks need and runs their probes (runbooks.check.gather_states); the
     states stay on the worker, and a small peer view of each device (its ports' names and aliases, PFC
     priorities, NIC state: what checks read of a neighbour) goes back;
  2. judge: the shard's devices are judged on their own states and every shard's peer views (the fabric-wide
     part: both ends of a link are compared whichever shards they are in); only findings come back.
The coordinator holds findings and peer views, never every device's raw state.

Credentials: taken from the coordinator's environment (the NR_* variables, or the lab defaults with --lab) and
passed in the task arguments, in memory, to the workers; they are never written to a file, and no task key or
log line carries them. Between hosts use a `tls://` scheduler address (Dask's TLS) so they are encrypted.
Limits: RDMA pairs are planned per shard (servers of one unit test each other), and a distributed run records no
per-device counter history (the coordinator does not hold the counter samples).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from nr_run.intent.models import FabricIntent
from nr_run.platforms.state import DeviceState
from nr_run.runbooks.check import CheckReport, gather_states, port_counters
from nr_run.validators.base import Finding, Selection, evaluate_all, select

# devices per shard by default: a unit of a large site (8-16 RTSWs with their servers) and a few more
PER_SHARD = 256
# environment variables a worker may need: credentials (NR_*) only
_CREDENTIAL_PREFIX = "NR_"


@dataclass(frozen=True)
class ShardJob:
    """What every shard of one run shares (picklable; no credentials: those travel apart, see run_checks_distributed)."""

    site: str
    inventory_dir: str
    checks: tuple[str, ...] | None = None
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    lab: bool = False
    insecure: bool = False
    address_map: Mapping[str, Mapping[str, Any]] | None = None
    workers: int = 20                      # Nornir threads per shard
    hosts: tuple[str, ...] = ()


@dataclass
class ShardResult:
    hosts: list[str]
    findings: list[Finding]
    collection_errors: dict[str, dict[str, str]]
    port_counters: dict[str, dict[str, dict[str, int]]]
    probe_results: dict[str, Any]
    worker: str = ""
    # the history's part of this shard (latest counter sample per device, with its wall-clock time computed on
    # the worker whose monotonic clock stamped it, and the state observations)
    samples: dict[str, Any] = field(default_factory=dict)
    sample_times: dict[str, float] = field(default_factory=dict)
    observations: list[Any] = field(default_factory=list)


def plan_shards(fabric: FabricIntent, per_shard: int = PER_SHARD, hosts: list[str] | None = None) -> list[list[str]]:
    """Devices in shards of at most `per_shard`: a scalable unit's RTSWs and servers stay together (their links
    and RDMA pairs stay in one shard), CTSWs form shards of their own."""
    names = sorted(hosts if hosts is not None else fabric.devices)
    groups: dict[tuple[int, int], list[str]] = {}
    for name in names:
        dev = fabric.devices[name]
        key = (1, -1) if dev.su is None or dev.role == "ctsw" else (0, dev.su)
        groups.setdefault(key, []).append(name)
    shards: list[list[str]] = []
    current: list[str] = []
    for key in sorted(groups):
        members = groups[key]
        if current and (len(current) + len(members) > per_shard or key[0] == 1):
            shards.append(current)
            current = []
        for i in range(0, len(members), per_shard):
            chunk = members[i:i + per_shard]
            if len(chunk) == per_shard:
                shards.append(chunk)
            else:
                current += chunk
    if current:
        shards.append(current)
    return shards


def credentials_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The credential variables of the coordinator's environment, the only ones a worker is given."""
    source = os.environ if env is None else env
    return {k: v for k, v in source.items() if k.startswith(_CREDENTIAL_PREFIX)}


# ---------------------------------------------------------------- worker side

_FABRICS: dict[tuple[str, str], FabricIntent] = {}


def _fabric(job: ShardJob) -> FabricIntent:
    """The site compiled once per worker process (the inventory is read where the worker runs)."""
    key = (job.site, str(Path(job.inventory_dir).resolve()))
    if key not in _FABRICS:
        from nr_run.platforms.site import load_site
        from nr_run.runbooks.inventory import site_dir

        fabric, findings = load_site(site_dir(job.site, job.inventory_dir))
        if fabric is None:
            raise ValueError(f"site {job.site} does not compile on this worker: {findings[:1]}")
        _FABRICS.clear()
        _FABRICS[key] = fabric
    return _FABRICS[key]


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except ValueError:              # run in the coordinator itself (tests, a single process)
        return ""


@dataclass
class _Collected:
    """One shard's collection, kept on the worker that made it."""

    hosts: list[str]
    states: dict[str, DeviceState]
    probes: list[Any]
    worker: str


def collect_shard(job: ShardJob, env: Mapping[str, str], selection: Mapping[str, Selection] | None = None,
                  ) -> _Collected:
    """Task 1: collect the shard's hosts and run the probes there."""
    from nr_run.runbooks.inventory import init_nornir

    fabric = _fabric(job)
    nr = init_nornir(job.site, job.inventory_dir, workers=job.workers, lab=job.lab, insecure=job.insecure,
                     env=env, address_map=job.address_map)
    wanted = set(job.hosts)
    try:
        selected = select(list(job.checks) if job.checks else None, job.options)
        hosts, states, probes = gather_states(nr.filter(filter_func=lambda h: h.name in wanted), fabric, selected,
                                              time.sleep, None, _shard_selection(selected, job.hosts, selection))
    finally:
        nr.close_connections()
    return _Collected(hosts, states, probes, _worker_name())


def peer_views(collected: _Collected) -> dict[str, DeviceState]:
    """What other devices' checks read of these devices: port names and aliases, PFC priorities, NIC state."""
    out = {}
    for name, st in collected.states.items():
        view = DeviceState(st.device, st.platform, sections=st.sections & {"interfaces", "pfc", "nics"},
                           interfaces=st.interfaces, pfc_priorities=st.pfc_priorities, nics=st.nics)
        out[name] = view
    return out


def judge_shard(job: ShardJob, collected: _Collected, views: Mapping[str, DeviceState],
                selection: Mapping[str, Selection] | None = None) -> ShardResult:
    """Task 2: judge the shard's devices on their own states and every shard's peer views."""
    from nr_run.history.model import from_states

    fabric = _fabric(job)
    selected = select(list(job.checks) if job.checks else None, job.options)
    states = {**views, **collected.states}
    chosen = _shard_selection(selected, collected.hosts, selection)
    findings = evaluate_all(selected, fabric, states, chosen)
    results = {p.report_key: p.summary(collected.states, findings) for p in collected.probes if p.report_key}
    history = from_states("", "", 0.0, 0.0, collected.states, [], [])
    return ShardResult(
        hosts=collected.hosts, findings=findings,
        collection_errors={h: s.errors for h, s in collected.states.items() if s.errors},
        port_counters={h: port_counters(s) for h, s in collected.states.items()
                       if s.counters_second or s.counters_first},
        probe_results=results, worker=collected.worker, samples=dict(history.samples),
        sample_times=dict(history.sample_times), observations=list(history.observations))


def _shard_selection(selected: list[Any], hosts: list[str] | tuple[str, ...],
                     selection: Mapping[str, Selection] | None) -> dict[str, Selection]:
    """What is judged on each host of a shard: the run's selection, else every selected check."""
    every = Selection(frozenset(c.name for c in selected))
    return {h: selection[h] if selection is not None else every for h in hosts
            if selection is None or h in selection}


# ---------------------------------------------------------------- coordinator side

@contextmanager
def open_client(cluster: str = "local", workers: int | None = None) -> Iterator[Any]:
    """A Dask client: `local` starts an embedded LocalCluster (one single-threaded worker process per core,
    listening on 127.0.0.1 only), anything else is a scheduler address (tcp://host:8786, tls://...)."""
    from distributed import Client, LocalCluster

    if cluster == "local":
        with LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                          host="127.0.0.1", dashboard_address=None) as local, Client(local) as client:
            yield client
        return
    with Client(cluster) as client:
        yield client


def _merge_probe(key: str, parts: list[Any]) -> Any:
    """One report entry from the shards' own: matrices (cells) concatenated, other summaries from the first."""
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    if all(isinstance(p, dict) and "cells" in p for p in parts):
        merged = dict(parts[0])
        for list_key in ("cells", "sources", "destinations"):
            merged[list_key] = sorted((x for p in parts for x in p.get(list_key, [])), key=repr)
        return merged
    return parts[0]


def run_checks_distributed(client: Any, job: ShardJob, fabric: FabricIntent,
                           env: Mapping[str, str] | None = None, per_shard: int = PER_SHARD,
                           selection: Mapping[str, Selection] | None = None,
                           ) -> tuple[CheckReport, list[ShardResult]]:
    """run_checks over shards of the site on the client's workers; the report as run_checks gives it (without
    `states`), and each shard's result (hosts, findings, the worker that ran it). `selection` as for run_checks:
    only its hosts are read and judged."""
    started = time.time()
    secrets = credentials_env(env)
    shards = plan_shards(fabric, per_shard, sorted(selection) if selection is not None else None)
    jobs = [replace(job, hosts=tuple(s)) for s in shards]
    # pure=False: keys are random, never derived from the arguments (which carry the credentials)
    collected = [client.submit(collect_shard, j, secrets, _part(selection, j.hosts), pure=False,
                               key=f"nr-run-collect-{i}-{os.urandom(4).hex()}") for i, j in enumerate(jobs)]
    views: dict[str, DeviceState] = {}
    for part in client.gather([client.submit(peer_views, c, pure=False) for c in collected]):
        views.update(part)
    shared = client.scatter(views, broadcast=True)
    judged = [client.submit(judge_shard, j, c, shared, _part(selection, j.hosts), pure=False)
              for j, c in zip(jobs, collected, strict=True)]
    results: list[ShardResult] = client.gather(judged)
    findings: list[Finding] = sorted((f for r in results for f in r.findings), key=_finding_order)
    selected = select(list(job.checks) if job.checks else None, job.options)
    keys = sorted({k for r in results for k in r.probe_results})
    report = CheckReport(
        site=fabric.site, checks=[c.name for c in selected], findings=findings,
        collection_errors={h: e for r in results for h, e in r.collection_errors.items()},
        probe_results={k: _merge_probe(k, [r.probe_results.get(k) for r in results]) for k in keys},
        devices=sum(len(r.hosts) for r in results),
        port_counters={h: c for r in results for h, c in r.port_counters.items()},
        started=started, finished=time.time())
    return report, results


def _part(selection: Mapping[str, Selection] | None, hosts: tuple[str, ...]) -> dict[str, Selection] | None:
    return None if selection is None else {h: selection[h] for h in hosts if h in selection}


def collection_from(report: CheckReport, results: list[ShardResult], kind: str, source: str = "poll") -> Any:
    """The history Collection of a distributed run, from its shards' parts (a nr_run.history.model.Collection)."""
    from nr_run.history.model import Collection

    return Collection(kind=kind, source=source, started=report.started, finished=report.finished,
                      samples={h: s for r in results for h, s in r.samples.items()},
                      sample_times={h: t for r in results for h, t in r.sample_times.items()},
                      observations=[o for r in results for o in r.observations], findings=list(report.findings),
                      checks=list(report.checks), errors=dict(report.collection_errors),
                      devices=sorted(h for r in results for h in r.hosts))


class DistributedChecks:
    """run_checks' signature over a client's workers (the `nr` argument is not used: workers build their own
    Nornir), for code that takes a check runner: a deploy's stage gate, a watch."""

    def __init__(self, client: Any, job: ShardJob, env: Mapping[str, str] | None = None,
                 per_shard: int = PER_SHARD) -> None:
        self.client, self.job, self.env, self.per_shard = client, job, env, per_shard
        self.last: list[ShardResult] = []

    def __call__(self, nr: Any, fabric: FabricIntent, checks: list[str] | None = None,
                 options: Mapping[str, Mapping[str, Any]] | None = None, sleep: Any = None, progress: Any = None,
                 selection: Mapping[str, Selection] | None = None) -> CheckReport:
        job = replace(self.job, checks=tuple(checks) if checks else None, options=dict(options or {}))
        report, self.last = run_checks_distributed(self.client, job, fabric, self.env, self.per_shard, selection)
        return report


class DistributedSource:
    """A watch's collection source (runbooks.watch.CollectionSource) whose collections run on the workers."""

    name = "poll"

    def __init__(self, checks: DistributedChecks, fabric: FabricIntent, kind: str = "watch",
                 names: list[str] | None = None) -> None:
        from nr_run.runbooks.watch import light_checks

        self.checks, self.fabric, self.kind = checks, fabric, kind
        self.names = names if names is not None else light_checks(checks.job.options)

    def collect(self) -> Any:
        report = self.checks(None, self.fabric, self.names, self.checks.job.options)
        return collection_from(report, self.checks.last, self.kind, self.name)

    def close(self) -> None:
        return None


def _finding_order(f: Finding) -> tuple[Any, ...]:
    """evaluate_all's order over a whole site: check, then device (each shard's list is in that order)."""
    return (f.check, f.device)
