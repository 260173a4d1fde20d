"""PlatformService for SONiC: one SonicDevice + one SSH listener (127.0.0.1) per node."""

from __future__ import annotations

from lab.twin.linux import sshd
from lab.twin.platforms import LOOPBACK, LabContext
from lab.twin.sonic.device import SonicDevice
from lab.twin.topology import Node


class SonicService:
    platform = "sonic"

    def __init__(self, ctx: LabContext, nodes: list[Node]) -> None:
        self.ctx, self.nodes = ctx, nodes
        self.devices: dict[str, SonicDevice] = {}
        self.servers: list = []

    def load(self) -> None:
        creds = self.ctx.credentials.get("sonic")
        for n in self.nodes:
            dev = SonicDevice(n, self.ctx.fabric, self.ctx.device_dir(n.name) / "sonic.json", self.ctx.boot_time)
            if creds:
                dev.user, dev.password = creds
            self.devices[n.name] = dev

    async def start(self) -> dict[str, dict]:
        out = {}
        for name, dev in sorted(self.devices.items()):
            server = await sshd.serve(dev, LOOPBACK, self.ctx.port(name),
                                     lambda kind, cmd, name=name: self.ctx.log(name, kind, cmd))
            self.servers.append(server)
            port = server.sockets[0].getsockname()[1]
            out[name] = {"host": LOOPBACK, "port": port, "protocol": "ssh", "platform": "sonic",
                         "username": dev.user}
        return out

    async def stop(self) -> None:
        for s in self.servers:
            s.close()
            await s.wait_closed()
        self.servers = []
        await sshd.close_sessions()

    def save(self) -> None:
        for dev in self.devices.values():
            dev.save()

    def apply_drift(self, node: str, lines: list[str]) -> None:
        """Drift on SONiC: each line is a `config` command run outside nr-run (e.g. `config apply-patch`)."""
        from lab.twin.linux import shell
        dev = self.devices[node]
        for line in lines:
            shell.execute(dev, line)

    def tick(self) -> None:
        for dev in self.devices.values():
            dev.tick()
