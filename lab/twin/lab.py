"""The lab: every device of a site served in one asyncio loop, with persistence and faults.

The twin serves a containerlab topology file (lab.twin.clab reads it), nothing else.
In-process use (tests):     lab = Lab("dc1.clab.yml", state_dir, base_port=0); lab.start(); ...; lab.stop()
                            lab.start(control=True) also serves the control API, so the CLI and other
                            processes find it through control.json like a background lab.
Background (CLI `lab up`):  lab_up(topology_file) spawns `python -m nr_run.lab.twin.lab serve ...`, writes a pid file.
Shards:                     lab_up(..., shards=N), N > 1: that process coordinates N shard processes, each serving
                            its share of the devices over one shared fabric (lab.twin.coordinator, .shards, .shared).
Ports:                      base_port N: device i (sorted names) on N + i; busy ports are refused (PortsBusy), or,
                            with auto_port, the lab falls back to free ephemeral ports and says so in status.
Reset:                      lab.reset() / lab_reset(state_dir): back to day 0 (or to a baseline saved with
                            lab.save_baseline(name)), faults cleared, client sessions dropped; a running lab
                            keeps running and keeps its ports.
State dir layout (default ./.nr-run/lab/<site>/):
  addresses.json   {host: {"host": "127.0.0.1", "port": N, "protocol": "https", "http_port": M, "platform": "eos",
                    "gnmi_port": G, "tls_ca": ".../tls/cert.pem"}} (gNMI on every EOS and SONiC node)
  control.json     {"pid": P, "control_port": C} while a background lab runs (HTTP control API)
  lab.pid          the background process id
  faults.json      active faults (kind, params, since)
  faults-ended.json cleared counter/link faults (their counts stay on the counters until a reset)
  devices/<host>/  running-config, startup-config, flash.json (EOS); other platforms add their own files
  logs/<host>.log  every command received: epoch<TAB>format<TAB>json-quoted command
  baselines/<name>/ saved copies of devices/ that reset(baseline=name) restores
  tls/             the lab's self-signed cert.pem / key.pem
  shards/          a sharded lab's board, journals and shard-N.json / shard-N.out (lab.twin.shared)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web

from nr_run.lab.twin.clab import load_clab
from nr_run.lab.twin.fabric import Fabric
from nr_run.lab.twin.faults import Faults, check_fault_targets
from nr_run.lab.twin.gnmi.service import GnmiService
from nr_run.lab.twin.linux import sshd
from nr_run.lab.twin.personality import all_personalities
from nr_run.lab.twin.platforms import (
    DEFAULT_BASE_PORT,
    LOOPBACK,
    MAX_PORT,
    LabContext,
    PlatformService,
    PortsBusy,
    busy_ports,
    service_class,
)
from nr_run.lab.twin.shared import Board, SharedFabric
from nr_run.lab.twin.status import alive, default_state_dir, lab_status, read_json
from nr_run.lab.twin.tls import server_context
from nr_run.lab.twin.topology import Topology

T = TypeVar("T")
START_S_PER_DEVICE = 0.25   # how long lab_up waits at least, per device (a big site on a busy host boots for minutes)


def default_credentials() -> dict[str, tuple[str, str]]:
    """platform -> the (user, password) its image ships with."""
    return {p.platform: p.credentials for p in all_personalities()}


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class Lab:
    """A running twin of one site."""

    def __init__(self, source: str | Path, state_dir: str | Path | None = None, *,
                 base_port: int = DEFAULT_BASE_PORT, latency_ms: int = 0, auto_port: bool = False,
                 credentials: dict[str, tuple[str, str]] | None = None, board: Board | None = None,
                 only: Collection[str] | None = None, topology: Topology | None = None) -> None:
        """source: the containerlab topology file the lab serves (read once, at construction).

        board, only: one shard of a sharded twin (lab.twin.shards): serve the devices named in `only`, share
        the fabric with the other shards through `board`; the coordinator owns ports, faults.json and the
        address table, so the shard neither checks the ports nor writes them. topology: `source` already read."""
        topology = topology or load_clab(source)
        self.source = str(Path(source).resolve())
        self.site = topology.site
        self.topology = topology
        self.port_note = ""
        self.shard = board is not None
        if not self.shard:
            base_port, self.port_note = choose_base_port(topology, base_port, auto_port)
        self.state_dir = Path(state_dir) if state_dir else default_state_dir(self.site)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.faults = Faults.load(self.state_dir / "faults.json")
        if latency_ms:
            self.faults.add("latency", ms=latency_ms)
        self.fabric = Fabric(topology, self.faults) if board is None else \
            SharedFabric(topology, self.faults, board, topology.nodes if only is None else only)
        self.ctx = LabContext(topology=topology, fabric=self.fabric, state_dir=self.state_dir, base_port=base_port,
                              ssl_context=server_context(self.state_dir / "tls"),
                              credentials=dict(credentials or default_credentials()))
        served = set(topology.nodes if only is None else only)
        self.services: dict[str, PlatformService] = {}
        for platform in sorted({n.platform for n in topology.nodes.values() if n.name in served}):
            nodes = [n for n in topology.by_platform(platform) if n.name in served]
            self.services[platform] = service_class(platform)(self.ctx, nodes)
        self.gnmi = GnmiService(self.ctx, self.services)
        self.addresses: dict[str, dict] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._control: web.AppRunner | None = None

    # ---- async core ------------------------------------------------------------------------------
    async def start_async(self) -> dict[str, dict]:
        _raise_fd_limit()
        with self._batch():
            for svc in self.services.values():
                svc.load()
        for svc in self.services.values():
            self.addresses.update(await svc.start())
            svc.save()
        ca = str(self.state_dir / "tls" / "cert.pem")
        for node, port in (await self.gnmi.start()).items():
            self.addresses[node].update({"gnmi_port": port, "tls_ca": ca})
        self.addresses = dict(sorted(self.addresses.items()))
        if self.shard:       # the coordinator writes the whole lab's table
            return self.addresses
        (self.state_dir / "addresses.json").write_text(json.dumps(self.addresses, indent=1, sort_keys=True))
        (self.state_dir / "lab.json").write_text(json.dumps({"site": self.site, "note": self.port_note,
                                                                     "topology": self.source}))
        return self.addresses

    async def stop_async(self) -> None:
        if self._control is not None:
            (self.state_dir / "control.json").unlink(missing_ok=True)
            await self._control.cleanup()
            self._control = None
        await self.gnmi.stop()
        for svc in self.services.values():
            await svc.stop()
        self._save_faults()

    def _batch(self) -> contextlib.AbstractContextManager[None]:
        """Devices booting (start, reset): a shard publishes each one's state once, at the end."""
        return self.fabric.holding() if isinstance(self.fabric, SharedFabric) else contextlib.nullcontext()

    def _save_faults(self) -> None:
        if not self.shard:      # a shard's faults are the coordinator's, pushed to it
            self.faults.save(self.state_dir / "faults.json")

    async def start_control(self) -> int:
        """Serve the HTTP control API on loopback and announce it in control.json; returns its port."""
        self._control = web.AppRunner(_control_app(self), access_log=None, handle_signals=False)
        await self._control.setup()
        site = web.TCPSite(self._control, LOOPBACK, 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        (self.state_dir / "control.json").write_text(json.dumps({"pid": os.getpid(), "control_port": port}))
        return int(port)

    # ---- thread wrapper (tests, in-process use) -----------------------------------------------
    def start(self, timeout: float = 60, control: bool = False) -> dict[str, dict]:
        """Serve in a background thread; returns the address map. control: also serve the control API."""
        ready = threading.Event()
        error: list[BaseException] = []

        def run() -> None:
            self.loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self.loop)
            try:
                self.loop.run_until_complete(self.start_async())
                if control:
                    self.loop.run_until_complete(self.start_control())
            except BaseException as e:  # surfaced to the caller below
                error.append(e)
                ready.set()
                return
            ready.set()
            self.loop.run_forever()
            self.loop.run_until_complete(self.stop_async())
            self.loop.close()

        self._thread = threading.Thread(target=run, name=f"twin-{self.site}", daemon=True)
        self._thread.start()
        finished = ready.wait(timeout)
        if error:
            raise error[0]
        if not finished:  # a partial address map would look like a smaller lab
            raise TimeoutError(f"lab {self.site} did not start within {timeout} s")
        return self.addresses

    def stop(self) -> None:
        if self.loop and self._thread:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(30)
            self._thread = None

    def __enter__(self) -> Lab:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run fn inside the lab's loop thread (the fabric is single-threaded)."""
        if self.loop is None or not self.loop.is_running():
            return fn(*args, **kwargs)

        async def wrap() -> T:
            return fn(*args, **kwargs)

        return asyncio.run_coroutine_threadsafe(wrap(), self.loop).result(30)

    # ---- faults ----------------------------------------------------------------------------------
    def fault(self, kind: str, **params: object) -> dict:
        """Inject a fault (see lab.twin.faults.KINDS); `drift` edits the device's running config."""
        return self._call(self._fault, kind, params)

    def _fault(self, kind: str, params: dict) -> dict:
        check_fault_targets(self.topology, kind, params)
        f = self.faults.add(kind, **params)
        if kind in ("drift", "reboot"):
            node = self.topology.nodes[str(f.params["device"])]
            svc = self.services.get(node.platform)
            self.faults.items.remove(f)     # an action: its effect lives in the device's configs
            if svc is None:
                raise ValueError(f"{node.name}: platform {node.platform} is not served")
            if kind == "drift":
                svc.apply_drift(node.name, list(f.params["lines"]))
            else:
                if self.loop is not None and self.loop.is_running():
                    sshd.drop_connections(only_device=node.name)
                svc.reboot(node.name)
        self._save_faults()
        self.fabric.track_sessions()      # a session the fault takes down restarts its uptime when it comes back
        if kind == "unreachable" and self.loop is not None and self.loop.is_running():
            sshd.drop_connections(only_unreachable=True)
        return {"kind": f.kind, "params": f.params, "since": f.since}

    def clear_faults(self, kind: str | None = None, **params: object) -> int:
        return self._call(self._clear, kind, params)

    def _clear(self, kind: str | None, params: dict) -> int:
        n = self.faults.clear(kind, **params)
        self._save_faults()
        self.fabric.track_sessions()
        return n

    # ---- reset -----------------------------------------------------------------------------------
    def save_baseline(self, name: str) -> None:
        """Remember every device's current configuration; reset(baseline=name) brings it back."""
        self._call(self._save_baseline, name)

    def _save_baseline(self, name: str) -> None:
        _check_name(name)
        for svc in self.services.values():
            svc.save()
        target = self.state_dir / "baselines" / name
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(self.state_dir / "devices", target)

    def reset(self, baseline: str | None = None) -> dict:
        """Every device back to day 0 (or to a saved baseline), no faults, no logs, client sessions dropped."""
        if baseline is not None:
            _check_baseline(self.state_dir, baseline)
        return self._call(self._reset, baseline)

    def _reset(self, baseline: str | None) -> dict:
        if self.loop is not None and self.loop.is_running():
            sshd.drop_connections()
        self.faults.forget()
        self._save_faults()
        self.fabric.clear_traffic()
        devices = self.state_dir / "devices"
        shutil.rmtree(devices, ignore_errors=True)
        shutil.rmtree(self.state_dir / "logs", ignore_errors=True)
        if baseline is not None:
            shutil.copytree(self.state_dir / "baselines" / baseline, devices)
        for svc in self.services.values():
            svc.reset()
        return self.status()

    def status(self) -> dict:
        return {"site": self.site, "state_dir": str(self.state_dir), "devices": len(self.topology.nodes),
                "served": sorted(self.addresses), "faults": self.faults.to_json()}


