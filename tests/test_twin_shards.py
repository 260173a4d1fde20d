"""A sharded twin answers as a one-process twin does: the same findings by id, the same device outputs.

The long test starts a 1-shard and a 3-shard dc1 twin (`lab_up`, as `nr-run lab up` runs them), configures both
through NAPALM, saves and restores a baseline through the control API, downs a link whose two ends are served
by different shards, and compares what real clients read (`nr-run check --lab`, pyeapi, paramiko).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nr_run.cli.main import main
from nr_run.intent import compile_site
from nr_run.lab.twin.clab import load_clab
from nr_run.lab.twin.lab import lab_down, lab_fault, lab_reset, lab_status, lab_up
from nr_run.lab.twin.shards import ENV, assign, shard_count
from tests.conftest import DC1
from tests.sitegen import generate_site
from tests.test_rdma_cover_twin import boot
from tests.twin_site import SERVERS, SWITCHES, TwinSite, make_baseline, nic_ip, site_topology, ssh_run

CLAB = Path(__file__).resolve().parents[1] / "lab" / "dc1.clab.yml"


def test_shard_count_follows_the_site_and_the_override(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    assert shard_count(10) == 1 and shard_count(136) == 1          # one process answers a small site
    assert shard_count(1040) == 3 and shard_count(4096) == 4       # one per 512 devices, at most one per core
    assert shard_count(4096, 2) == 2 and shard_count(3, 8) == 3    # asked for; never more shards than devices
    monkeypatch.setenv(ENV, "5")
    assert shard_count(4096) == 5 and shard_count(4096, 2) == 2    # the environment, unless asked
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(ENV, bad)
        with pytest.raises(ValueError, match=ENV if bad != "0" else "1 to"):
            shard_count(100)


def test_every_device_in_one_shard_platforms_dealt_evenly():
    topo = load_clab(CLAB)
    groups = assign(topo, 3)
    names = [n for g in groups for n in g]
    assert sorted(names) == sorted(topo.nodes) and len(set(names)) == len(names)
    for platform in ("eos", "sonic", "linux"):
        per = [sum(topo.nodes[n].platform == platform for n in g) for g in groups]
        assert max(per) - min(per) <= 1, (platform, per)
    assert assign(topo, 3) == groups       # the shards of a restarted lab serve the same devices


def _link_across(topo, groups: list[list[str]]) -> tuple[str, str, str, str]:
    """A switch-to-switch cable whose ends are served by different shards."""
    owner = {n: k for k, g in enumerate(groups) for n in g}
    for c in topo.links:
        if c.a_dev in SWITCHES and c.b_dev in SWITCHES and owner[c.a_dev] != owner[c.b_dev]:
            return c.a_dev, c.a_port, c.b_dev, c.b_port
    raise AssertionError("no cable between shards")


_TIMES = re.compile(r'"(upTime|uptime|lastUpdate|lastStatusChangeTimestamp|lastChange|\w*[Tt]ime\w*|'
                    r'inUpdates|outUpdates|msgSent|msgReceived|\w*[Pp]kts\w*|\w*[Oo]ctets\w*)": [0-9.e+-]+')


def _masked(doc: object) -> str:
    """A device answer with its clock-driven numbers (uptimes, timestamps, message counts) masked."""
    return _TIMES.sub(r'"\1": 0', json.dumps(doc, sort_keys=True))


def _answers(site: TwinSite, down: tuple[str, str, str, str]) -> dict[str, object]:
    """What real clients read from the fabric around the downed cable (both ends and a server)."""
    a_dev, _, b_dev, _ = down
    out: dict[str, object] = {}
    for host in (a_dev, b_dev, "ctsw1", "rtsw1"):
        ep = site.addresses[host]
        if ep["platform"] == "eos":
            node = site.eapi(host)
            out[host] = _masked(node.enable(["show lldp neighbors", "show interfaces status",
                                             "show ip bgp summary", "show ip route"]))
        else:
            client = site.ssh(host, password="YourPaSsWoRd")
            try:
                out[host] = [ssh_run(client, c) for c in ("show lldp table", "show interfaces status",
                                                        "show pfc priority")]
            finally:
                client.close()
    client = site.ssh(SERVERS[0])
    try:        # across the fabric, from one server's NICs to another's (the RDMA path)
        for nic in ("eth1", "eth2"):
            rc, text = ssh_run(client, f"ping -c 2 -W 1 -I {nic_ip(SERVERS[0], nic)} {nic_ip(SERVERS[-1], nic)}")
            out[f"{SERVERS[0]}:{nic}"] = (rc, re.findall(r"\d+ received", text))
    finally:
        client.close()
    return out


@pytest.mark.long
def test_three_shards_answer_as_one_process(tmp_path, capsys, monkeypatch):
    """~60 s: two dc1 twins deployed through NAPALM, a baseline each, a cable down between two shards."""
    topo_file = site_topology(DC1, tmp_path / "clab")
    topo = load_clab(topo_file)
    groups = assign(topo, 3)
    down = _link_across(topo, groups)
    results = {}
    for shards in (1, 3):
        state = tmp_path / f"lab{shards}"
        status = lab_up(topo_file, state, base_port=0, shards=shards, timeout=120)
        try:
            assert status["running"] and len(status["addresses"]) == len(topo.nodes)
            make_baseline(state, "deployed", SWITCHES + SERVERS, tmp_path / f"deploy{shards}")
            lab_reset(state, "deployed")
            lab_fault(state, "link_down", device=down[0], port=down[1])
            site = TwinSite(state, tmp_path / f"art{shards}")
            monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(state))
            capsys.readouterr()
            rc = site.cli("check", "--json")
            report = json.loads(capsys.readouterr().out)
            findings = {f["id"]: f["passed"] for f in report["findings"]}
            results[shards] = (rc, findings, _answers(site, down), lab_status(state)["faults"])
        finally:
            lab_down(state)
    one, three = results[1], results[3]
    assert one[0] == three[0] == 1                 # the downed cable fails the check in both
    assert one[1] == three[1]                      # every finding, by id, passed or failed alike
    failed = [i for i, ok in one[1].items() if not ok]
    assert any(down[0] in i for i in failed) and any(down[2] in i for i in failed), failed
    assert one[2] == three[2]
    assert [f["kind"] for f in one[3]] == [f["kind"] for f in three[3]] == ["link_down"]


def _check(site: str, inventory: Path, state: Path, artifacts: Path, capsys, monkeypatch, *argv: str) -> tuple[int, dict]:
    """`nr-run check --lab` against the lab in `state`: exit code and findings (id -> passed)."""
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(state))
    capsys.readouterr()
    rc = main(["check", "--site", site, "--inventory-dir", str(inventory), "--lab", "--artifacts", str(artifacts),
               "--json", *argv])
    return rc, {f["id"]: f["passed"] for f in json.loads(capsys.readouterr().out)["findings"]}


@pytest.mark.long
def test_a_generated_136_device_site_checks_alike_in_one_and_two_shards(tmp_path, capsys, monkeypatch):
    """~70 s: 64 RTSWs (EOS and SONiC), 8 CTSWs, 64 servers booting their rendered configs; a cable down
    between two shards; the same findings by id from one process and from two shards."""
    inv = generate_site(tmp_path / "inv", rtsw=64, ctsw=8, nics=8, site="gen136")
    intent = compile_site(inv)
    configs = tmp_path / "configs"
    configs.mkdir()
    topo_file = site_topology(inv, tmp_path / "clab", lambda doc: boot(doc, intent, configs))
    topo = load_clab(topo_file)
    owner = {n: k for k, g in enumerate(assign(topo, 2)) for n in g}
    down = next(c for c in topo.links if c.a_dev.startswith("ctsw") and c.b_dev.startswith("rtsw")
                and owner[c.a_dev] != owner[c.b_dev])
    checks = ("--checks", "interfaces,lldp,cabling,bgp,ecmp,pfc,ecn")
    results = {}
    for shards in (1, 2):
        state = tmp_path / f"lab{shards}"
        status = lab_up(topo_file, state, base_port=0, shards=shards, timeout=300)
        try:
            assert len(status["addresses"]) == 136
            healthy = _check("gen136", inv.parent, state, tmp_path / "art", capsys, monkeypatch, *checks)
            lab_fault(state, "link_down", device=down.a_dev, port=down.a_port)
            results[shards] = (healthy, _check("gen136", inv.parent, state, tmp_path / "art", capsys, monkeypatch,
                                               *checks))
        finally:
            lab_down(state)
    (rc1, healthy1), (rc1_down, down1) = results[1]
    assert rc1 == 0 and rc1_down == 1
    assert results[1] == results[2]
    failed = [i for i, ok in down1.items() if not ok]
    assert any(down.a_dev in i for i in failed) and any(down.b_dev in i for i in failed), failed


@pytest.mark.long
def test_lab_up_shards_from_the_cli_and_a_dead_coordinator_takes_its_shards(tmp_path, capsys, monkeypatch):
    """~8 s: `nr-run lab up --shards 2`, status, an unreachable device and a drift served by different shards,
    then the coordinator killed: its shards stop on their own (no orphan keeps the ports)."""
    import os
    import signal
    import time

    from tests.twin_site import wait_until

    state = tmp_path / "lab"
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(state))
    assert main(["lab", "up", "--site", "dc1", "--inventory-dir", str(DC1.parent), "--base-port", "0",
                 "--shards", "2", "--json"]) == 0
    capsys.readouterr()
    shards = [json.loads(p.read_text())["pid"] for p in sorted((state / "shards").glob("shard-*.json"))]
    try:
        assert main(["lab", "status", "--site", "dc1", "--json"]) == 0
        status = json.loads(capsys.readouterr().out)
        assert status["running"] and len(status["addresses"]) == 10 and len(shards) == 2
        topo = load_clab(status["topology"])
        a, b = (next(n for n in g if topo.nodes[n].platform == "eos") for g in assign(topo, 2))
        site = TwinSite(state, tmp_path / "art")
        assert main(["lab", "fault", "--site", "dc1", "unreachable", f"device={a}"]) == 0
        with pytest.raises(Exception):     # noqa: B017 (pyeapi's own connection error, whichever it is)
            site.eapi(a).enable(["show hostname"])
        assert site.eapi(b).enable(["show hostname"])[0]["result"]["hostname"] == b
        assert main(["lab", "fault", "--site", "dc1", "drift", f"device={b}",
                     "lines=interface Ethernet1;description moved"]) == 0
        assert "description moved" in site.running(b)
        assert [f["kind"] for f in lab_status(state)["faults"]] == ["unreachable"]      # drift is an action
        assert main(["lab", "fault", "--site", "dc1", "clear"]) == 0
        assert site.eapi(a).enable(["show hostname"])[0]["result"]["hostname"] == a
        os.kill(lab_status(state)["pid"], signal.SIGKILL)
        deadline = time.monotonic() + 30

        def gone() -> bool:
            return all(not Path(f"/proc/{p}").exists() or "Z" in Path(f"/proc/{p}/stat").read_text().split(")")[1][:3]
                       for p in shards)
        wait_until(gone, max(1.0, deadline - time.monotonic()), what="shards outlived their coordinator")
    finally:
        lab_down(state)
