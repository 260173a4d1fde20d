"""How the shards of a sharded twin share one fabric: a journal per shard and a board of their lengths.

Every shard process serves only its own devices' endpoints but computes the whole fabric (links, LLDP, BGP,
routes, pause, probes) from every device's state, exactly as a one-process twin does. What changes in a shard
(a device's new DeviceState after a config change, the traffic a probe sent across cables, a perftest server
that listens or was connected to) is appended to that shard's own journal, then the journal's new length is
published on the board: one 8-byte slot per shard in a memory-mapped file of the state folder. Before a shard
answers a request (Fabric.reachable is where every eAPI, SSH and gNMI request starts) it compares the board
with what it has read and applies the other journals' new records. A shard publishes before it answers, so
whatever a client changed through one shard is seen by every shard on the client's next request.

One writer per journal and per slot: no locks. Records are pickles of the twin's own plain dataclasses; the
journals live in the lab's private state folder and are read only by the processes of the same lab.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
import shutil
import struct
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from nr_run.lab.twin.fabric import Fabric
from nr_run.lab.twin.faults import Faults
from nr_run.lab.twin.model.core import Port
from nr_run.lab.twin.state import DeviceState
from nr_run.lab.twin.topology import Topology

SLOT = struct.Struct("<Q")
FRAME = struct.Struct("<I")
BOARD = "board"


def shard_folder(state_dir: Path) -> Path:
    return state_dir / "shards"


def journal_path(folder: Path, index: int) -> Path:
    return folder / f"journal-{index}.bin"


def create_board(state_dir: Path, count: int) -> Path:
    """A fresh board and empty journals for `count` shards (what an earlier run left is dropped)."""
    folder = shard_folder(state_dir)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(mode=0o700, parents=True)
    (folder / BOARD).write_bytes(bytes(SLOT.size * count))
    for index in range(count):
        journal_path(folder, index).write_bytes(b"")
    return folder


class Board:
    """One shard's view of the board: it appends to its own journal and reads the others'."""

    def __init__(self, state_dir: Path, index: int, count: int) -> None:
        self.folder = shard_folder(state_dir)
        self.index, self.count = index, count
        self._board_file = open(self.folder / BOARD, "r+b")  # noqa: SIM115 (lives as long as the shard)
        self._map = mmap.mmap(self._board_file.fileno(), SLOT.size * count)
        self._out = open(journal_path(self.folder, index), "ab", buffering=0)  # noqa: SIM115
        self._written = self._out.seek(0, os.SEEK_END)
        self._inputs = {j: open(journal_path(self.folder, j), "rb") for j in range(count) if j != index}  # noqa: SIM115
        self._read = dict.fromkeys(self._inputs, 0)
        self._seen = b""

    def publish(self, record: tuple) -> None:
        """Append one record to this shard's journal, then announce the journal's new length."""
        data = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
        frame = memoryview(FRAME.pack(len(data)) + data)
        while frame:                    # an unbuffered write may take less than all of it
            frame = frame[self._out.write(frame) or 0:]
        self._written += FRAME.size + len(data)
        SLOT.pack_into(self._map, SLOT.size * self.index, self._written)

    def read_new(self) -> Iterator[tuple]:
        """The other shards' records published since the last call, each journal in its order."""
        raw = self._map[: SLOT.size * self.count]
        if raw == self._seen:       # the common case, a few hundred nanoseconds
            return
        self._seen = raw
        for j, fh in self._inputs.items():
            length = SLOT.unpack_from(raw, SLOT.size * j)[0]
            start = self._read[j]
            if length <= start:
                continue
            fh.seek(start)
            chunk = fh.read(length - start)
            self._read[j] = length
            pos = 0
            while pos < len(chunk):
                size = FRAME.unpack_from(chunk, pos)[0]
                pos += FRAME.size
                yield pickle.loads(chunk[pos:pos + size])  # noqa: S301 (the lab's own journals, see above)
                pos += size

    def close(self) -> None:
        self._map.close()
        self._board_file.close()
        self._out.close()
        for fh in self._inputs.values():
            fh.close()


class _Listeners(dict[str, float]):
    """perftest servers waiting for a client, published to the other shards (a client may be served there)."""

    def __init__(self, fabric: SharedFabric) -> None:
        super().__init__()
        self._fabric = fabric

    def __setitem__(self, address: str, expiry: float) -> None:
        super().__setitem__(address, expiry)
        self._fabric.publish(("listen", address, expiry))

    def pop(self, address: str, default: Any = None) -> Any:
        had = address in self
        value = super().pop(address, default)
        if had:     # the listener it consumed: another shard may read the two journals in either order
            self._fabric.publish(("unlisten", address, value))
        return value


class SharedFabric(Fabric):
    """The fabric of one shard: its own devices publish, every other device's state comes from the board."""

    def __init__(self, topology: Topology, faults: Faults, board: Board, own: Collection[str]) -> None:
        super().__init__(topology, faults)
        self.board = board
        self.own = frozenset(own)
        self._applying = False
        self.rdma_listeners = _Listeners(self)
        self._consumed: set[tuple[str, float]] = set()     # listeners a client took before their listen arrived
        self._held: set[str] | None = None      # devices whose state waits for the end of holding()

    def publish(self, record: tuple) -> None:
        if not self._applying:
            self.board.publish(record)

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """Publish each device's state once, when the block ends: a booting server sets its state after every
        line of its NIC script, hundreds of times, and only the last one matters to the other shards. For work
        that answers no client (boot, reset): a request's changes are published as they happen."""
        self._held = set()
        try:
            yield
        finally:
            held, self._held = self._held, None
            for device in sorted(held):
                self.publish(("state", device, self.states[device]))

    def set_state(self, device: str, state: DeviceState) -> None:
        super().set_state(device, state)
        if device in self.own:
            if self._held is not None:
                self._held.add(device)
            else:
                self.publish(("state", device, state))

    def record_traffic(self, crossed: list[tuple[Port, Port, int]], packets: int) -> None:
        super().record_traffic(crossed, packets)
        self.publish(("traffic", crossed, packets))

    def sync(self) -> None:
        if self._applying:
            return
        self._applying = True
        try:
            for record in self.board.read_new():
                self._apply(record)
        finally:
            self._applying = False

    def _apply(self, record: tuple) -> None:
        kind = record[0]
        if kind == "state":
            super().set_state(record[1], record[2])
        elif kind == "traffic":
            super().record_traffic(record[1], record[2])
        elif kind == "listen":
            if (record[1], record[2]) in self._consumed:
                self._consumed.discard((record[1], record[2]))
            else:
                dict.__setitem__(self.rdma_listeners, record[1], record[2])
        elif kind == "unlisten":
            if self.rdma_listeners.get(record[1]) == record[2]:
                dict.pop(self.rdma_listeners, record[1], None)
            else:
                self._consumed.add((record[1], record[2]))
