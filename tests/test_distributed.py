"""A check run in shards on a real Dask scheduler and two workers, each its own process on 127.0.0.1, against the
dc1 twin: the same findings as a local run, shards on both workers, no credential in the workers' output."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from nr_run.runbooks.check import run_checks
from nr_run.runbooks.distributed import ShardJob, plan_shards, run_checks_distributed
from nr_run.runbooks.inventory import init_nornir
from tests.conftest import DC1
from tests.twin_site import CREDS, FABRIC, FAST_CHECKS

distributed = pytest.importorskip("distributed")

BIN = Path(sys.executable).parent
CHECKS = ("bgp", "cabling", "counters", "ecmp", "interfaces", "pfc")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[Path]]]:
    logs = tmp_path_factory.mktemp("dask")
    address = f"tcp://127.0.0.1:{_free_port()}"
    procs: list[subprocess.Popen] = []
    outputs: list[Path] = []

    def start(name: str, *argv: str) -> None:
        out = logs / f"{name}.log"
        outputs.append(out)
        procs.append(subprocess.Popen([str(BIN / "dask"), *argv], stdout=out.open("w"), stderr=subprocess.STDOUT))

    port = address.rsplit(":", 1)[1]
    start("scheduler", "scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard")
    for i in range(2):
        start(f"worker{i}", "worker", address, "--host", "127.0.0.1", "--nworkers", "1", "--nthreads", "1",
              "--no-dashboard", "--name", f"w{i}")
    try:
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
        yield address, outputs
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def _job(twin) -> ShardJob:
    return ShardJob(site="dc1", inventory_dir=str(DC1.parent), checks=CHECKS, options=FAST_CHECKS, lab=True,
                    address_map=twin.addresses, workers=4)


def _local(twin):
    nr = init_nornir("dc1", DC1.parent, workers=8, lab=True, address_map=twin.addresses)
    try:
        return run_checks(nr, FABRIC, list(CHECKS), FAST_CHECKS)
    finally:
        nr.close_connections()


@pytest.mark.long
def test_shards_on_two_workers_find_what_a_local_run_finds(deployed_twin, cluster) -> None:
    address, outputs = cluster
    shards = plan_shards(FABRIC, 4)
    assert len(shards) == 3 and sorted(h for s in shards for h in s) == sorted(FABRIC.devices)
    # a broken link: both of its ends (in different shards) must see it, as in a local run
    deployed_twin.fault("link_down", device="rtsw1", port=next(i.name for i in FABRIC.devices["rtsw1"].interfaces
                                                                if i.peer_device == "ctsw2"))
    local = _local(deployed_twin)
    with distributed.Client(address) as client:
        report, results = run_checks_distributed(client, _job(deployed_twin), FABRIC, per_shard=4)
    assert {r.worker for r in results} == set(client_workers(address))
    assert sorted(f.id for f in report.findings) == sorted(f.id for f in local.findings)
    assert sorted(f.id for f in report.findings if not f.passed) == sorted(f.id for f in local.findings if not f.passed)
    assert {f.device for f in report.findings if not f.passed} >= {"rtsw1", "ctsw2"}
    assert report.devices == len(FABRIC.devices) and not report.collection_errors
    for out in outputs:
        text = out.read_text()
        assert all(secret not in text for _, secret in CREDS.values() if secret != "admin")


@pytest.mark.long
def test_check_cli_runs_on_the_cluster(deployed_twin, cluster, capsys) -> None:
    address, _ = cluster
    rc = deployed_twin.cli("check", "--cluster", address, "--shard-size", "4", "--checks", ",".join(CHECKS), "-q")
    assert rc == 0, capsys.readouterr().out


def client_workers(address: str) -> list[str]:
    with distributed.Client(address) as client:
        deadline = time.monotonic() + 10
        while len(client.scheduler_info()["workers"]) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        return sorted(client.scheduler_info()["workers"])


@pytest.mark.long
def test_watch_collections_run_on_the_workers_into_the_history(deployed_twin, cluster, tmp_path) -> None:
    from nr_run.runbooks.distributed import DistributedChecks, DistributedSource
    from nr_run.runbooks.history import HistoryRecorder
    from nr_run.runbooks.interrupt import Stop
    from nr_run.runbooks.watch import watch

    address, _ = cluster
    ticks = []
    with distributed.Client(address) as client:
        source = DistributedSource(DistributedChecks(client, _job(deployed_twin), per_shard=4), FABRIC)
        recorder = HistoryRecorder(tmp_path, "dc1")
        try:
            made = watch(source, 0.1, 2, Stop(), ticks.append, recorder)
        finally:
            recorder.close()
        workers = {r.worker for r in source.checks.last}
    assert made == 2 and all(t.error == "" and t.collection is not None for t in ticks)
    last = ticks[-1].collection
    assert last.failed == 0 and last.devices == sorted(FABRIC.devices)
    # counter samples of every switch, stamped on the workers and recorded
    assert {d for d in last.samples} >= {d.name for d in FABRIC.switches()}
    assert all(t.recorded is not None and not t.record_error for t in ticks)
    assert len(workers) == 2


@pytest.mark.long
def test_a_deploy_stage_gate_runs_on_the_workers(deployed_twin, cluster) -> None:
    """A stage's post-check (its scope only) on the workers: healthy, then a lost uplink of the stage is new."""
    from nr_run.runbooks.deploy_checks import StageGate
    from nr_run.runbooks.distributed import DistributedChecks

    address, _ = cluster
    with distributed.Client(address) as client:
        checks = DistributedChecks(client, _job(deployed_twin), per_shard=4)
        gate = StageGate(FABRIC, FAST_CHECKS, run=checks)
        gate.take_baseline(None)
        at_intent = {d.name for d in FABRIC.switches()}
        assert gate.stage(None, ["rtsw1"], at_intent) == ([], [])
        judged = {h for r in checks.last for h in r.hosts}
        assert "rtsw1" in judged and "rtsw4" not in judged            # the stage and its neighbours only
        port = next(i.name for i in FABRIC.devices["rtsw1"].interfaces if i.peer_device == "ctsw1")
        deployed_twin.fault("link_down", device="rtsw1", port=port)
        new, old = gate.stage(None, ["rtsw1"], at_intent)
    assert new and not old
    assert {f.device for f in new} <= {"rtsw1", "ctsw1"} and "rtsw1" in {f.device for f in new}


@pytest.mark.long
def test_watch_cli_polls_on_the_cluster(deployed_twin, cluster, capsys) -> None:
    address, _ = cluster
    from nr_run.runbooks.history import open_store

    rc = deployed_twin.cli("watch", "--cluster", address, "--shard-size", "4", "--count", "1", "--every", "10s",
                           "--option", "counters.interval_s=0.2")
    assert rc == 0, capsys.readouterr().out
    store = open_store(deployed_twin.artifacts, "dc1")
    try:
        assert store.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    finally:
        store.close()
