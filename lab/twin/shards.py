"""A sharded twin: the site's devices served by several processes, one fabric (lab.twin.shared) behind them.

One asyncio process holds about a thousand devices before SSH banners and eAPI answers miss their deadlines;
a sharded twin splits the devices into shards, each a process that serves its own devices' endpoints on the
same ports a one-process twin gives them (base + index in the sorted node names) and computes the whole fabric
from every device's state. A device answers the same whatever the shard count: its shard holds the same
topology, the same faults and, through the board, every other device's current state.

The shards are started, fed their faults and asked to reset or save by the coordinator (lab.twin.coordinator),
the process `lab up` starts; this module is one shard's process and the plan they share.

Shard count: `--shards N` or NR_RUN_LAB_SHARDS, else one shard per DEVICES_PER_SHARD devices, at most one per
core (and 1 for a small site: one process answers it within its deadlines and starts fastest).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import pickle
import signal
import sys
from pathlib import Path
from typing import Any

from aiohttp import web

from nr_run.lab.twin.faults import CABLING_KINDS, Faults
from nr_run.lab.twin.linux import sshd
from nr_run.lab.twin.platforms import LOOPBACK
from nr_run.lab.twin.shared import Board, shard_folder
from nr_run.lab.twin.topology import Topology

DEVICES_PER_SHARD = 512
MAX_SHARDS = 64
ENV = "NR_RUN_LAB_SHARDS"
PARENT_CHECK_S = 1.0
TOPOLOGY = "topology.pickle"        # the topology as the coordinator read it, for the shards


def shard_count(devices: int, requested: int | None = None) -> int:
    """How many shards serve a site of `devices` devices: the request, else NR_RUN_LAB_SHARDS, else automatic."""
    if requested is None and os.environ.get(ENV):
        raw = os.environ[ENV]
        if not (raw.isascii() and raw.isdigit()):
            raise ValueError(f"{ENV}={raw!r}: a whole number of shards (1 to {MAX_SHARDS})")
        requested = int(raw)
    if requested is not None:
        if not 1 <= requested <= MAX_SHARDS:
            raise ValueError(f"shards {requested}: 1 to {MAX_SHARDS}")
        return max(1, min(requested, devices))
    return max(1, min(os.cpu_count() or 1, math.ceil(devices / DEVICES_PER_SHARD)))


def assign(topology: Topology, count: int) -> list[list[str]]:
    """The devices of each shard: every platform dealt round-robin in name order, so shards carry alike loads
    (a shard of only spines or only servers would be the slow one)."""
    groups: list[list[str]] = [[] for _ in range(count)]
    order = sorted(topology.nodes.values(), key=lambda n: (n.platform, -len(n.ports), n.name))
    for i, node in enumerate(order):
        groups[i % count].append(node.name)
    return [sorted(g) for g in groups]


def _write_json(path: Path, doc: dict) -> None:
    """Written whole or not at all: another process polls for the file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True))
    tmp.replace(path)


# ---- one shard -----------------------------------------------------------------------------------
def _shard_app(lab: Any) -> web.Application:
    """The coordinator's channel to a shard (loopback, ephemeral port, announced in shards/shard-N.json)."""
    from nr_run.lab.twin.faults import FaultError

    async def sync(request: web.Request) -> web.Response:
        lab.fabric.sync()
        return web.json_response({"ok": True})

    async def faults(request: web.Request) -> web.Response:
        body = await request.json()
        _install_faults(lab, body)
        return web.json_response({"ok": True})

    async def action(request: web.Request) -> web.Response:
        body = await request.json()
        try:
            return web.json_response(lab._fault(body["kind"], dict(body.get("params") or {})))
        except (FaultError, ValueError, KeyError) as e:
            return web.json_response({"error": str(e)})

    async def reset_begin(request: web.Request) -> web.Response:
        lab.fabric.sync()           # what the others published before the reset is read now, never after it
        sshd.drop_connections()
        lab.fabric.clear_traffic()
        dict.clear(lab.fabric.rdma_listeners)
        return web.json_response({"ok": True})

    async def reset_end(request: web.Request) -> web.Response:
        _install_faults(lab, await request.json())
        with lab._batch():
            for svc in lab.services.values():
                svc.reset()
        return web.json_response({"ok": True})

    async def save(request: web.Request) -> web.Response:
        for svc in lab.services.values():
            svc.save()
        return web.json_response({"ok": True})

    app = web.Application(client_max_size=64 * 1024 * 1024)
    for path, handler in (("/sync", sync), ("/faults", faults), ("/action", action), ("/reset-begin", reset_begin),
                          ("/reset-end", reset_end), ("/save", save)):
        app.router.add_post(path, handler)
    return app


def _cabling(faults: Faults) -> list[tuple]:
    """What the fabric's cached views read of the faults (a latency fault keeps them)."""
    return [(f.kind, sorted(f.params.items()), f.since, f.until) for f in faults.items + faults.ended
            if f.kind in CABLING_KINDS]


def _install_faults(lab: Any, body: dict) -> None:
    """The coordinator's fault list, as it is (same injection times), in place of the shard's."""
    new = Faults.from_json(body.get("faults") or [], body.get("ended") or [])
    cabling_before = _cabling(lab.faults)
    lab.faults.items, lab.faults.ended = new.items, new.ended
    lab.faults.version += 1
    lab.faults.cabling_version += _cabling(lab.faults) != cabling_before
    lab.fabric.track_sessions()
    sshd.drop_connections(only_unreachable=True)


async def serve_shard(args: argparse.Namespace) -> None:
    """One shard in the foreground: its devices, its channel to the coordinator; stops on SIGTERM or when the
    coordinator is gone."""
    from nr_run.lab.twin.lab import Lab

    sd = Path(args.state_dir)
    with open(shard_folder(sd) / TOPOLOGY, "rb") as fh:       # the coordinator's reading of the file
        topology = pickle.load(fh)  # noqa: S301 (written by this lab's coordinator, in its private state folder)
    board = Board(sd, args.index, args.count)
    lab = Lab(args.topology, sd, base_port=args.base_port, board=board, only=assign(topology, args.count)[args.index],
              topology=topology)
    await lab.start_async()
    lab.loop = asyncio.get_running_loop()
    runner = web.AppRunner(_shard_app(lab), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, LOOPBACK, 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    _write_json(shard_folder(sd) / f"shard-{args.index}.json",
                {"pid": os.getpid(), "control_port": port, "addresses": lab.addresses})
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    parent = os.getppid()
    while not stop.is_set() and os.getppid() == parent:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), PARENT_CHECK_S)
    await runner.cleanup()
    await lab.stop_async()
    board.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m nr_run.lab.twin.shards")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("shard", help="serve one shard of a sharded twin (started by its coordinator)")
    s.add_argument("--topology", required=True)
    s.add_argument("--state-dir", required=True)
    s.add_argument("--base-port", type=int, required=True)
    s.add_argument("--index", type=int, required=True)
    s.add_argument("--count", type=int, required=True)
    args = p.parse_args(argv)
    asyncio.run(serve_shard(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
