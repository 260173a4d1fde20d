"""Shared helpers for platform transports: merging Nornir connection options without losing earlier ones, and
commands on SSH exec channels."""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:      # Nornir itself loads with the first connection, not with the platform plug-ins
    from nornir.core.inventory import Host


def set_options(host: Host, connection: str, *, port: int | None = None, platform: str | None = None,
                extras: Mapping[str, Any] | None = None) -> None:
    """Merge `extras` (one level deep for dict values such as NAPALM's optional_args) into the host's options."""
    from nornir.core.inventory import ConnectionOptions

    current = host.connection_options.get(connection)
    merged: dict[str, Any] = dict(current.extras or {}) if current and current.extras else {}
    for key, value in (extras or {}).items():
        merged[key] = {**merged.get(key, {}), **value} if isinstance(value, dict) else value
    host.connection_options[connection] = ConnectionOptions(
        hostname=current.hostname if current else None,
        port=port or (current.port if current else None),
        username=current.username if current else None,
        password=current.password if current else None,
        platform=platform or (current.platform if current else None),
        extras=merged,
    )


def secure_netmiko(host: Host, insecure: bool) -> None:
    """SSH host-key checking for netmiko sessions (known_hosts) unless insecure."""
    set_options(host, "netmiko", extras={"ssh_strict": not insecure, "system_host_keys": not insecure})


def netmiko_lab_overlay(host: Host, endpoint: Mapping[str, Any], device_type: str = "linux") -> None:
    """A twin endpoint for netmiko: its port, no host-key check (the twin's keys are per lab)."""
    set_options(host, "netmiko", port=int(endpoint["port"]), platform=device_type,
                extras={"ssh_strict": False, "system_host_keys": False})


def drop_connection(task: Any, name: str) -> None:
    """Forget a connection that failed mid-command so the next run opens a fresh one."""
    try:
        task.host.close_connection(name)
    except Exception:
        task.host.connections.pop(name, None)


# ---------------------------------------------------------------- SSH exec channels

# How long a command's read waits for the next output at most before it looks at its deadline again; output,
# the end of it and a closed channel wake it at once (the channel's pipe, not a poll loop)
EXEC_WAIT_S = 0.5

# How often an idle SSH connection's reader thread wakes up (paramiko's default is every 0.1 s, to notice a close).
# A run holds one connection per server and SONiC switch until its second counter sample, each with its own
# reader thread: every wake-up takes the GIL from the threads doing the work, and with thousands of sessions at
# 1 s the wake-ups alone cost a fifth of a busy thread (benchmarks/bench_idle_sessions.py). Closing shuts the
# socket, which wakes the reader at once; a rekey is started on the next packet, and nothing here uses SSH
# keepalives, so nothing else needs the wake-up.
IDLE_WAKE_S = 10.0


def quiet_when_idle(transport: Any) -> None:
    """Let an authenticated paramiko Transport's reader thread sleep IDLE_WAKE_S between checks instead of
    0.1 s (it still wakes at once for every packet). Nothing to do for one without a socket timeout."""
    sock = getattr(transport, "sock", None)
    if sock is not None and hasattr(sock, "settimeout") and transport.is_authenticated():
        sock.settimeout(IDLE_WAKE_S)


def shut_down(transport: Any) -> None:
    """Shut the socket of a paramiko Transport before closing it, which wakes its reader thread at once (a
    closed socket would leave it waiting up to its socket timeout)."""
    import contextlib
    import socket

    sock = getattr(transport, "sock", None)
    if sock is not None and hasattr(sock, "shutdown"):
        with contextlib.suppress(OSError):        # already closed by the far end
            sock.shutdown(socket.SHUT_RDWR)


def ssh_transport(conn: Any) -> Any:
    """The paramiko Transport of an SshExec (a paramiko SSHClient) or netmiko connection (None if it has none,
    e.g. telnet)."""
    if hasattr(conn, "get_transport"):
        return conn.get_transport()
    channel = getattr(conn, "remote_conn", None)
    get = getattr(channel, "get_transport", None)
    return get() if get is not None else None


def is_open(transport: Any) -> bool:
    """Whether a paramiko Transport (None: a closed client's) can still open channels."""
    return transport is not None and transport.is_active()


