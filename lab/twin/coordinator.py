"""The coordinator of a sharded twin (lab.twin.shards): the process `lab up` starts, whose pid is the lab's.

It checks the ports, owns faults.json, starts the shards (in parallel: each loads and boots only its own
devices), has each read the others' devices, writes the address table and serves the lab's control API with a
one-process lab's routes and answers, fanning faults, clears, resets and baselines out to every shard and
answering once. A shard that dies takes the lab down: a twin missing devices would look like a smaller site.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from nr_run.lab.twin.clab import load_clab
from nr_run.lab.twin.faults import Faults, check_fault_targets
from nr_run.lab.twin.platforms import LOOPBACK
from nr_run.lab.twin.shards import PARENT_CHECK_S, TOPOLOGY, assign
from nr_run.lab.twin.shared import create_board
from nr_run.lab.twin.tls import ensure_cert

ACTIONS = ("drift", "reboot")       # faults that act on one device: its own shard runs them
SHARD_ANSWER_S = 900                # a reset of a big shard reboots thousands of devices; past this it is stuck


class ShardError(RuntimeError):
    """A shard failed to start or to answer the coordinator."""


class Coordinator:
    """Starts the shards, keeps the lab's faults, and answers the control API for all of them."""

    def __init__(self, topology_file: str | Path, state_dir: str | Path, *, base_port: int, latency_ms: int,
                 auto_port: bool, count: int) -> None:
        from nr_run.lab.twin.lab import choose_base_port

        self.source = str(Path(topology_file).resolve())
        self.topology = load_clab(self.source)
        self.site = self.topology.site
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        base_port, self.port_note = choose_base_port(self.topology, base_port, auto_port)
        self.base_port = base_port
        self.count = count
        self.groups = assign(self.topology, count)
        self.owner = {name: k for k, group in enumerate(self.groups) for name in group}
        self.faults = Faults.load(self.state_dir / "faults.json")
        if latency_ms:
            self.faults.add("latency", ms=latency_ms)
        self.faults.save(self.state_dir / "faults.json")
        ensure_cert(self.state_dir / "tls")      # once, before the shards read it
        self.procs: list[subprocess.Popen] = []
        self.ports: list[int] = []
        self.addresses: dict[str, dict] = {}
        self._http: aiohttp.ClientSession | None = None

    # ---- start and stop ------------------------------------------------------------------------
    async def start(self, timeout: float) -> None:
        folder = create_board(self.state_dir, self.count)
        with open(folder / TOPOLOGY, "wb") as fh:      # read once: a big site's file takes seconds to parse
            pickle.dump(self.topology, fh, protocol=pickle.HIGHEST_PROTOCOL)
        for k in range(self.count):
            cmd = [sys.executable, "-m", "nr_run.lab.twin.shards", "shard", "--topology", self.source,
                   "--state-dir", str(self.state_dir), "--base-port", str(self.base_port),
                   "--index", str(k), "--count", str(self.count)]
            with open(folder / f"shard-{k}.out", "ab") as out:
                self.procs.append(subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                                   cwd=str(self.state_dir)))
        deadline = time.monotonic() + timeout
        ready: dict[int, dict] = {}
        while len(ready) < self.count:
            for k, proc in enumerate(self.procs):
                if proc.poll() is not None:
                    raise ShardError(f"shard {k} exited with {proc.returncode}; see {folder / f'shard-{k}.out'}")
                if k not in ready:
                    try:
                        doc = json.loads((folder / f"shard-{k}.json").read_text())
                    except (OSError, ValueError):
                        continue
                    if doc.get("pid") == proc.pid:
                        ready[k] = doc
            if time.monotonic() > deadline:
                raise ShardError(f"shards {sorted(set(range(self.count)) - set(ready))} did not start within "
                                 f"{timeout} s")
            await asyncio.sleep(0.05)
        self.ports = [int(ready[k]["control_port"]) for k in range(self.count)]
        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=SHARD_ANSWER_S))
        await self._all("/sync", {})         # every shard reads every other shard's devices before serving
        for k in range(self.count):
            self.addresses.update(ready[k]["addresses"])
        self.addresses = dict(sorted(self.addresses.items()))
        (self.state_dir / "addresses.json").write_text(json.dumps(self.addresses, indent=1, sort_keys=True))
        (self.state_dir / "lab.json").write_text(json.dumps({"site": self.site, "note": self.port_note,
                                                             "topology": self.source, "shards": self.count}))

    async def stop(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                await asyncio.to_thread(proc.wait, 60)
            if proc.poll() is None:
                proc.kill()
        self.faults.save(self.state_dir / "faults.json")

    def failed(self) -> str | None:
        """Why the lab cannot go on (a shard exited), or None."""
        for k, proc in enumerate(self.procs):
            if proc.poll() is not None:
                return f"shard {k} exited with {proc.returncode}"
        return None

    # ---- fan-out -------------------------------------------------------------------------------
    async def _post(self, k: int, path: str, payload: dict) -> dict:
        assert self._http is not None
        try:
            return await self._post_once(k, path, payload)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ShardError(f"shard {k}: {path}: {type(exc).__name__}: {exc}") from None

    async def _post_once(self, k: int, path: str, payload: dict) -> dict:
        assert self._http is not None
        async with self._http.post(f"http://{LOOPBACK}:{self.ports[k]}{path}", json=payload) as resp:
            if resp.status != 200:
                raise ShardError(f"shard {k}: {path} answered HTTP {resp.status}")
            body: dict = await resp.json()
            return body

    async def _all(self, path: str, payload: dict) -> None:
        answers = await asyncio.gather(*(self._post(k, path, payload) for k in range(self.count)))
        errors = [a["error"] for a in answers if "error" in a]
        if errors:
            raise ShardError(errors[0])

    def _faults_doc(self) -> dict:
        from dataclasses import asdict

        return {"faults": self.faults.to_json(), "ended": [asdict(f) for f in self.faults.ended]}

    async def _push_faults(self) -> None:
        self.faults.save(self.state_dir / "faults.json")
        await self._all("/faults", self._faults_doc())

    # ---- the control API's operations ----------------------------------------------------------
    async def fault(self, kind: str, params: dict) -> dict:
        check_fault_targets(self.topology, kind, params)
        if kind in ACTIONS:
            Faults().add(kind, **dict(params))       # refused here as the one-process lab refuses it
            return await self._post(self.owner[str(params["device"])], "/action", {"kind": kind, "params": params})
        f = self.faults.add(kind, **params)
        await self._push_faults()
        return {"kind": f.kind, "params": f.params, "since": f.since}

    async def clear(self, kind: str | None, params: dict) -> int:
        n = self.faults.clear(kind, **params)
        await self._push_faults()
        return n

    async def reset(self, baseline: str | None) -> dict:
        from nr_run.lab.twin.lab import _check_baseline

        if baseline is not None:
            _check_baseline(self.state_dir, baseline)
        await self._all("/reset-begin", {})
        self.faults.forget()
        self.faults.save(self.state_dir / "faults.json")
        devices = self.state_dir / "devices"
        shutil.rmtree(devices, ignore_errors=True)
        shutil.rmtree(self.state_dir / "logs", ignore_errors=True)
        if baseline is not None:
            shutil.copytree(self.state_dir / "baselines" / baseline, devices)
        await self._all("/reset-end", self._faults_doc())
        return self.status()

    async def save_baseline(self, name: str) -> None:
        from nr_run.lab.twin.lab import _check_name

        _check_name(name)
        await self._all("/save", {})
        target = self.state_dir / "baselines" / name
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(self.state_dir / "devices", target)

    def status(self) -> dict:
        return {"site": self.site, "state_dir": str(self.state_dir), "devices": len(self.topology.nodes),
                "served": sorted(self.addresses), "faults": self.faults.to_json(), "shards": self.count}


def _coordinator_app(co: Coordinator) -> web.Application:
    """The lab's control API (the same routes and answers as a one-process lab's), fanned out to the shards."""
    from nr_run.lab.twin.faults import FaultError

    def answer(op: Callable[[dict], Awaitable[Any]]) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handler(request: web.Request) -> web.Response:
            body = await request.json() if request.can_read_body else {}
            try:
                return web.json_response(await op(body))
            except (FaultError, ValueError, KeyError, ShardError) as e:
                return web.json_response({"error": str(e)})
        return handler

    async def clear(body: dict) -> dict:
        return {"removed": await co.clear(body.get("kind"), dict(body.get("params") or {}))}

    async def baseline(body: dict) -> dict:
        await co.save_baseline(str(body.get("name", "")))
        return {"saved": body["name"]}

    async def status(body: dict) -> dict:
        return co.status()

    app = web.Application()
    app.router.add_post("/fault", answer(lambda b: co.fault(b["kind"], dict(b.get("params") or {}))))
    app.router.add_post("/clear", answer(clear))
    app.router.add_post("/reset", answer(lambda b: co.reset(b.get("baseline"))))
    app.router.add_post("/baseline", answer(baseline))
    app.router.add_get("/status", answer(status))
    return app


async def serve_coordinator(args: argparse.Namespace) -> None:
    """`lab serve --shards N` (N > 1): the shards, then the control API; stops on SIGTERM or a dead shard."""
    co = Coordinator(args.topology, args.state_dir, base_port=args.base_port, latency_ms=args.latency_ms,
                     auto_port=args.auto_port, count=args.shards)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    runner: web.AppRunner | None = None
    try:
        await co.start(args.start_timeout)
        runner = web.AppRunner(_coordinator_app(co), access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, LOOPBACK, 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        (co.state_dir / "control.json").write_text(json.dumps({"pid": os.getpid(), "control_port": port}))
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), PARENT_CHECK_S)
            why = co.failed()
            if why:
                print(f"lab stopped: {why}", file=sys.stderr)
                break
    finally:
        (co.state_dir / "control.json").unlink(missing_ok=True)
        if runner is not None:
            await runner.cleanup()
        await co.stop()
