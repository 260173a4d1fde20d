"""The twin at 136, 1,032, 4,088 and 8,184 (4,096 switches) devices, in one process or in shards: start-up, CPU per
device, memory per shard.

A generated site (tests.sitegen: RTSWs half EOS and half SONiC, CTSWs, 1:1 GPU servers) boots its rendered
configs (switch startup configs, NIC scripts in the servers' exec), is started with `lab_up` as `nr-run lab up`
starts it, then every device is asked the same questions once through real clients (pyeapi: one eAPI request of
the workload's show commands; paramiko: one SSH exec request per command on SONiC and on a server), `--threads`
at a time. Workloads (WORKLOADS): `serve` (the device's own state), `routing` (BGP summary, a route lookup),
`check-routing` (the BGP summary and route lookups a check sends).
Twin CPU is read from /proc for the coordinator and every shard (user + system), so the clients' own CPU is not
in it; memory is each shard's resident peak (VmHWM).

Printed per run: devices, shards, start-up wall and twin CPU, sweep wall, twin CPU per device (ms), request
latency p50/p95/max beyond the injected latency, failed requests, and RSS per shard.

Usage: .venv/bin/python benchmarks/bench_twin_shards.py [--devices 136,1032,4088,8184] [--shards auto|N] [--threads 32]
       [--latency-ms 0] [--workload serve|routing] [--json]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import paramiko  # noqa: E402
import pyeapi  # noqa: E402
import yaml  # noqa: E402

from nr_run.intent import compile_site  # noqa: E402
from nr_run.lab.twin.lab import lab_down, lab_up  # noqa: E402
from nr_run.runbooks.clab import write_topology  # noqa: E402
from nr_run.runbooks.render import render_device  # noqa: E402
from tests.sitegen import generate_site  # noqa: E402

# devices -> (RTSWs, CTSWs): the 136-device site's shape (8 CTSWs, one server per RTSW) at each size; sitegen
# builds whole scalable units, so the big sizes are the nearest it can make: 1,032 for 1,040 and 4,088 for 4,096
# devices; 8,184 devices are 4,096 switches (4,088 RTSWs, 8 CTSWs) and their 4,088 servers
SHAPES = {136: (64, 8), 520: (256, 8), 1032: (512, 8), 4088: (2040, 8), 8184: (4088, 8)}
CLK = os.sysconf("SC_CLK_TCK")
# per platform: what every device is asked (one eAPI request; one SSH connection, one exec per command)
# serve: the device's own state (version, neighbours, ports, PFC and queue counters): what a shard serves;
# routing: BGP sessions and a route lookup, which the twin's BGP model answers from whole-fabric tables
WORKLOADS = {
    "serve": {"eos": ["show version", "show lldp neighbors", "show interfaces status",
                      "show priority-flow-control counters", "show interfaces counters queue"],
              "sonic": ["show lldp table", "show interfaces status", "show pfc counters"],
              "linux": ["ip -j addr show", "rdma link show", "ip -j link show"]},
    "routing": {"eos": ["show ip bgp summary", "show ip route vrf default 10.255.0.1"],
                "sonic": ["show ip bgp summary", "vtysh -c 'show ip route 10.255.0.1/32 json'"],
                "linux": ["ip -j addr show"]},
    # what a check asks a switch about routing: its BGP sessions, then one lookup per prefix it judges (a CTSW's
    # loopback, a far RTSW's loopback and host block: one request, as the collectors batch them)
    "check-routing": {"eos": ["show ip bgp summary vrf all", "show ip route vrf default 10.255.0.1/32",
                              "show ip route vrf default 10.255.0.9/32", "show ip route vrf default 10.0.0.0/24"],
                      "sonic": ["vtysh -c 'show ip bgp summary json'",
                                "vtysh -c 'show ip route 10.255.0.1/32 json' -c 'show ip route 10.255.0.9/32 json' "
                                "-c 'show ip route 10.0.0.0/24 json'"],
                      "linux": ["ip -j addr show"]},
}
CREDS = {"eos": ("admin", "admin"), "sonic": ("admin", "YourPaSsWoRd"), "linux": ("admin", "admin")}


def build(root: Path, devices: int) -> Path:
    """The site's containerlab file, every node booting its rendered config."""
    rtsw, ctsw = SHAPES[devices]
    site = generate_site(root / "inv", rtsw=rtsw, ctsw=ctsw, nics=8, site=f"gen{devices}")
    intent = compile_site(site)
    path = write_topology(intent, root / "clab")
    boot_rendered(intent, path, root / "configs")
    return path


def boot_rendered(intent: Any, path: Path, configs: Path) -> None:
    """Edit the containerlab file at `path` so every node boots its rendered config: switches from a startup
    config written into `configs`, servers from their NIC script's lines as exec commands."""
    doc = yaml.safe_load(path.read_text())
    configs.mkdir()
    for name, node in doc["topology"]["nodes"].items():
        text = render_device(intent.devices[name], intent)
        if intent.devices[name].role == "gpu":
            node["exec"] = node.get("exec", []) + [ln for ln in text.splitlines() if not ln.startswith("#")]
        else:
            (configs / name).write_text(text)
            node["startup-config"] = str(configs / name)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def twin_pids(state: Path) -> dict[str, int]:
    """The coordinator's pid and each shard's (a one-process lab is its own only shard)."""
    control = json.loads((state / "control.json").read_text())
    pids = {"coordinator": int(control["pid"])}
    for f in sorted((state / "shards").glob("shard-*.json")) if (state / "shards").is_dir() else []:
        pids[f.stem] = int(json.loads(f.read_text())["pid"])
    if len(pids) == 1:
        pids = {"shard-0": pids["coordinator"]}
    return pids


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK          # utime + stime


