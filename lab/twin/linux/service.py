"""PlatformService for Linux GPU servers: one LinuxHost + one SSH listener (127.0.0.1) per node.

Each server boots with its cabled NICs set up by the node's containerlab `exec` commands.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys

from nr_run.lab.twin.linux import shell, sshd
from nr_run.lab.twin.linux.host import LinuxHost
from nr_run.lab.twin.platforms import LabContext
from nr_run.lab.twin.topology import Node

TICK_S = 0.2
SAVED = "server.json"


class LinuxService:
    platform = "linux"

    def __init__(self, ctx: LabContext, nodes: list[Node]) -> None:
        self.ctx, self.nodes = ctx, nodes
        self.hosts: dict[str, LinuxHost] = {}
        self.listeners = ctx.fabric.rdma_listeners     # perftest servers: NIC address -> expiry
        self.listeners_ssh = sshd.SshListeners()
        self._ticker: asyncio.Task | None = None

    def load(self) -> None:
        """Servers boot (exec commands, boot units); a saved running state (a baseline) is then restored."""
        creds = self.ctx.credentials.get("linux")
        for n in self.nodes:
            host = LinuxHost(n, self.ctx.fabric, self.listeners)
            for error in host.boot_errors:    # containerlab logs a failed exec and goes on
                print(f"{n.name}: exec failed: {error}", file=sys.stderr)
            saved = self.ctx.state_dir / "devices" / n.name / SAVED
            if saved.is_file():
                host.restore(json.loads(saved.read_text(encoding="utf-8")))
            if creds:
                host.user, host.password = creds
            self.hosts[n.name] = host

    def reset(self) -> None:
        """Servers boot again (their exec commands); perftest servers stop listening."""
        self.listeners.clear()
        self.hosts.clear()
        self.load()

    async def start(self) -> dict[str, dict]:
        self._ticker = asyncio.get_running_loop().create_task(self._tick_forever())
        return await self.listeners_ssh.start(self.hosts, "linux", self.ctx)

    async def _tick_forever(self) -> None:
        """Servers' systemd timers fire on their own, whether or not anyone is logged in (a revert timer of a
        server nobody can reach still restores it)."""
        while True:
            await asyncio.sleep(TICK_S)
            self.tick()

    async def stop(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
            self._ticker = None
        await self.listeners_ssh.stop()
        # a server keeps running between two runs of the lab, as the switches keep their saved configs: the
        # next start of this lab's state brings back its files and NIC knobs as they were, not the factory ones
        self.save()

    def save(self) -> None:
        """Each server's files and NIC knobs as they run now (what a baseline brings back)."""
        for name, host in sorted(self.hosts.items()):
            (self.ctx.device_dir(name) / SAVED).write_text(json.dumps(host.snapshot(), sort_keys=True), encoding="utf-8")

    def apply_drift(self, node: str, lines: list[str]) -> None:
        for line in lines:
            shell.execute(self.hosts[node], line)

    def reboot(self, node: str) -> None:
        """A server boots with its cabled NICs at the vendor's defaults, keeps its disk (/etc, /var), loses /run
        and its pending timers, runs its exec commands and then its enabled boot units."""
        n = next(x for x in self.nodes if x.name == node)
        old = self.hosts[node]
        host = LinuxHost(n, self.ctx.fabric, self.listeners, disk=old.files)
        host.user, host.password = old.user, old.password
        self.hosts[node] = host

    def tick(self) -> None:
        """Fire the servers' due systemd timers."""
        for host in self.hosts.values():
            host.fire_timers()
