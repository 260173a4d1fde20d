"""The EOS platform service: every EOS node of the lab, eAPI over HTTPS (and plain HTTP)."""

from __future__ import annotations

import json
import socket

from aiohttp import web

from nr_run.lab.twin.eos.config import ConfigError, parse
from nr_run.lab.twin.eos.device import EosDevice, day0_config
from nr_run.lab.twin.eos.server import make_app
from nr_run.lab.twin.eos.syntax import hash_secrets
from nr_run.lab.twin.faults import FaultError
from nr_run.lab.twin.platforms import LOOPBACK, LabContext
from nr_run.lab.twin.topology import Node

HTTP_CHANNEL = 1     # plain-HTTP eAPI listens on ctx.port(node, HTTP_CHANNEL)


def _listen(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((LOOPBACK, port))
    sock.listen(64)
    sock.setblocking(False)
    return sock


def with_ports(config: str, ports: tuple[str, ...]) -> str:
    """A booted config: EOS lists every front-panel interface in its running config, configured or not."""
    tree = parse(config)
    tree.reset_cursor()
    for port in ports:
        if tree.root.child(f"interface {port}") is None:
            tree.apply(f"interface {port}")
            tree.apply("exit")
    tree.reset_cursor()
    return tree.render()


class EosService:
    def __init__(self, ctx: LabContext, nodes: list[Node]) -> None:
        self.ctx = ctx
        self.nodes = nodes
        self.devices: dict[str, EosDevice] = {}
        self._dirty: set[str] = set()
        self._runner: web.AppRunner | None = None
        self._by_port: dict[int, EosDevice] = {}

    # ---- persistence ---------------------------------------------------------------------------
    def load(self) -> None:
        for node in self.nodes:
            d = self.ctx.device_dir(node.name)
            running_p, startup_p, flash_p = d / "running-config", d / "startup-config", d / "flash.json"
            startup = startup_p.read_text() if startup_p.exists() else None
            running = running_p.read_text() if running_p.exists() else startup
            if running is None:     # first boot: the topology's startup-config, else cEOS's own day 0
                startup = hash_secrets(node.startup_config) if node.startup_config is not None else None
                running = with_ports(startup, node.ports) if startup is not None else \
                    day0_config(node.name, node.mgmt_prefix, list(node.ports))
            files = json.loads(flash_p.read_text()) if flash_p.exists() else {}
            dev = EosDevice(node.name, self.ctx.fabric, running, startup, files, self.ctx.boot_time,
                            on_change=self._mark)
            sessions_p = d / "sessions.json"
            if sessions_p.exists():     # pending sessions and commit timers outlive a twin restart
                dev.restore_sessions(json.loads(sessions_p.read_text()))
            self.devices[node.name] = dev
            if not running_p.exists():
                self._dirty.add(node.name)

    def reset(self) -> None:
        """Reload every device from its persisted files (a lab reset rewrote or removed them)."""
        self.devices.clear()
        self._dirty.clear()
        self.load()
        for port, old in list(self._by_port.items()):
            self._by_port[port] = self.devices[old.name]
        self.save()

    def _mark(self, dev: EosDevice) -> None:
        self._dirty.add(dev.name)
        self.save()
        if self.ctx.on_change:
            self.ctx.on_change()

    def save(self) -> None:
        for name in sorted(self._dirty):
            dev = self.devices[name]
            d = self.ctx.device_dir(name)
            (d / "running-config").write_text(dev.render_running())
            (d / "startup-config").write_text(dev.startup)
            (d / "flash.json").write_text(json.dumps(dev.files, indent=1, sort_keys=True))
            (d / "sessions.json").write_text(json.dumps(dev.sessions_state(), indent=1, sort_keys=True))
        self._dirty.clear()

    # ---- serving -------------------------------------------------------------------------------
    def tick(self) -> None:
        for dev in self.devices.values():
            if dev.timer:
                dev.tick()

    async def start(self) -> dict[str, dict]:
        app = make_app(self.ctx, self._by_port, self.tick)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        entries: dict[str, dict] = {}
        for node in self.nodes:
            dev = self.devices[node.name]
            https = _listen(self.ctx.port(node.name))
            http = _listen(self.ctx.port(node.name, HTTP_CHANNEL))
            for sock, tls in ((https, self.ctx.ssl_context), (http, None)):
                self._by_port[sock.getsockname()[1]] = dev
                await web.SockSite(self._runner, sock, ssl_context=tls).start()
            entries[node.name] = {"host": LOOPBACK, "port": https.getsockname()[1], "protocol": "https",
                                  "http_port": http.getsockname()[1], "platform": "eos"}
        return entries

    async def stop(self) -> None:
        self._dirty.update(self.devices)      # sessions opened since the last change are kept too
        self.save()
        if self._runner:
            await self._runner.cleanup()
            self._runner = None

    def apply_drift(self, node: str, lines: list[str]) -> None:
        try:
            self.devices[node].apply_drift(lines)
        except ConfigError as exc:      # the lines before the refused one stay applied, as typed into the CLI
            raise FaultError(f"drift: {node}: {exc.args[0]}") from None

    def reboot(self, node: str) -> None:
        dev = self.devices[node]
        ports = next(n.ports for n in self.nodes if n.name == node)
        dev.reboot(with_ports(dev.startup, ports))
