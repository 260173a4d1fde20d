"""PlatformService for SONiC: one SonicDevice + one SSH listener (127.0.0.1) per node."""

from __future__ import annotations

from nr_run.lab.twin.faults import FaultError
from nr_run.lab.twin.linux import sshd
from nr_run.lab.twin.platforms import LabContext
from nr_run.lab.twin.sonic.device import SonicDevice
from nr_run.lab.twin.topology import Node


class SonicService:
    platform = "sonic"

    def __init__(self, ctx: LabContext, nodes: list[Node]) -> None:
        self.ctx, self.nodes = ctx, nodes
        self.devices: dict[str, SonicDevice] = {}
        self.listeners_ssh = sshd.SshListeners()

    def load(self) -> None:
        creds = self.ctx.credentials.get("sonic")
        for n in self.nodes:
            dev = SonicDevice(n, self.ctx.fabric, self.ctx.device_dir(n.name) / "sonic.json", self.ctx.boot_time)
            if creds:
                dev.user, dev.password = creds
            self.devices[n.name] = dev

    async def start(self) -> dict[str, dict]:
        return await self.listeners_ssh.start(self.devices, "sonic", self.ctx)

    async def stop(self) -> None:
        await self.listeners_ssh.stop()

    def reset(self) -> None:
        """Reload every device from its persisted file (a lab reset rewrote or removed it)."""
        self.devices.clear()
        self.load()

    def save(self) -> None:
        for dev in self.devices.values():
            dev.save()

    def apply_drift(self, node: str, lines: list[str]) -> None:
        """Drift on SONiC: each line is a `config` command run outside nr-run (e.g. `config apply-patch`)."""
        from nr_run.lab.twin.linux import shell
        dev = self.devices[node]
        for line in lines:
            rc, out, err = shell.execute(dev, line)
            if rc:
                raise FaultError(f"drift: {node}: `{line}` failed (exit {rc}): {(err or out).strip()}")

    def reboot(self, node: str) -> None:
        self.devices[node].reboot()

    def tick(self) -> None:
        for dev in self.devices.values():
            dev.tick()