def _check_name(name: str) -> None:
    if not name or not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"baseline name {name!r}: letters, digits, - and _ only")


def _check_baseline(state_dir: Path, name: str) -> None:
    """A baseline to reset to: a safe name, saved in this lab's state folder."""
    _check_name(name)
    if not (state_dir / "baselines" / name).is_dir():
        raise ValueError(f"no baseline {name!r} saved in {state_dir}")


def choose_base_port(topology: Topology, base_port: int, auto_port: bool) -> tuple[int, str]:
    """The base port to serve from and a note for the address table: `base_port` when its range is free,
    PortsBusy when it is not (unless `auto_port`: then 0, free ports, and a note saying why)."""
    busy = busy_ports(topology, base_port) if base_port else []
    if busy and not auto_port:
        raise _ports_busy(busy)
    if busy:
        return 0, (f"ports from {base_port} are in use ({busy[0]}, ...): serving on free ports, "
                   "see the address table")
    return base_port, ""


def _ports_busy(busy: list[int]) -> PortsBusy:
    beyond = [p for p in busy if p > MAX_PORT]
    if beyond:
        return PortsBusy(f"ports up to {max(beyond)} would be needed, past 65535: choose a lower --base-port, "
                         "or omit it for free ports")
    return PortsBusy(f"ports {', '.join(map(str, busy[:5]))} are in use (another lab?): choose another "
                     "--base-port, or omit it for free ports")