def exec_start(transport: Any, command: str, timeout: float = 30.0) -> Any:
    """Run `command` on its own SSH exec channel (no shell prompt, no echo) and return the channel. EOFError for a
    connection that is closed (a closed client has no transport)."""
    if not is_open(transport):
        raise EOFError("the SSH session is closed")
    channel = transport.open_session(timeout=timeout)
    channel.settimeout(timeout)
    channel.exec_command(command)
    return channel


# Output held in memory per command at most: a large switch's running config is a few MB; a device that sends
# more is refused rather than allowed to exhaust this process' memory
EXEC_MAX_OUTPUT = 256 * 2**20


def _drained(channel: Any) -> bool:
    """The server has sent everything (EOF, or closed the channel) and every byte of it has been read."""
    return ((channel.eof_received or channel.closed)
            and not channel.recv_ready() and not channel.recv_stderr_ready())


def exec_read(channel: Any, timeout: float, until: str | None = None,
              limit: int = EXEC_MAX_OUTPUT) -> tuple[int | None, str]:
    """Read a channel's stdout and stderr to the end of the output (the server's EOF), then its exit status
    (-> status); with `until`, stop once that text appears (-> None, the command still runs).

    The exit status is no end-of-output mark: a server may send it while output is still queued behind the
    client's receive window (asyncssh does, at 2 MiB), so stopping there cuts the reply. TimeoutError after
    `timeout` seconds; OSError past `limit` bytes. A channel closed without a status gives -1."""
    import select

    out, err = bytearray(), bytearray()
    deadline = time.monotonic() + timeout
    waiter = select.poll()       # the channel's pipe: readable while output waits, and for good after EOF or close
    waiter.register(channel.fileno(), select.POLLIN)
    try:
        while True:
            busy = False
            while channel.recv_ready():
                out += channel.recv(65536)
                busy = True
            while channel.recv_stderr_ready():
                err += channel.recv_stderr(65536)
                busy = True
            if len(out) + len(err) > limit:
                raise OSError(f"more than {limit:,} bytes of output")
            if until is not None and busy and until in (out + err).decode(errors="replace"):
                return None, (out + err).decode(errors="replace")
            if _drained(channel):
                break
            left = deadline - time.monotonic()
            if left < 0:
                raise TimeoutError(f"no {'output' if until else 'end of output'} within {timeout:g} s")
            if not busy:
                waiter.poll(max(1, int(min(left, EXEC_WAIT_S) * 1000)))
        if not channel.status_event.wait(max(0.0, deadline - time.monotonic())):
            raise TimeoutError(f"no exit status within {timeout:g} s")
        status = channel.exit_status
    except BaseException:
        channel.close()
        raise
    channel.close()
    return status, (out + err).decode(errors="replace")


def exec_many(transport: Any, commands: list[str], timeout: float = 60.0) -> dict[str, str]:
    """Each command on its own exec channel, all started before any is read, so they run at the same time;
    command -> stdout followed by stderr (what a terminal would show)."""
    channels = {cmd: exec_start(transport, cmd, timeout) for cmd in commands}
    return {cmd: exec_read(channel, timeout)[1] for cmd, channel in channels.items()}


def batch_script(commands: list[str], marker: str) -> str:
    """One shell line running `commands` one after another, each one's output (stderr merged, as a terminal
    shows it) after a `<marker> <index> <status of the one before>` line, then `<marker> end <status>`."""
    parts = [f"echo {marker} 0 0"]
    for i, cmd in enumerate(commands):
        if "\n" in cmd:
            raise ValueError(f"a batched command is one line: {cmd.splitlines()[0]!r}")
        parts += [f"{cmd} 2>&1", f'echo {marker} {i + 1 if i + 1 < len(commands) else "end"} $?']
    return "; ".join(parts)


def split_batch(text: str, commands: list[str], marker: str) -> dict[str, tuple[int, str]]:
    """command -> (exit status, output) of a batch_script's output. A marker may follow output that did not
    end its last line, so it is found anywhere; the output between two markers is the command's, unchanged.
    A batch cut short (the host closed it) leaves the commands it did not finish out."""
    found = list(re.finditer(re.escape(marker) + r" (\d+|end) (\d+)\n", text))
    out: dict[str, tuple[int, str]] = {}
    for m, nxt in zip(found, found[1:], strict=False):
        if m[1] == "end":
            break
        i = int(m[1])
        if i < len(commands):
            out.setdefault(commands[i], (int(nxt[2]), text[m.end():nxt.start()]))
    return out