def rss_mb(pid: int) -> tuple[float, float]:
    """(resident now, resident peak) in MiB."""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024


def ask(ep: dict, workload: str = "serve") -> tuple[float, int]:
    """One device's questions: the seconds they took and how many requests the twin delayed (raises on any
    failure). The twin holds each eAPI request and each SSH exec request for the injected latency."""
    t0 = time.perf_counter()
    platform = ep["platform"]
    cmds = WORKLOADS[workload][platform]
    if platform == "eos":
        conn = pyeapi.client.connect(transport="https", host=ep["host"], port=ep["port"], username="admin",
                                     password="admin", timeout=60)
        pyeapi.client.Node(conn).enable(cmds)
        return time.perf_counter() - t0, 1
    else:
        client = paramiko.SSHClient()
        client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        user, password = CREDS[platform]
        client.connect(ep["host"], port=ep["port"], username=user, password=password, look_for_keys=False,
                       allow_agent=False, timeout=60, banner_timeout=60, auth_timeout=60)
        try:
            for cmd in cmds:
                _, out, _ = client.exec_command(cmd, timeout=60)
                out.read()
                if out.channel.recv_exit_status():
                    raise RuntimeError(f"{cmd}: exit {out.channel.recv_exit_status()}")
        finally:
            client.close()
    return time.perf_counter() - t0, len(cmds)


def run(devices: int, shards: int | None, threads: int, latency_ms: int, workload: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-twin-") as tmp:
        root = Path(tmp)
        topo = build(root, devices)
        state = root / "lab"
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        try:
            status = lab_up(topo, state, base_port=0, latency_ms=latency_ms, shards=shards, timeout=3600)
            startup_wall = time.perf_counter() - t0
            pids = twin_pids(state)
            startup_cpu = sum(cpu_s(p) for p in pids.values())
            before = {k: cpu_s(p) for k, p in pids.items()}
            addresses = status["addresses"]
            failures: list[str] = []
            times: list[tuple[float, int]] = []
            t1 = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(threads) as pool:
                futures = {pool.submit(ask, ep, workload): name for name, ep in sorted(addresses.items())}
                for fut in concurrent.futures.as_completed(futures):
                    try:
                        times.append(fut.result())
                    except Exception as exc:  # noqa: BLE001 (counted and shown: a benchmark reports, never stops)
                        failures.append(f"{futures[fut]}: {type(exc).__name__}: {exc}"[:160])
            sweep_wall = time.perf_counter() - t1
            sweep_cpu = {k: cpu_s(p) - before[k] for k, p in pids.items()}
            memory = {k: rss_mb(p) for k, p in pids.items()}
        finally:
            lab_down(state)
    extra = sorted(t - n * latency_ms / 1000 for t, n in times)
    shard_names = [k for k in pids if k.startswith("shard")]
    return {"devices": len(addresses), "shards": len(shard_names), "load_1m": load, "workload": workload,
            "startup_wall_s": startup_wall, "startup_cpu_s": startup_cpu, "sweep_wall_s": sweep_wall,
            "twin_cpu_s": sum(sweep_cpu.values()), "cpu_ms_per_device": 1000 * sum(sweep_cpu.values()) / len(addresses),
            "latency_p50_s": statistics.median(extra) if extra else None,
            "latency_p95_s": extra[int(0.95 * (len(extra) - 1))] if extra else None,
            "latency_max_s": extra[-1] if extra else None, "failed": len(failures), "failures": failures[:5],
            "rss_mb": {k: round(v[0]) for k, v in memory.items()},
            "rss_peak_mb": {k: round(v[1]) for k, v in memory.items()}}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", default="136,1032", help=f"comma-separated sizes, of {sorted(SHAPES)}")
    ap.add_argument("--shards", default="auto", help="auto (lab_up's choice) or a number")
    ap.add_argument("--threads", type=int, default=32)
    ap.add_argument("--latency-ms", type=int, default=0)
    ap.add_argument("--workload", choices=sorted(WORKLOADS), default="serve")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    for devices in (int(d) for d in args.devices.split(",")):
        r = run(devices, None if args.shards == "auto" else int(args.shards), args.threads, args.latency_ms,
                args.workload)
        if args.json:
            print(json.dumps(r, sort_keys=True), flush=True)
            continue
        print(f"twin {r['devices']} devices, {r['shards']} shard(s), {r['workload']}, load {r['load_1m']:.1f}: start-up "
              f"{r['startup_wall_s']:.1f} s wall / {r['startup_cpu_s']:.1f} s CPU; sweep {r['sweep_wall_s']:.1f} s wall, "
              f"twin CPU {r['twin_cpu_s']:.1f} s = {r['cpu_ms_per_device']:.1f} ms per device; latency beyond the "
              f"injected p50 {r['latency_p50_s']:.3f} s p95 {r['latency_p95_s']:.3f} s max {r['latency_max_s']:.3f} s; "
              f"failed {r['failed']} {r['failures']}; RSS MiB {r['rss_mb']} (peak {r['rss_peak_mb']})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
