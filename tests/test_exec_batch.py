"""A Linux host's quick reads go one after another on one SSH exec channel: one request per host and collection,
each command's output (stderr where a terminal shows it) and status kept apart, and the same NIC state as one
channel per command."""

from __future__ import annotations

import json
import time

import paramiko
import pytest

from nr_run.platforms.linux.collect import apply_section, run_commands, section_commands
from nr_run.platforms.state import DeviceState
from nr_run.platforms.transport import batch_script, exec_batch, exec_many, split_batch
from nr_run.runbooks.check import run_checks
from nr_run.runbooks.inventory import init_nornir
from tests.conftest import REPO
from tests.twin_site import CREDS, FABRIC, FAST_CHECKS

M = "nr-run-batch-0123456789abcdef"


def test_split_batch_keeps_output_that_ends_without_a_newline_and_each_status() -> None:
    cmds = ["printf x", "true", "cat /none"]
    text = f"{M} 0 0\nx{M} 1 0\n{M} 2 0\ncat: /none: No such file or directory\n{M} end 1\n"
    assert split_batch(text, cmds, M) == {"printf x": (0, "x"), "true": (0, ""),
                                          "cat /none": (1, "cat: /none: No such file or directory\n")}


def test_split_batch_leaves_out_what_a_batch_cut_short_did_not_finish() -> None:
    cmds = ["a", "b", "c"]
    assert split_batch(f"{M} 0 0\nA\n{M} 1 0\nB, then the host closed", cmds, M) == {"a": (0, "A\n")}


def test_a_batched_command_is_one_line() -> None:
    with pytest.raises(ValueError, match="one line"):
        batch_script(["echo a", "cat > f <<EOF\nx\nEOF"], M)


def _ssh(twin, host: str) -> paramiko.SSHClient:
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    user, password = CREDS["linux"]
    client.connect("127.0.0.1", port=twin.addresses[host]["port"], username=user, password=password,
                   look_for_keys=False, allow_agent=False)
    return client


def _execs(twin, host: str, since: float) -> list[str]:
    path = twin.state / "logs" / f"{host}.log"
    lines = [ln.split("\t", 2) for ln in path.read_text().splitlines()] if path.exists() else []
    return [json.loads(cmd) for t, fmt, cmd in lines if float(t) >= since and fmt == "exec"]


def test_one_channel_carries_every_quick_read_with_its_own_error_text(twin) -> None:
    client = _ssh(twin, "gpu1")
    try:
        since = time.time()
        out = exec_batch(client.get_transport(), ["echo one", "cat /no/such/file", "hostname", "echo one"])
        assert _execs(twin, "gpu1", since) and len(_execs(twin, "gpu1", since)) == 1
        assert out == {"echo one": "one\n", "cat /no/such/file": "cat: /no/such/file: No such file or directory\n",
                       "hostname": "gpu1\n"}
    finally:
        client.close()


def test_batched_nic_reads_give_the_state_one_channel_per_command_gives(deployed_twin) -> None:
    twin = deployed_twin
    device = FABRIC.devices["gpu2"]
    cmds = section_commands("nics", device)
    client = _ssh(twin, "gpu2")
    try:
        batched, alone = DeviceState("gpu2", "linux"), DeviceState("gpu2", "linux")
        since = time.time()
        apply_section("nics", run_commands(client.get_transport(), cmds), batched, device)
        assert len(_execs(twin, "gpu2", since)) == 1
        apply_section("nics", exec_many(client.get_transport(), cmds), alone, device)
    finally:
        client.close()
    assert batched.nics and batched.nics == alone.nics
    assert all(not n.unreadable for n in batched.nics.values() if n.name.startswith("eth"))