# ---- background process (CLI) --------------------------------------------------------------------
def lab_up(topology: str | Path, state_dir: str | Path | None = None, base_port: int = DEFAULT_BASE_PORT,
           latency_ms: int = 0, timeout: float = 60, auto_port: bool = False, shards: int | None = None) -> dict:
    """Serve a containerlab topology file as a background process (no-op if already running); returns lab_status().

    shards: processes serving the devices (lab.twin.shards; None: NR_RUN_LAB_SHARDS, else chosen from the
    site's size and the cores). The file is read (and refused) here first, so a bad file is an error of this
    call, not of the child."""
    from nr_run.lab.twin.shards import shard_count

    topology = Path(topology).resolve()
    topo = load_clab(topology)
    count = shard_count(len(topo.nodes), shards)
    timeout = max(timeout, len(topo.nodes) * START_S_PER_DEVICE)
    sd = (Path(state_dir) if state_dir else default_state_dir(topo.site)).resolve()
    sd.mkdir(parents=True, exist_ok=True)
    st = lab_status(sd)
    if st["running"]:
        return st
    if base_port and not auto_port:
        busy = busy_ports(topo, base_port)
        if busy:
            raise _ports_busy(busy)
    (sd / "control.json").unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "nr_run.lab.twin.lab", "serve", "--topology", str(topology), "--state-dir", str(sd),
           "--base-port", str(base_port), "--latency-ms", str(latency_ms), "--shards", str(count),
           "--start-timeout", str(timeout)] + (["--auto-port"] if auto_port else [])
    with open(sd / "lab.out", "ab") as out:
        # the twin serves gNMI (gRPC threads) and runs validators as subprocesses; gRPC's fork handlers, meant for
        # a fork that keeps using gRPC, can abort a child that only execs, so they stay off (the child never uses it)
        env = {**os.environ, "GRPC_ENABLE_FORK_SUPPORT": "false"}
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=str(sd),
                                env=env)
    (sd / "lab.pid").write_text(str(proc.pid))
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"lab exited with {proc.returncode}; see {sd / 'lab.out'}")
        if read_json(sd / "control.json").get("pid") == proc.pid:
            return lab_status(sd)
        time.sleep(0.1)
    raise TimeoutError(f"lab did not start within {timeout}s; see {sd / 'lab.out'}")


