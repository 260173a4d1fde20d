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
    servers = [d.name for d in FABRIC.servers()]
    # the servers were reached over SSH exec channels only: closing one is a socket close, with none of the
    # fixed waits netmiko's interactive logout makes
    from nr_run.platforms.transport import SSH_EXEC

    assert {c for h in servers for c in nr.inventory.hosts[h].connections} == {SSH_EXEC}
    nr.close_connections()
    assert report.passed, [f for f in report.findings if not f.passed][:3]
    lines = [(t, fmt, cmd) for h in servers for t, fmt, cmd in _log(twin, h) if t >= since]
    probe_cmds = [(t, fmt, cmd) for t, fmt, cmd in lines if cmd.startswith(("ping", "ib_write_bw", "ip ", "dcb"))]
    assert probe_cmds and {fmt for _, fmt, _ in probe_cmds} == {"exec"}
    clients = sorted(t for t, _, cmd in probe_cmds if cmd.startswith("ib_write_bw") and cmd.split()[-1][0].isdigit())
    # every NIC pair is pinged (48 on dc1), bandwidth runs on the ring of 8 pairs
    assert len(report.probe_results["rdma"]["cells"]) == 48 and len(clients) == 8
    # the ring's 8 pairs share no NIC two by two: they run in rounds, not one after the other. Each client runs
    # for the probe's `seconds`: clients one after the other start at least that far apart, those of one round
    # all start before the first of them ends
    run_s = FAST_CHECKS["rdma"]["seconds"]
    rounds = 1 + sum(1 for a, b in zip(clients, clients[1:], strict=False) if b - a >= run_s)
    assert rounds <= 2, clients


def test_deploy_lab_against_a_running_twin_does_not_import_the_twin_servers(twin, tmp_path):
    """`deploy --lab` only reads a running twin's status file: the twin's servers (aiohttp, asyncssh) stay
    unimported, which is most of what the CLI would otherwise spend before contacting a device."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "NR_RUN_LAB_STATE_DIR": str(twin.state)}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "nr_run.cli.main", "deploy", "--site", "dc1",
                           "--lab", "--json", "--hosts", "rtsw1", "--artifacts", str(tmp_path / "a")],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert [(d["device"], d["state"]) for d in json.loads(proc.stdout)["devices"]] == [("rtsw1", "diffed")]
    imported = {ln.rsplit("|", 1)[1].strip() for ln in proc.stderr.splitlines() if ln.startswith("import time:")}
    assert "nr_run.lab.twin.status" in imported
    assert not imported & {"aiohttp", "asyncssh", "nr_run.lab.twin.lab"}
