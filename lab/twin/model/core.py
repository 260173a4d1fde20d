"""The fabric model's inputs: device states, cabling, faults, and the cache every derived view shares.

Results are cached per (states version, cabling faults version): any config change, or a fault that changes
links (faults.CABLING_KINDS), drops them all; a view that reads another fault kind must not be cached.
"""

from __future__ import annotations

import time

from nr_run.lab.twin.faults import Faults
from nr_run.lab.twin.state import DeviceState
from nr_run.lab.twin.topology import Topology

Port = tuple[str, str]


class FabricCore:
    """What the fabric model is computed from, and its cache."""

    def __init__(self, topology: Topology, faults: Faults | None = None) -> None:
        self.topology = topology
        self.faults = faults or Faults()
        self.states: dict[str, DeviceState] = {}
        self._version = 0
        self._cache_key: tuple[int, int] = (-1, -1)
        self._cache: dict = {}
        self._changed_at = time.time()
        # per session (device, peer ip): (state, since); sessions a change did not touch keep their uptime
        self._session_since: dict[tuple[str, str], tuple[str, float]] = {}
        self._tracked_key: tuple[int, int] = (-1, -1)
        # (device, watermark kind) -> when the device's watermarks of that kind were last cleared
        self._wm_cleared: dict[tuple[str, str], float] = {}
        # (device, port) -> [in octets, in packets, out octets, out packets] the probes' traffic added
        self._traffic: dict[Port, list[int]] = {}
        # perftest servers listening for one RDMA client: NIC address -> expiry (any server may be the client)
        self.rdma_listeners: dict[str, float] = {}

    # ---- inputs -------------------------------------------------------------------------------
    def set_state(self, device: str, state: DeviceState) -> None:
        """Install what a device's configuration now says (called by the platform interpreters)."""
        self.states[device] = state
        self._version += 1

    def sync(self) -> None:
        """Bring in what other processes serving the same fabric changed (a sharded twin); here: nothing."""

    def state(self, device: str) -> DeviceState | None:
        return self.states.get(device)

    def _cached(self, key: str, build):
        now_key = (self._version, self.faults.cabling_version)
        if now_key != self._cache_key:
            self._cache = {}
            self._cache_key = now_key
            self._changed_at = time.time()
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