def lab_down(state_dir: str | Path, timeout: float = 30) -> bool:
    """Stop a background lab (state is saved); True if one was running."""
    sd = Path(state_dir)
    st = lab_status(sd)
    if not st["running"]:
        (sd / "control.json").unlink(missing_ok=True)
        return False
    if st["pid"] == os.getpid():
        raise ValueError(f"the lab in {sd} runs inside this process: stop it with Lab.stop()")
    os.kill(st["pid"], signal.SIGTERM)
    deadline = time.time() + timeout
    while time.time() < deadline and alive(st["pid"]):
        time.sleep(0.1)
    (sd / "control.json").unlink(missing_ok=True)
    (sd / "lab.pid").unlink(missing_ok=True)
    return True


def lab_reset(state_dir: str | Path, baseline: str | None = None) -> dict:
    """Back to day 0 (or a saved baseline). A running lab resets in place through its control API and keeps
    its ports; a stopped one forgets what it persisted (configs, faults, logs; keeps the TLS cert)."""
    sd = Path(state_dir)
    if lab_status(sd)["running"]:
        return _control(sd, "/reset", {"baseline": baseline})
    if baseline is not None:
        raise ValueError("a baseline can only be restored into a running lab")
    for name in ("devices", "logs"):
        shutil.rmtree(sd / name, ignore_errors=True)
    for name in ("faults.json", "faults-ended.json", "addresses.json", "lab.out"):
        (sd / name).unlink(missing_ok=True)
    return lab_status(sd)


def lab_save_baseline(state_dir: str | Path, name: str) -> None:
    """Save a running lab's device configurations as baseline `name` (lab_reset(state_dir, name) restores it)."""
    _control(Path(state_dir), "/baseline", {"name": name})