def exec_batch(transport: Any, commands: list[str], timeout: float = 60.0) -> dict[str, str]:
    """The commands one after another on ONE exec channel (exec_many's result: command -> output): one
    channel open, one request and one reply per host instead of one per command, for quick reads (state
    files, iproute2 JSON), not for commands that take their time (pings, perftest), which exec_many runs at
    the same time. RuntimeError if the batch's output does not carry every command's."""
    return exec_batches(transport, [commands], timeout)


def exec_batches(transport: Any, groups: list[list[str]], timeout: float = 60.0) -> dict[str, str]:
    """Each group as one exec_batch channel, every channel started before any is read, so the groups run at
    the same time and the commands of a group one after another."""
    started = []
    for group in groups:
        unique = list(dict.fromkeys(group))
        if unique:
            marker = f"nr-run-batch-{secrets.token_hex(8)}"
            started.append((unique, marker, exec_start(transport, batch_script(unique, marker), timeout)))
    out: dict[str, str] = {}
    for unique, marker, channel in started:
        status, text = exec_read(channel, timeout)
        got = split_batch(text, unique, marker)
        missing = [c for c in unique if c not in got]
        if missing:
            first = next((ln.strip() for ln in text.splitlines() if ln.strip() and marker not in ln), "")
            raise RuntimeError(f"batch of {len(unique)} commands ended (status {status}) before {missing[0]!r}"
                               + (f": {first}" if first else ""))
        out.update({c: got[c][1] for c in unique})
    return out


# ---------------------------------------------------------------- a plain SSH connection for exec channels

SSH_EXEC = "nr_run_ssh"


class _AcceptUnknown:
    """Host-key policy of --insecure / the lab: accept a key that is not known, without saving it."""

    def missing_host_key(self, client: Any, hostname: str, key: Any) -> None:
        return None


class SshExec:
    """Nornir connection plugin: an SSH client used only for exec channels. Opening it is one SSH handshake:
    no interactive shell, no prompt detection and no buffer clearing (netmiko's session preparation sleeps
    ~0.3 s per host for those). Host keys are checked against ~/.ssh/known_hosts unless extras
    `ssh_strict` is false. `.connection` (what Nornir's get_connection returns) is the paramiko SSHClient."""

    def open(self, hostname: str | None, username: str | None, password: str | None, port: int | None,
             platform: str | None, extras: dict[str, Any] | None = None, configuration: Any = None) -> None:
        import paramiko

        extras = extras or {}
        client = paramiko.SSHClient()
        if extras.get("ssh_strict", True):
            client.load_system_host_keys()
            client.set_missing_host_key_policy(paramiko.RejectPolicy())
        else:
            client.set_missing_host_key_policy(_AcceptUnknown())
        timeout = float(extras.get("timeout", 30))
        client.connect(hostname or "", port=port or 22, username=username, password=password, timeout=timeout,
                       banner_timeout=timeout, auth_timeout=timeout, look_for_keys=False, allow_agent=False)
        quiet_when_idle(client.get_transport())
        self.connection = client

    def close(self) -> None:
        transport = self.connection.get_transport()
        if transport is not None:
            shut_down(transport)
        self.connection.close()


def register_ssh_exec() -> None:
    """Make the plugin known to Nornir (also declared as an entry point, for a user's own InitNornir)."""
    from nornir.core.plugins.connections import ConnectionPluginRegister

    if ConnectionPluginRegister.available.get(SSH_EXEC) is None:
        ConnectionPluginRegister.register(SSH_EXEC, SshExec)


def secure_ssh_exec(host: Host, insecure: bool) -> None:
    register_ssh_exec()      # a host that uses the plugin is being set up: Nornir is loaded by now
    set_options(host, SSH_EXEC, extras={"ssh_strict": not insecure})


def ssh_exec_lab_overlay(host: Host, endpoint: Mapping[str, Any]) -> None:
    """A twin endpoint: its port, no host-key check (the twin's keys are per lab)."""
    register_ssh_exec()
    set_options(host, SSH_EXEC, port=int(endpoint["port"]), extras={"ssh_strict": False})
