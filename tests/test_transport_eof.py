"""Every SSH transport reads a reply to its end: a multi-megabyte output arrives whole with its exit status.

The twin's SSH server (asyncssh) sends a command's exit status as soon as the command ends, while output past
the client's receive window (2 MiB for paramiko) is still queued, as any SSH server may; a client that stops at
the exit status cuts the reply at the window. Each test uploads a file larger than that window to a twin
device through a real client, then reads it back through one of the product's transports.
"""

from __future__ import annotations

import hashlib

import netmiko
import paramiko
import pytest

from nr_run.platforms.transport import exec_many, exec_read, exec_start
from tests.twin_site import CREDS

# larger than paramiko's 2 MiB receive window, and not a multiple of any buffer size
SIZE = 5 * 2**20 + 12_345
BIG = "/tmp/nr-run-big.txt"


def _payload() -> str:
    line = "".join(chr(ord("a") + i % 26) for i in range(99)) + "\n"
    text = line * (SIZE // len(line) + 1)
    return text[:SIZE - 1] + "\n"


PAYLOAD = _payload()


def _upload(client: paramiko.SSHClient, text: str) -> None:
    """`cat > FILE` with the text on stdin, as the SONiC driver uploads a patch."""
    channel = client.get_transport().open_session()
    channel.exec_command(f"cat > {BIG}")
    channel.sendall(text.encode())
    channel.shutdown_write()
    assert channel.recv_exit_status() == 0


def _ssh(twin, host: str) -> paramiko.SSHClient:
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect("127.0.0.1", port=twin.addresses[host]["port"], username=CREDS[twin.addresses[host]["platform"]][0],
                   password=CREDS[twin.addresses[host]["platform"]][1], look_for_keys=False, allow_agent=False)
    return client


def _same(text: str) -> None:
    assert len(text) == len(PAYLOAD)
    assert hashlib.sha256(text.encode()).digest() == hashlib.sha256(PAYLOAD.encode()).digest()


def test_exec_read_gets_every_byte_and_the_status(twin) -> None:
    client = _ssh(twin, "gpu1")
    try:
        _upload(client, PAYLOAD)
        status, text = exec_read(exec_start(client.get_transport(), f"cat {BIG}"), timeout=60)
        assert status == 0
        _same(text)
        status, text = exec_read(exec_start(client.get_transport(), f"cat {BIG}; false"), timeout=60)
        assert status == 1                          # the status after a long reply is still the command's own
        _same(text)
    finally:
        client.close()


def test_exec_many_reads_parallel_channels_to_their_ends(twin) -> None:
    client = _ssh(twin, "gpu2")
    try:
        _upload(client, PAYLOAD)
        out = exec_many(client.get_transport(), [f"cat {BIG}", "echo small", f"cat {BIG} {BIG}"], timeout=60)
        _same(out[f"cat {BIG}"])
        assert out["echo small"] == "small\n"
        assert out[f"cat {BIG} {BIG}"] == PAYLOAD + PAYLOAD
    finally:
        client.close()


def test_exec_read_refuses_output_past_its_limit(twin) -> None:
    client = _ssh(twin, "gpu3")
    try:
        _upload(client, PAYLOAD)
        with pytest.raises(OSError, match="bytes of output"):
            exec_read(exec_start(client.get_transport(), f"cat {BIG}"), timeout=60, limit=2**20)
    finally:
        client.close()


def test_sonic_driver_reads_a_multi_megabyte_reply(twin) -> None:
    drv = twin.driver("rtsw3")
    try:
        _upload(drv.device, PAYLOAD)
        _same(drv.cli([f"cat {BIG}"])[f"cat {BIG}"])
    finally:
        drv.close()


def test_netmiko_session_reads_a_multi_megabyte_reply(twin) -> None:
    """The interactive-shell path (netmiko `linux`, the GPU servers' deploy connection)."""
    client = _ssh(twin, "gpu4")
    try:
        _upload(client, PAYLOAD)
    finally:
        client.close()
    conn = netmiko.ConnectHandler(device_type="linux", host="127.0.0.1", port=twin.addresses["gpu4"]["port"],
                                  username=CREDS["linux"][0], password=CREDS["linux"][1], ssh_strict=False,
                                  system_host_keys=False, use_keys=False, allow_agent=False)
    try:
        text = conn.send_command(f"cat {BIG}", read_timeout=120, strip_prompt=True, strip_command=True)
        _same(text.replace("\r\n", "\n").strip("\n") + "\n")
    finally:
        conn.disconnect()
