"""asyncssh server giving a twin device an interactive shell, exec requests and file upload via stdin."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

import asyncssh

from nr_run.lab.twin.linux import shell

if TYPE_CHECKING:
    from nr_run.lab.twin.platforms import LabContext


class ShellDevice(shell.Device, Protocol):
    user: str

    def prompt(self) -> str: ...

    def accepts(self, username: str, password: str) -> bool: ...

    def reachable(self) -> bool: ...


_HOST_KEY: asyncssh.SSHKey | None = None
Log = Callable[[str, str], None]
Delay = Callable[[], float]


def _no_delay() -> float:
    return 0.0


def host_key() -> asyncssh.SSHKey:
    """One ed25519 host key per twin process (generating it is cheap, but do it once)."""
    global _HOST_KEY
    if _HOST_KEY is None:
        _HOST_KEY = asyncssh.generate_private_key("ssh-ed25519")
    return _HOST_KEY


# live client connections: their loop and the device they are logged in to
_CONNECTIONS: dict[asyncssh.SSHServerConnection, tuple[asyncio.AbstractEventLoop, ShellDevice]] = {}


class _Auth(asyncssh.SSHServer):
    def __init__(self, device: ShellDevice) -> None:
        self.device = device
        self.conn: asyncssh.SSHServerConnection | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        if not self.device.reachable():   # an "unreachable" fault: drop the TCP session
            conn.abort()
            return
        self.conn = conn
        _CONNECTIONS[conn] = (asyncio.get_running_loop(), self.device)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.conn is not None:
            _CONNECTIONS.pop(self.conn, None)

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        return self.device.accepts(username, password)


def _drop_if_unreachable(device: ShellDevice, process: asyncssh.SSHServerProcess) -> bool:
    """A device that became unreachable mid-session answers nothing more: the TCP session dies."""
    if device.reachable():
        return False
    process.get_extra_info("connection").abort()
    return True


async def _session(device: ShellDevice, process: asyncssh.SSHServerProcess, log: Log, delay: Delay) -> None:
    try:
        if _drop_if_unreachable(device, process):
            return
        if process.command is not None:
            command = process.command
            log("exec", command)
            if wait := delay():        # latency / slow faults hold every answer, on every protocol
                await asyncio.sleep(wait)
            stdin = await process.stdin.read() if shell.wants_stdin(command) else None
            rc, out, err = shell.execute(device, command, stdin)
            process.stdout.write(out)
            process.stderr.write(err)
            process.exit(rc)
            return
        await _interactive(device, process, log, delay)
    except (asyncssh.BreakReceived, asyncssh.TerminalSizeChanged, BrokenPipeError, ConnectionError):
        process.exit(0)


async def _interactive(device: ShellDevice, process: asyncssh.SSHServerProcess, log: Log, delay: Delay) -> None:
    rc = 0
    process.stdout.write(device.prompt())
    while True:
        line = await process.stdin.readline()
        if not line:
            break
        line = line.rstrip("\r\n")
        if line.strip() in ("exit", "logout"):
            break
        marker = shell.heredoc_marker(line)
        if marker:
            body = []
            while True:
                nxt = await process.stdin.readline()
                if not nxt or nxt.strip() == marker:
                    break
                body.append(nxt.rstrip("\r\n"))
            line = line + "\n" + "\n".join(body) + "\n" + marker
        if _drop_if_unreachable(device, process):
            return
        if line.strip():
            log("shell", line)
            if wait := delay():
                await asyncio.sleep(wait)
            rc, out, err = shell.execute(device, line, None, rc)
            process.stdout.write((out + err).replace("\r\n", "\n"))
        process.stdout.write(device.prompt())
    process.exit(0)


_SESSIONS: set[asyncio.Task] = set()


def _track(task: asyncio.Task) -> asyncio.Task:
    _SESSIONS.add(task)
    task.add_done_callback(_SESSIONS.discard)
    return task


async def close_sessions() -> None:
    """End the shell sessions still open (clients that never logged out) when the lab stops."""
    tasks = [t for t in _SESSIONS if not t.done() and t.get_loop() is asyncio.get_running_loop()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def drop_connections(only_unreachable: bool = False, only_device: str | None = None) -> None:
    """Close this loop's client connections, as a device reboot does (a lab reset); only_unreachable: those of
    devices that just became unreachable, so that clients fail at once instead of on a half-written command;
    only_device: those of one device (named by its `name` or `node.name`)."""
    loop = asyncio.get_running_loop()
    for conn, (owner, device) in list(_CONNECTIONS.items()):
        name = getattr(device, "name", None) or getattr(getattr(device, "node", None), "name", None)
        if only_device is not None and name != only_device:
            continue
        if owner is loop and (not only_unreachable or not device.reachable()):
            _CONNECTIONS.pop(conn, None)
            conn.abort()


def _log_to(ctx: LabContext, name: str, kind: str, command: str) -> None:
    ctx.log(name, kind, command)


def _no_log(kind: str, command: str) -> None:
    return None


async def serve(get: Callable[[], ShellDevice], host: str, port: int, log: Log = _no_log,
                delay: Delay = _no_delay) -> asyncssh.SSHAcceptor:
    """Listen for SSH on host:port (port 0 picks a free one: read it from the acceptor).

    `get()` returns the device, looked up per connection so that a lab reset can swap the device object.
    `log(kind, command)` records every command received ("exec" or "shell"); `delay()` is the device's current
    injected latency in seconds.
    """

    def factory() -> asyncssh.SSHServer:
        return _Auth(get())

    def process(p: asyncssh.SSHServerProcess) -> asyncio.Task:
        return _track(asyncio.ensure_future(_session(get(), p, log, delay)))

    return await asyncssh.create_server(
        factory, host, port, server_host_keys=[host_key()], process_factory=process,
        keepalive_interval=0, encoding="utf-8", line_editor=True)


class SshListeners:
    """The SSH listeners of one platform service (one per device), started and stopped together."""

    def __init__(self) -> None:
        self.servers: list[asyncssh.SSHAcceptor] = []

    async def start(self, devices: Mapping[str, ShellDevice], platform: str, ctx: LabContext) -> dict[str, dict]:
        """Serve every device on its lab port; returns the address-map entries.

        `devices` is read per connection, so a service that refills it on reset serves the new objects."""
        out = {}
        for name, device in sorted(devices.items()):
            server = await serve(functools.partial(devices.__getitem__, name), "127.0.0.1", ctx.port(name),
                                 functools.partial(_log_to, ctx, name), functools.partial(ctx.latency_s, name))
            self.servers.append(server)
            out[name] = {"host": "127.0.0.1", "port": server.sockets[0].getsockname()[1], "protocol": "ssh",
                         "platform": platform, "username": device.user}
        return out

    async def stop(self) -> None:
        for server in self.servers:
            server.close()
            await server.wait_closed()
        self.servers = []
        await close_sessions()
