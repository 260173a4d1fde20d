"""SSH connections a run keeps open cost nothing while they wait: a command's read sleeps until output, its end
or a closed channel wakes it (not a poll every few milliseconds), an idle connection's reader thread wakes
seldom, and closing a connection ends that thread at once. Through paramiko against the twin's sshd."""

from __future__ import annotations

from typing import Any

from nr_run.platforms import transport
from nr_run.platforms.collector import once_per_output
from nr_run.platforms.transport import SshExec, exec_read, exec_start
from tests.twin_site import CREDS


class _Counted:
    """A paramiko channel whose readiness checks are counted: one per pass of a read loop."""

    def __init__(self, channel: Any) -> None:
        self._channel, self.checks = channel, 0

    def recv_ready(self) -> bool:
        self.checks += 1
        return bool(self._channel.recv_ready())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._channel, name)


def _open(twin, host: str = "gpu1") -> SshExec:
    conn = SshExec()
    user, password = CREDS["linux"]
    conn.open("127.0.0.1", user, password, twin.addresses[host]["port"], "linux", {"ssh_strict": False})
    return conn


def test_a_read_waiting_for_a_slow_answer_wakes_for_the_answer_not_every_few_milliseconds(twin) -> None:
    twin.fault("latency", ms=400)
    conn = _open(twin)
    try:
        channel = _Counted(exec_start(conn.connection.get_transport(), "hostname", 30))
        status, text = exec_read(channel, 30)
        assert (status, text) == (0, "gpu1\n")
        # a 5 ms poll loop passes ~80 times in 400 ms; woken by the channel it passes a handful of times
        assert channel.checks <= 10, channel.checks
    finally:
        conn.close()


def test_an_idle_connection_wakes_seldom_and_closing_ends_its_reader_at_once(twin, monkeypatch) -> None:
    monkeypatch.setattr(transport, "IDLE_WAKE_S", 60.0)
    conn = _open(twin)
    reader = conn.connection.get_transport()
    assert reader.sock.gettimeout() == 60.0          # paramiko's own is 0.1 s
    status, text = exec_read(exec_start(reader, "hostname", 30), 30)
    assert (status, text) == (0, "gpu1\n")           # packets still wake it at once
    conn.close()
    reader.join(timeout=20)       # far less than the 60 s it would sleep on a socket closed under it
    assert not reader.is_alive()


def test_sections_reading_one_output_parse_it_once_and_a_new_output_anew() -> None:
    calls: list[str] = []

    def parse(text: str) -> dict[str, int]:
        calls.append(text)
        return {"lines": len(text.splitlines())}

    parsed = once_per_output(parse)
    config = "interface Ethernet1\n   mtu 9214\n"
    assert parsed(config) is parsed(config)
    again = "".join(["interface Ethernet1\n", "   mtu 9214\n"])       # equal text, another collection's object
    assert again is not config and parsed(again) == {"lines": 2}
    assert len(calls) == 2
