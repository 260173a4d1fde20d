"""Fast checks against the twin, read from its command logs: Linux host commands go over SSH exec channels
(not the interactive shell netmiko reads with a sleep loop), bandwidth pairs that share no NIC run together,
and closing the GPU hosts' sessions takes no fixed wait."""

from __future__ import annotations

import json
import time

from nr_run.runbooks.check import run_checks
from nr_run.runbooks.inventory import init_nornir
from tests.conftest import REPO
from tests.twin_site import FABRIC, FAST_CHECKS


def _log(twin, host: str) -> list[tuple[float, str, str]]:
    path = twin.state / "logs" / f"{host}.log"
    out = []
    for line in path.read_text().splitlines() if path.exists() else []:
        stamp, fmt, cmd = line.split("\t", 2)
        out.append((float(stamp), fmt, json.loads(cmd)))
    return out


def test_rdma_probe_uses_exec_channels_runs_pairs_together_and_closes_fast(deployed_twin):
    twin = deployed_twin
    since = time.time()
    nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=twin.addresses)
    report = run_checks(nr, FABRIC, ["rdma", "host"], FAST_CHECKS)
    t0 = time.perf_counter()
    nr.close_connections()
    closing = time.perf_counter() - t0
    assert report.passed, [f for f in report.findings if not f.passed][:3]
    assert closing < 1.0, f"closing the sessions took {closing:.1f} s"
    servers = [d.name for d in FABRIC.servers()]
    lines = [(t, fmt, cmd) for h in servers for t, fmt, cmd in _log(twin, h) if t >= since]
    probe_cmds = [(t, fmt, cmd) for t, fmt, cmd in lines if cmd.startswith(("ping", "ib_write_bw", "ip ", "dcb"))]
    assert probe_cmds and {fmt for _, fmt, _ in probe_cmds} == {"exec"}
    clients = sorted(t for t, _, cmd in probe_cmds if cmd.startswith("ib_write_bw") and cmd.split()[-1][0].isdigit())
    # every NIC pair is pinged (48 on dc1), bandwidth runs on the ring of 8 pairs
    assert len(report.probe_results["rdma"]["cells"]) == 48 and len(clients) == 8
    # the ring's 8 pairs share no NIC two by two: they run in rounds, not one after the other
    rounds = 1 + sum(1 for a, b in zip(clients, clients[1:], strict=False) if b - a > 0.05)
    assert rounds <= 2, clients
