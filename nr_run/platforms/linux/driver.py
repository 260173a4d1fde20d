"""The deploy connection of a GPU server: NAPALM's configuration calls over SSH exec channels, for its RoCE NICs.

The deploy runbook changes every device through load -> compare -> commit(revert_in) -> confirm | rollback;
this driver gives a server the same calls, so a server's NICs get the switches' dry run, staged rollout, revert
timer, read-back, rollback, audit lines and marker without a host path of their own:

- running config: the NIC script (templates/linux/nic.j2) rendered from what the NICs run now (nicstate);
- commit_config(revert_in): save that running script on the host as the revert script, arm a transient systemd
  timer (`systemd-run --on-active`, systemd-run(1)) that runs it unless confirmed, then run the candidate with
  `sh -e` on the host, as one exec request: a connection lost mid-way never leaves a NIC half set, because the
  script runs to its end (or its first refused line, after which the revert script runs at once) on the host,
  and the timer restores the whole old state if nobody confirms;
- confirm_commit: stop the timer, keep the candidate as /etc/nr-run/nic.sh and enable nr-run-nic.service, the
  boot-time unit that re-applies it: none of these knobs survives a reboot or a driver reload (ip link mtu,
  dcb, mlx5 sysfs and rdma_cm configfs are all runtime state);
- rollback: run the revert script now and stop the timer.
Host paths are constants; the scripts come from the renderer (validated intent) or from the host's own state.
"""

from __future__ import annotations

import difflib
import re
import time
from collections.abc import Callable
from typing import Any

from nr_run.platforms.base import LeftUntouched
from nr_run.platforms.linux.config import LinuxConfig
from nr_run.platforms.linux.nicstate import KnobMissing, read_nics, with_mlnx_qos
from nr_run.platforms.transport import SshExec, exec_batch, exec_read, exec_start

STATE_DIR = "/var/lib/nr-run"
CANDIDATE = f"{STATE_DIR}/nic-candidate.sh"
REVERT = f"{STATE_DIR}/nic-revert.sh"
NIC_LIST = f"{STATE_DIR}/nics"               # the NICs the last deploy set: what a later read-back covers
BOOT_SCRIPT = "/etc/nr-run/nic.sh"
BOOT_UNIT = "/etc/systemd/system/nr-run-nic.service"
BOOT_UNIT_TEXT = """[Unit]
Description=RoCE NIC settings from nr-run (ip, dcb, mlx5 sysfs, rdma_cm configfs)
After=sys-kernel-config.mount systemd-modules-load.service
Before=network-online.target

[Service]
Type=oneshot
ExecStart=/bin/sh -e /etc/nr-run/nic.sh

[Install]
WantedBy=multi-user.target
"""
TIMER_PREFIX = "nr-run-revert-"
MARKS = "/run/nr-run/marks"                  # tmpfs: a reboot clears marks, as it clears a switch's session
_NIC_LINE = re.compile(r"^# (\S+) \((\S+) port (\d+)\)$", re.M)
_TIMER = re.compile(r"\b(nr-run-revert-[0-9]+)\.timer\b")
_LINK = re.compile(r"^link (\S+?)/(\d+) .*\bnetdev (\S+)", re.M)
TIMEOUT_S = 60.0


class ServerUnreachable(LeftUntouched):
    """No SSH session to the server: the deploy leaves it untouched and goes on with the others."""


class NicCommandFailed(RuntimeError):
    """A host refused a NIC command; the host's own error text is the message."""


def nics_of(script: str) -> list[tuple[str, str, int]]:
    """(netdev, rdma device, port) of each NIC a NIC script sets, from its per-NIC header line."""
    return [(m[1], m[2], int(m[3])) for m in _NIC_LINE.finditer(script)]


