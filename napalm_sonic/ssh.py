"""The driver's SSH transport: one paramiko connection, every command on its own exec channel.

No interactive shell: opening is one SSH handshake (netmiko's session preparation, prompt detection and buffer
clearing cost several round trips per switch), and each command returns its real exit status. Host keys are
checked against ~/.ssh/known_hosts (plus `alt_key_file` when `alt_host_keys`) unless checking is turned off
explicitly; an unknown key is refused, never learned.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from dataclasses import dataclass
from typing import Any

import paramiko

# How often a channel is polled for output while a command runs
POLL_S = 0.005
# A command's output held in memory at most (a large switch's `show runningconfiguration all` is a few MB);
# a device that sends more is refused rather than allowed to exhaust this process' memory
MAX_OUTPUT = 256 * 2**20
# how often an idle session's reader thread checks for a close (each wake-up takes the GIL from the threads
# doing the work; close() shuts the socket, which wakes it at once)
IDLE_WAKE_S = 10.0


@dataclass(frozen=True)
class SshOptions:
    """Connection settings, named as netmiko's ConnectHandler names them (so inventories keep working)."""

    port: int = 22
    strict: bool = True                 # reject host keys that are not known
    alt_host_keys: bool = False         # also trust the known-hosts file `alt_key_file`
    alt_key_file: str = ""
    use_keys: bool = False              # public-key login (key_file, else ~/.ssh/id_*)
    key_file: str | None = None
    passphrase: str | None = None
    allow_agent: bool = False
    ssh_config_file: str | None = None  # ProxyCommand / single-hop ProxyJump and HostName from an ssh_config
    conn_timeout: float = 10.0
    banner_timeout: float = 15.0
    auth_timeout: float | None = None

    @classmethod
    def pop_from(cls, args: dict[str, Any], strict: bool, port: int) -> SshOptions:
        """Take the options this transport knows out of a NAPALM optional_args dict."""
        def take(name: str, default: Any) -> Any:
            value = args.pop(name, default)
            return default if value is None else value
        auth = args.pop("auth_timeout", None)
        return cls(port=port, strict=strict, alt_host_keys=bool(take("alt_host_keys", False)),
                   alt_key_file=str(take("alt_key_file", "")), use_keys=bool(take("use_keys", False)),
                   key_file=args.pop("key_file", None), passphrase=args.pop("passphrase", None),
                   allow_agent=bool(take("allow_agent", False)), ssh_config_file=args.pop("ssh_config_file", None),
                   conn_timeout=float(take("conn_timeout", 10.0)), banner_timeout=float(take("banner_timeout", 15.0)),
                   auth_timeout=float(auth) if auth is not None else None)


class _AcceptUnknown(paramiko.MissingHostKeyPolicy):
    """Host keys not checked (an explicit insecure/lab choice): accept an unknown key without saving it."""

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        return None


def _via_ssh_config(path: str, host: str, port: int) -> tuple[str, int, Any]:
    """(hostname, port, proxy socket or None) from an ssh_config's entry for `host`."""
    full = os.path.abspath(os.path.expanduser(path))
    if not os.path.exists(full):
        return host, port, None
    config = paramiko.SSHConfig.from_path(full)
    entry = config.lookup(host)
    target = entry.get("hostname", host)
    if port == 22 and "port" in entry:
        port = int(entry["port"])
    if "proxycommand" in entry:
        return target, port, paramiko.ProxyCommand(entry["proxycommand"])
    if "proxyjump" in entry:
        hops = entry["proxyjump"].split(",")
        if len(hops) > 1:
            raise ValueError("ProxyJump with more than one hop is not supported")
        return target, port, paramiko.ProxyCommand(f"ssh -F {full} -W {target}:{port} {hops[0]}")
    return target, port, None


def connect(hostname: str, username: str, password: str, options: SshOptions) -> paramiko.SSHClient:
    """An authenticated SSH client; paramiko's exceptions pass through (the caller wraps them)."""
    client = paramiko.SSHClient()
    if options.strict:
        client.load_system_host_keys()
        if options.alt_host_keys and options.alt_key_file:
            client.load_host_keys(os.path.expanduser(options.alt_key_file))
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
    else:
        client.set_missing_host_key_policy(_AcceptUnknown())
    host, port, sock = hostname, options.port, None
    if options.ssh_config_file:
        host, port, sock = _via_ssh_config(options.ssh_config_file, hostname, options.port)
    try:
        client.connect(host, port=port, username=username, password=password, sock=sock,
                       look_for_keys=options.use_keys and not options.key_file, key_filename=options.key_file,
                       passphrase=options.passphrase, allow_agent=options.allow_agent,
                       timeout=options.conn_timeout, banner_timeout=options.banner_timeout,
                       auth_timeout=options.auth_timeout)
    except BaseException:
        client.close()
        raise
    transport = client.get_transport()
    if transport is not None and isinstance(transport.sock, socket.socket):
        # paramiko's reader thread wakes every 0.1 s to notice a close; a collection keeps one session per switch
        # open for its whole run, so wake it less often (packets still wake it at once; close() shuts it down)
        transport.sock.settimeout(IDLE_WAKE_S)
    return client


def close(client: paramiko.SSHClient) -> None:
    """Close the session, shutting its socket first: that wakes the reader thread at once, where a closed socket
    would leave it waiting up to IDLE_WAKE_S."""
    transport = client.get_transport()
    if transport is not None and isinstance(transport.sock, socket.socket):
        with contextlib.suppress(OSError):        # already closed by the far end
            transport.sock.shutdown(socket.SHUT_RDWR)
    client.close()


def run(client: paramiko.SSHClient, command: str, stdin: str | None, timeout: float) -> tuple[int, str]:
    """Run one command on a new exec channel: (exit status, stdout followed by stderr).
    TimeoutError if it has not exited within `timeout` seconds."""
    transport = client.get_transport()
    if transport is None or not transport.is_active():
        raise EOFError("the SSH session is closed")
    channel = transport.open_session(timeout=timeout)
    channel.settimeout(timeout)
    try:
        channel.exec_command(command)
        if stdin is not None:
            channel.sendall(stdin.encode())
            channel.shutdown_write()
        out, err = bytearray(), bytearray()
        deadline = time.monotonic() + timeout
        # to the end of the output (EOF), not to the exit status: a server may send the status while output is
        # still queued behind this client's receive window, and stopping there cuts the reply
        while not ((channel.eof_received or channel.closed)
                   and not channel.recv_ready() and not channel.recv_stderr_ready()):
            busy = False
            while channel.recv_ready():
                out += channel.recv(65536)
                busy = True
            while channel.recv_stderr_ready():
                err += channel.recv_stderr(65536)
                busy = True
            if len(out) + len(err) > MAX_OUTPUT:
                raise OSError(f"{command!r} sent more than {MAX_OUTPUT:,} bytes of output")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{command!r} timed out after {timeout:g} s")
            if not busy:
                time.sleep(POLL_S)
        if not channel.status_event.wait(max(0.0, deadline - time.monotonic())):
            raise TimeoutError(f"{command!r} sent no exit status within {timeout:g} s")
        return channel.exit_status, (out + err).decode(errors="replace")
    finally:
        channel.close()
