"""A background-thread twin lab serving the SONiC and Linux nodes of dc1 (test helper)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from nr_run.intent import compile_site
from nr_run.lab.twin.fabric import Fabric
from nr_run.lab.twin.platforms import LabContext, service_class
from nr_run.lab.twin.topology import Topology


class LabThread:
    def __init__(self, state_dir: Path, platforms: tuple[str, ...] = ("sonic", "linux")) -> None:
        self.fabric_intent = compile_site("inventory/dc1")
        topo = Topology.from_intent(self.fabric_intent)
        self.ctx = LabContext(topology=topo, fabric=Fabric(topo), state_dir=state_dir, base_port=0)
        self.ctx.intent = self.fabric_intent  # type: ignore[attr-defined]  # LinuxService reads the NICs
        self.services = []
        for p in platforms:
            cls = service_class(p)
            if cls is not None:
                self.services.append(cls(self.ctx, topo.by_platform(p)))
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.addresses: dict[str, dict] = {}

    def __enter__(self) -> LabThread:
        self.thread.start()
        for s in self.services:
            s.load()
            self.addresses.update(asyncio.run_coroutine_threadsafe(s.start(), self.loop).result(10))
        return self

    def __exit__(self, *exc: object) -> None:
        for s in self.services:
            asyncio.run_coroutine_threadsafe(s.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