class NicDriver:
    """NAPALM-shaped driver of one server's RoCE NICs over a paramiko SSH client."""

    def __init__(self, client: Any, config: LinuxConfig | None = None,
                 reconnect: Callable[[], Any] | None = None) -> None:
        self.client, self.config = client, config or LinuxConfig()
        self.reconnect = reconnect      # a new SSH client, for a session the server dropped (it went away a while)
        self.candidate: str | None = None
        self.nr_run_marker: str | None = None
        self.mlnx_qos_trust: list[str] = []     # NICs whose trust state mlnx_qos sets (no dcb apptrust)

    # ------------------------------------------------------------ exec plumbing
    def _transport(self) -> Any:
        transport = self.client.get_transport()
        if (transport is None or not transport.is_active()) and self.reconnect is not None:
            self.client.close()
            self.client = self.reconnect()
            transport = self.client.get_transport()
        return transport

    def run(self, commands: list[str]) -> dict[str, str]:
        return exec_batch(self._transport(), commands, timeout=TIMEOUT_S)     # quick reads: one channel

    def sh(self, command: str, stdin: str | None = None) -> tuple[int, str]:
        channel = exec_start(self._transport(), command, timeout=TIMEOUT_S)
        if stdin is not None:
            channel.sendall(stdin.encode())
            channel.shutdown_write()
        status, text = exec_read(channel, TIMEOUT_S)
        return (status if status is not None else -1), text

    def checked(self, command: str, stdin: str | None = None) -> str:
        status, text = self.sh(command, stdin)
        if status != 0:
            first = next((ln.strip() for ln in text.splitlines() if ln.strip()), f"exit status {status}")
            raise NicCommandFailed(f"`{command.split(' <', 1)[0]}` failed on the host: {first}")
        return text

    def put(self, path: str, text: str) -> None:
        self.checked(f"cat > {path}", stdin=text)

    # ------------------------------------------------------------ reading
    def _nics(self) -> list[tuple[str, str, int]]:
        if self.candidate is not None:
            return nics_of(self.candidate)
        status, text = self.sh(f"cat {NIC_LIST}")
        if status == 0 and text.strip():
            return nics_of(text)
        return self.rdma_links()

    def rdma_links(self) -> list[tuple[str, str, int]]:
        """(netdev, rdma device, port) of every RDMA link the host reports (`rdma link show`)."""
        text = self.checked("rdma link show")
        return sorted((m[3], m[1], int(m[2])) for m in _LINK.finditer(text))

    def _verify_names(self, nics: list[tuple[str, str, int]]) -> None:
        actual = {netdev: (dev, port) for netdev, dev, port in self.rdma_links()}
        for netdev, dev, port in nics:
            if netdev not in actual:
                raise KnobMissing(f"{netdev}: no RDMA device on this netdev (`rdma link show`): not a RoCE NIC?")
            if actual[netdev] != (dev, port):
                raise KnobMissing(f"{netdev} is {actual[netdev][0]} port {actual[netdev][1]} on the host, the "
                                  f"rendered script says {dev} port {port}")

    def running(self) -> str:
        state = read_nics(self.run, self._nics())
        self.mlnx_qos_trust = list(state.get("mlnx_qos_trust", []))
        return self.config.render(state)

    # ------------------------------------------------------------ NAPALM's configuration calls
    def open(self) -> None:
        """Opened by its Nornir connection plugin."""

    def close(self) -> None:
        self.client.close()

    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False) -> dict[str, str]:
        out = {"running": "", "candidate": "", "startup": ""}
        if retrieve in ("all", "running"):
            out["running"] = self.running()
        if retrieve in ("all", "candidate"):
            out["candidate"] = self.candidate or ""
        if retrieve in ("all", "startup"):
            status, text = self.sh(f"cat {BOOT_SCRIPT}")
            out["startup"] = text if status == 0 else ""
        return out

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        if config is None:
            raise ValueError("a NIC script is loaded from text")
        nics = nics_of(config)
        if not nics:
            raise ValueError("the NIC script names no NIC")
        self._verify_names(nics)
        self.candidate = config

    load_replace_candidate = load_merge_candidate     # the script sets every knob of its NICs either way

    def compare_config(self) -> str:
        if self.candidate is None:
            return ""
        running = self.running()
        if running == self.candidate:
            return ""
        return "\n".join(difflib.unified_diff(running.splitlines(), self.candidate.splitlines(), "running",
                                              "candidate", lineterm="", n=1)) + "\n"

    def discard_config(self) -> None:
        self.candidate = None

    def pending_timers(self) -> list[str]:
        _, text = self.sh(f"systemctl list-timers --no-legend --plain '{TIMER_PREFIX}*'")
        return sorted(set(_TIMER.findall(text)))

    def has_pending_commit(self) -> bool:
        return bool(self.pending_timers())

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        if self.candidate is None:
            raise ValueError("no candidate loaded")
        backup = self.running()
        names = "".join(f"# {n} ({d} port {p})\n" for n, d, p in nics_of(self.candidate))
        self.checked(f"mkdir -p {STATE_DIR}")
        # what the host runs: the scripts with the trust line through mlnx_qos where the kernel lacks apptrust
        self.put(REVERT, with_mlnx_qos(backup, self.mlnx_qos_trust))
        self.put(CANDIDATE, with_mlnx_qos(self.candidate, self.mlnx_qos_trust))
        self.put(NIC_LIST, names)
        if revert_in:
            unit = f"{TIMER_PREFIX}{time.time_ns()}"
            self.checked(f"systemd-run --unit={unit} --on-active={int(revert_in)}s /bin/sh {REVERT}")
        status, text = self.sh(f"sh -e {CANDIDATE}")
        if status != 0:
            self.sh(f"sh {REVERT}")
            self._stop_timers()
            first = next((ln.strip() for ln in text.splitlines() if ln.strip()), f"exit status {status}")
            raise NicCommandFailed(f"the host refused the NIC script ({first}); restored the saved state")
        self.candidate = None
        if not revert_in:
            self._persist()

    def _stop_timers(self) -> None:
        for unit in self.pending_timers():
            self.sh(f"systemctl stop {unit}.timer")

    def _persist(self) -> None:
        self.checked("mkdir -p /etc/nr-run")
        self.checked(f"cp {CANDIDATE} {BOOT_SCRIPT}")
        self.put(BOOT_UNIT, BOOT_UNIT_TEXT)
        self.checked("systemctl daemon-reload")
        self.checked("systemctl enable nr-run-nic.service")

    def confirm_commit(self) -> None:
        if not self.pending_timers():
            raise NicCommandFailed("no commit is pending on the host (its revert timer fired or was stopped)")
        self._stop_timers()
        self._persist()

    def rollback(self) -> None:
        self.checked(f"sh {REVERT}")
        self._stop_timers()

    # ------------------------------------------------------------ deploy markers (nr_run.platforms.linux.marker)
    def list_marks(self) -> list[str]:
        status, text = self.sh(f"ls {MARKS}")
        return sorted(text.split()) if status == 0 else []


class NicConnection:
    """Nornir connection plugin `nr_run_nic`: an SSH exec client wrapped in a NicDriver."""

    def open(self, hostname: str | None, username: str | None, password: str | None, port: int | None,
             platform: str | None, extras: dict[str, Any] | None = None, configuration: Any = None) -> None:
        def connect() -> Any:
            import paramiko  # on use: the CLI's start-up does not pay for it

            ssh = SshExec()
            try:
                ssh.open(hostname, username, password, port, platform, extras, configuration)
            except (OSError, EOFError, paramiko.SSHException) as exc:
                if isinstance(exc, paramiko.AuthenticationException):
                    raise           # wrong credentials: every server would say so, the rollout stops
                raise ServerUnreachable(f"the server does not answer over SSH ({exc or type(exc).__name__}): "
                                        "left untouched") from exc
            return ssh.connection

        self.connection = NicDriver(connect(), reconnect=connect)

    def close(self) -> None:
        self.connection.close()