def test_a_host_check_reads_each_server_in_one_request_and_pings_on_their_own_channels(deployed_twin) -> None:
    twin = deployed_twin
    since = time.time()
    nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=twin.addresses)
    try:
        report = run_checks(nr, FABRIC, ["host", "rdma"], {**FAST_CHECKS, "rdma": {**FAST_CHECKS["rdma"],
                                                                                    "bandwidth": False}},
                             keep_states=True)
    finally:
        nr.close_connections()
    assert report.passed, [f for f in report.findings if not f.passed][:3]
    for server in (d.name for d in FABRIC.servers()):
        execs = _execs(twin, server, since)
        reads = [c for c in execs if not c.startswith("ping ")]
        pings = [c for c in execs if c.startswith("ping ")]
        # the collection's reads and the probe's `rdma link show`: at most two requests, however many NICs
        assert 1 <= len(reads) <= 2 and all(c.startswith("echo nr-run-batch-") for c in reads), reads
        assert len(pings) == len(report.states[server].rdma)


def test_sonic_reads_come_in_a_few_batches_with_each_command_s_own_output(deployed_twin) -> None:
    from nr_run.platforms.sonic.collect import CHANNELS, RUNNING
    from nr_run.platforms.transport import exec_batches

    twin = deployed_twin
    cmds = [RUNNING, "show interfaces status", "show lldp table", "show pfc priority", "pfcwd show config",
            "show no-such-command"]
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    user, password = CREDS["sonic"]
    client.connect("127.0.0.1", port=twin.addresses["rtsw3"]["port"], username=user, password=password,
                   look_for_keys=False, allow_agent=False)
    try:
        since = time.time()
        batched = exec_batches(client.get_transport(), [cmds[i::CHANNELS] for i in range(CHANNELS)])
        assert len(_execs(twin, "rtsw3", since)) == CHANNELS
        alone = exec_many(client.get_transport(), cmds)
    finally:
        client.close()
    assert batched == alone
    assert json.loads(batched[RUNNING])["PORT"] and batched["show no-such-command"].startswith("Error")


def test_a_sonic_check_reads_a_switch_in_batches(deployed_twin) -> None:
    from nr_run.platforms.sonic.collect import CHANNELS

    twin = deployed_twin
    since = time.time()
    nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=twin.addresses)
    try:
        report = run_checks(nr, FABRIC, ["pfc", "counters", "bgp", "cabling", "ecmp"], FAST_CHECKS)
    finally:
        nr.close_connections()
    assert report.passed, [f for f in report.findings if not f.passed][:3]
    execs = _execs(twin, "rtsw3", since)
    # the collection and the second counter sample: CHANNELS batches each, every command inside one
    assert 0 < len(execs) <= 2 * CHANNELS and all(c.startswith("echo nr-run-batch-") for c in execs), execs


def test_a_runner_reopens_a_session_found_closed_and_drops_one_that_fails(twin, mocker) -> None:
    """A host's SSH session found closed before a read (the server went away while it was idle) is replaced and
    the read runs on the new one; a read that fails on an open session drops it, so the next opens anew."""
    from nr_run.platforms.linux.collect import runner
    from nr_run.platforms.transport import SSH_EXEC

    def steps(task) -> dict:
        run = runner(task)
        first = task.host.connections[SSH_EXEC].connection
        first.close()                                    # the server went away: the client is closed
        name = run(["hostname"])["hostname"].strip()
        second = task.host.connections[SSH_EXEC].connection
        # the next read breaks off mid-command (the session dies under it)
        mocker.patch("nr_run.platforms.linux.collect.run_commands", side_effect=EOFError("channel closed"))
        try:
            run(["hostname"])
            failed = ""
        except EOFError as exc:
            failed = str(exc)
        return {"name": name, "new": second is not first, "failed": failed,
                "dropped": SSH_EXEC not in task.host.connections}

    nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=twin.addresses)
    try:
        result = nr.filter(name="gpu1").run(task=steps)["gpu1"]
    finally:
        nr.close_connections()
    assert not result.failed, result.exception
    assert result.result == {"name": "gpu1", "new": True, "failed": "channel closed", "dropped": True}