def _control(state_dir: Path, path: str, payload: dict) -> dict:
    st = lab_status(state_dir)
    req = urllib.request.Request(f"http://{LOOPBACK}:{st['control_port']}{path}", data=json.dumps(payload).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as resp:
        body = json.loads(resp.read())
    if "error" in body:
        raise ValueError(body["error"])
    return body


def lab_fault(state_dir: str | Path, kind: str, **params: object) -> dict:
    """Inject a fault into a running background lab, or persist it for the next start."""
    sd = Path(state_dir)
    if lab_status(sd)["running"]:
        return _control(sd, "/fault", {"kind": kind, "params": params})
    if kind in ("drift", "reboot"):
        raise ValueError(f"{kind} needs a running lab (it acts on a running device)")
    topology = _served_topology(sd)
    faults = Faults.load(sd / "faults.json")
    if Path(topology).exists():
        check_fault_targets(load_clab(topology), kind, params)
    f = faults.add(kind, **params)
    faults.save(sd / "faults.json")
    return {"kind": f.kind, "params": f.params, "since": f.since}


def _served_topology(sd: Path) -> str:
    """The topology file a stopped lab served (its faults apply at its next start); a lab never started has none."""
    topology = read_json(sd / "lab.json").get("topology")
    if not topology:
        raise ValueError(f"no lab in {sd}: start it first (nr-run lab up), then inject faults")
    return str(topology)


def lab_clear(state_dir: str | Path, kind: str | None = None, **params: object) -> int:
    sd = Path(state_dir)
    if lab_status(sd)["running"]:
        return int(_control(sd, "/clear", {"kind": kind, "params": params})["removed"])
    _served_topology(sd)
    faults = Faults.load(sd / "faults.json")
    n = faults.clear(kind, **params)
    faults.save(sd / "faults.json")
    return n


def _control_app(lab: Lab) -> web.Application:
    """The control API: POST /fault, /clear, /reset, /baseline; GET /status (handlers run in the lab's loop)."""

    async def fault(request: web.Request) -> web.Response:
        body = await request.json()
        try:
            return web.json_response(lab._fault(body["kind"], dict(body.get("params") or {})))
        except (ValueError, KeyError) as e:
            return web.json_response({"error": str(e)})

    async def clear(request: web.Request) -> web.Response:
        body = await request.json()
        # already on the lab's loop: its _clear directly (going through _call from here would deadlock)
        return web.json_response({"removed": lab._clear(body.get("kind"), body.get("params") or {})})

    async def reset(request: web.Request) -> web.Response:
        body = await request.json()
        baseline = body.get("baseline")
        try:
            if baseline is not None:
                _check_baseline(lab.state_dir, str(baseline))
            return web.json_response(lab._reset(baseline))
        except ValueError as e:
            return web.json_response({"error": str(e)})

    async def baseline(request: web.Request) -> web.Response:
        body = await request.json()
        try:
            lab._save_baseline(str(body.get("name", "")))
            return web.json_response({"saved": body["name"]})
        except (ValueError, KeyError) as e:
            return web.json_response({"error": str(e)})

    async def status(request: web.Request) -> web.Response:
        return web.json_response(lab.status())

    app = web.Application()
    app.router.add_post("/fault", fault)
    app.router.add_post("/clear", clear)
    app.router.add_post("/reset", reset)
    app.router.add_post("/baseline", baseline)
    app.router.add_get("/status", status)
    return app


async def _serve(args: argparse.Namespace) -> None:
    if args.shards > 1:
        from nr_run.lab.twin.coordinator import serve_coordinator

        await serve_coordinator(args)
        return
    lab = Lab(args.topology, args.state_dir, base_port=args.base_port, latency_ms=args.latency_ms,
              auto_port=args.auto_port)
    await lab.start_async()
    lab.loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    await lab.start_control()
    await stop.wait()
    await lab.stop_async()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m nr_run.lab.twin.lab")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve", help="run the twin in the foreground")
    s.add_argument("--topology", required=True, help="containerlab topology file")
    s.add_argument("--state-dir")
    s.add_argument("--base-port", type=int, default=DEFAULT_BASE_PORT)
    s.add_argument("--latency-ms", type=int, default=0)
    s.add_argument("--auto-port", action="store_true", help="fall back to free ports when the base ports are busy")
    s.add_argument("--shards", type=int, default=1, help="processes serving the devices (lab.twin.shards)")
    s.add_argument("--start-timeout", type=float, default=60, help="seconds the shards have to start")
    args = p.parse_args(argv)
    asyncio.run(_serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
