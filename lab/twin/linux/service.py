"""PlatformService for Linux GPU servers: one LinuxHost + one SSH listener (127.0.0.1) per node.

Needs the compiled intent for the NICs: the lab runner sets `ctx.intent` (FabricIntent).
"""

from __future__ import annotations

from lab.twin.linux import shell, sshd
from lab.twin.linux.host import LinuxHost
from lab.twin.platforms import LOOPBACK, LabContext
from lab.twin.topology import Node


class LinuxService:
    platform = "linux"

    def __init__(self, ctx: LabContext, nodes: list[Node]) -> None:
        self.ctx, self.nodes = ctx, nodes
        self.hosts: dict[str, LinuxHost] = {}
        self.listeners: dict[str, float] = {}     # perftest servers: NIC address -> expiry
        self.servers: list = []

    def load(self) -> None:
        intent = getattr(self.ctx, "intent", None)
        if intent is None:
            raise RuntimeError("LinuxService needs ctx.intent (the FabricIntent) for the GPU NICs")
        creds = self.ctx.credentials.get("linux")
        for n in self.nodes:
            host = LinuxHost(intent.devices[n.name], intent, self.ctx.fabric, self.listeners)
            if creds:
                host.user, host.password = creds
            self.hosts[n.name] = host

    async def start(self) -> dict[str, dict]:
        out = {}
        for name, host in sorted(self.hosts.items()):
            server = await sshd.serve(host, LOOPBACK, self.ctx.port(name),
                                     lambda kind, cmd, name=name: self.ctx.log(name, kind, cmd))
            self.servers.append(server)
            out[name] = {"host": LOOPBACK, "port": server.sockets[0].getsockname()[1], "protocol": "ssh",
                         "platform": "linux", "username": host.user}
        return out

    async def stop(self) -> None:
        for s in self.servers:
            s.close()
            await s.wait_closed()
        self.servers = []
        await sshd.close_sessions()

    def save(self) -> None:
        """Servers keep their intent-derived state; nothing to persist."""

    def apply_drift(self, node: str, lines: list[str]) -> None:
        for line in lines:
            shell.execute(self.hosts[node], line)

    def tick(self) -> None:
        """No timers on servers."""
