"""PlatformService for Linux GPU servers: one LinuxHost + one SSH listener (127.0.0.1) per node.

Each server boots with the NIC setup of its HostSpec (ctx.topology.hosts).
"""

from __future__ import annotations

from nr_run.lab.twin.linux import shell, sshd
from nr_run.lab.twin.linux.host import LinuxHost
from nr_run.lab.twin.platforms import LabContext
from nr_run.lab.twin.topology import Node


class LinuxService:
    platform = "linux"

    def __init__(self, ctx: LabContext, nodes: list[Node]) -> None:
        self.ctx, self.nodes = ctx, nodes
        self.hosts: dict[str, LinuxHost] = {}
        self.listeners: dict[str, float] = {}     # perftest servers: NIC address -> expiry
        self.listeners_ssh = sshd.SshListeners()

    def load(self) -> None:
        creds = self.ctx.credentials.get("linux")
        for n in self.nodes:
            spec = self.ctx.topology.hosts.get(n.name)
            if spec is None:
                raise RuntimeError(f"{n.name}: no HostSpec in the topology (a GPU server needs its NIC setup)")
            host = LinuxHost(spec, self.ctx.fabric, self.listeners)
            if creds:
                host.user, host.password = creds
            self.hosts[n.name] = host

    def reset(self) -> None:
        """Servers boot from their HostSpec again; perftest servers stop listening."""
        self.listeners.clear()
        self.hosts.clear()
        self.load()

    async def start(self) -> dict[str, dict]:
        return await self.listeners_ssh.start(self.hosts, "linux", self.ctx)

    async def stop(self) -> None:
        await self.listeners_ssh.stop()

    def save(self) -> None:
        """Servers boot from their HostSpec every time; nothing to persist."""

    def apply_drift(self, node: str, lines: list[str]) -> None:
        for line in lines:
            shell.execute(self.hosts[node], line)

    def tick(self) -> None:
        """No timers on servers."""
