"""Platform registry: how each platform's devices are served by the lab.

A platform service serves all nodes of one platform inside the lab's single asyncio loop. To add one
(e.g. `sonic`, `linux`), write a class with the PlatformService shape and register it by dotted path in
its personality (lab.twin.personality); a service that fails to import is an error (PersonalityError), never
a node the lab silently does not serve.
"""

from __future__ import annotations

import json
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from nr_run.lab.twin.fabric import Fabric
from nr_run.lab.twin.personality import load_object, personality
from nr_run.lab.twin.topology import Node, Topology

LOOPBACK = "127.0.0.1"
DEFAULT_BASE_PORT = 16000    # device i (sorted node names) listens on base + i (+ CHANNEL_STRIDE per extra channel)
CHANNEL_STRIDE = 4096        # e.g. EOS: https on base + i, plain http on base + 4096 + i


def channel_stride(devices: int) -> int:
    """Ports between two channels of one device: 4,096, or the device count when a site has more devices
    (channels must never overlap)."""
    return max(CHANNEL_STRIDE, devices)


@dataclass
class LabContext:
    """What a platform service gets from the lab."""

    topology: Topology
    fabric: Fabric
    state_dir: Path
    base_port: int = DEFAULT_BASE_PORT          # 0: ephemeral ports (tests)
    ssl_context: ssl.SSLContext | None = None   # the lab's self-signed server context
    credentials: dict[str, tuple[str, str]] = field(default_factory=dict)  # platform -> (user, password)
    boot_time: float = field(default_factory=time.time)
    on_change: Callable[[], None] | None = None  # a device's config changed (the lab persists)
    _index: dict[str, int] = field(default_factory=dict, repr=False)   # node -> its place in the sorted names

    def port(self, node: str, channel: int = 0) -> int:
        if self.base_port == 0:
            return 0
        if not self._index:
            self._index.update((name, i) for i, name in enumerate(sorted(self.topology.nodes)))
        return self.base_port + channel * channel_stride(len(self._index)) + self._index[node]

    def device_dir(self, node: str) -> Path:
        path = self.state_dir / "devices" / node
        path.mkdir(parents=True, exist_ok=True)
        return path

    def latency_s(self, node: str) -> float:
        return self.fabric.faults.latency_ms(node) / 1000.0

    def log(self, node: str, fmt: str, command: str) -> None:
        """Append one received command to logs/<node>.log (tab-separated: epoch, format, command)."""
        logs = self.state_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / f"{node}.log", "a") as fh:
            fh.write(f"{time.time():.3f}\t{fmt}\t{json.dumps(command)}\n")


MAX_PORT = 65535


class PortsBusy(OSError):
    """A lab port is taken (another lab or program listens on it)."""


def lab_ports(topology: Topology, base_port: int) -> list[int]:
    """Every port a lab on base_port listens on (each platform's channels)."""
    count = len(topology.nodes)
    channels = sorted({ch for platform in {n.platform for n in topology.nodes.values()}
                       for ch in personality(platform).channels})
    return [base_port + ch * channel_stride(count) + i for ch in channels for i in range(count)]


def busy_ports(topology: Topology, base_port: int) -> list[int]:
    """The lab ports on base_port that cannot be bound on the loopback now (a port past 65535, which a high
    base port gives the upper channels, can never be)."""
    busy = []
    for port in lab_ports(topology, base_port):
        if port > MAX_PORT:
            busy.append(port)
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((LOOPBACK, port))
            except OSError:
                busy.append(port)
    return busy


class PlatformService(Protocol):
    """Serves every node of one platform."""

    def __init__(self, ctx: LabContext, nodes: list[Node]) -> None: ...

    def load(self) -> None:
        """Read persisted configs (or build day-0 ones) and install DeviceStates into ctx.fabric."""

    async def start(self) -> dict[str, dict]:
        """Listen; return address-map entries {node: {"host", "port", "protocol", "platform", ...}}."""

    async def stop(self) -> None: ...

    def save(self) -> None:
        """Persist every device's running/startup config under ctx.device_dir(node)."""

    def reset(self) -> None:
        """Rebuild every device from what save() persisted (or day 0 where nothing is), dropping sessions and timers."""

    def apply_drift(self, node: str, lines: list[str]) -> None:
        """Apply config lines to the node's running config outside any session (drift fault)."""

    def reboot(self, node: str) -> None:
        """The node boots again: its startup config becomes the running one; sessions and timers are gone."""

    def tick(self) -> None:
        """Housekeeping before a request (e.g. expire commit timers)."""


def service_class(platform: str) -> type:
    """The service class of a platform, as its personality names it (PersonalityError if it cannot load)."""
    cls: type = load_object(personality(platform).service)
    return cls
