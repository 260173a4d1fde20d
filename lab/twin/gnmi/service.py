"""The lab's gNMI listeners: one grpc.aio server per switch, TLS with the lab's certificate.

A server costs well under a millisecond to start and listens on ctx.port(node, GNMI_CHANNEL), so gNMI adds
nothing noticeable to the twin's start-up; grpc is imported only when the lab serves a switch.
"""

from __future__ import annotations

from typing import Any

from nr_run.lab.twin.personality import GNMI_CHANNEL, personality
from nr_run.lab.twin.platforms import LOOPBACK, LabContext
from nr_run.lab.twin.tls import ensure_cert

__all__ = ["GNMI_CHANNEL", "GnmiService"]


class GnmiService:
    def __init__(self, ctx: LabContext, services: dict[str, Any]) -> None:
        self.ctx = ctx
        self.services = services            # platform -> its PlatformService (SONiC's devices hold CONFIG_DB)
        self._servers: list[Any] = []

    def _device(self, name: str, platform: str) -> Any:
        from nr_run.lab.twin.gnmi.server import Device

        return Device(name, personality(platform), self.ctx.fabric, self.ctx.credentials.get(platform),
                      self.services.get(platform))

    async def start(self) -> dict[str, int]:
        """Serve every served node whose personality has gNMI models; returns node -> gNMI port."""
        nodes = [n for svc in self.services.values() for n in svc.nodes if personality(n.platform).gnmi_models]
        if not nodes:
            return {}
        import grpc
        from pygnmi.spec.v080 import gnmi_pb2_grpc

        from nr_run.lab.twin.gnmi.server import GnmiServicer

        cert, key = ensure_cert(self.ctx.state_dir / "tls")
        creds = grpc.ssl_server_credentials([(key.read_bytes(), cert.read_bytes())])
        ports: dict[str, int] = {}
        for node in sorted(nodes, key=lambda n: n.name):
            server = grpc.aio.server()
            gnmi_pb2_grpc.add_gNMIServicer_to_server(GnmiServicer(self._device(node.name, node.platform)), server)
            port = server.add_secure_port(f"{LOOPBACK}:{self.ctx.port(node.name, GNMI_CHANNEL)}", creds)
            if not port:
                raise OSError(f"gNMI port {self.ctx.port(node.name, GNMI_CHANNEL)} of {node.name} is in use")
            await server.start()
            self._servers.append(server)
            ports[node.name] = port
        return ports

    async def stop(self) -> None:
        for server in self._servers:
            await server.stop(None)
        self._servers.clear()
