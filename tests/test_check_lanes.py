"""A check's lanes: the servers are collected and RDMA-probed while the switches are collected and sampled,
sharing the run's workers, and the findings are those of the lanes run one after the other."""

from __future__ import annotations

import threading
import time

import pytest
from nornir.core import Nornir
from nornir.core.inventory import Defaults, Groups, Host, Hosts, Inventory
from nornir.core.task import Result, Task
from nornir.plugins.runners import SerialRunner, ThreadedRunner

from nr_run.runbooks.check import SharedRunner, endpoint_hosts, run_checks
from nr_run.runbooks.inventory import init_nornir
from tests.conftest import REPO
from tests.twin_site import FABRIC, FAST_CHECKS


def _nornir(names: list[str]) -> Nornir:
    hosts = Hosts({n: Host(n) for n in names})
    return Nornir(Inventory(hosts=hosts, groups=Groups(), defaults=Defaults()))


def test_lanes_sharing_a_runner_never_hold_more_hosts_than_its_permits() -> None:
    lock, busy, peak = threading.Lock(), [0], [0]

    def task(task: Task) -> Result:
        with lock:
            busy[0] += 1
            peak[0] = max(peak[0], busy[0])
        time.sleep(0.01)
        with lock:
            busy[0] -= 1
        return Result(host=task.host, result=task.host.name)

    shared = SharedRunner(threading.BoundedSemaphore(3), 3)
    lanes = [_nornir([f"a{i}" for i in range(12)]).with_runner(shared),
             _nornir([f"b{i}" for i in range(12)]).with_runner(shared)]
    results: list = []
    threads = [threading.Thread(target=lambda n=n: results.append(n.run(task=task))) for n in lanes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(h for r in results for h in r) == sorted([f"a{i}" for i in range(12)] + [f"b{i}" for i in range(12)])
    assert all(not r.failed for r in results)
    assert 1 < peak[0] <= 3


def test_servers_are_the_rdma_lane() -> None:
    assert endpoint_hosts(FABRIC, sorted(FABRIC.devices)) == {d.name for d in FABRIC.servers()}


@pytest.mark.long          # ~3.5 s: two checks with the RDMA probe on the dc1 twin
def test_lanes_find_what_lanes_one_after_the_other_find(deployed_twin) -> None:
    twin = deployed_twin
    twin.fault("link_down", device="rtsw1", port=next(i.name for i in FABRIC.devices["rtsw1"].interfaces
                                                      if i.peer_device == "ctsw2"))
    checks = ["pfc", "counters", "host", "rdma", "cabling"]
    reports = []
    for runner in (ThreadedRunner(num_workers=4), SerialRunner()):
        nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=twin.addresses).with_runner(runner)
        try:
            reports.append(run_checks(nr, FABRIC, checks, FAST_CHECKS, keep_states=True))
        finally:
            nr.close_connections()
    lanes, serial = reports
    assert sorted(f.id for f in lanes.findings) == sorted(f.id for f in serial.findings)
    assert sorted(f.id for f in lanes.findings if not f.passed) == sorted(f.id for f in serial.findings if not f.passed)
    assert {f.device for f in lanes.findings if not f.passed} >= {"rtsw1"}
    assert lanes.probe_results["rdma"]["cells"] and not lanes.collection_errors
    assert all(s.counters_second is not None for h, s in lanes.states.items() if FABRIC.devices[h].role != "gpu")
