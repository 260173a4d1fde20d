"""Bytes a check collection reads per device, at two site sizes: what a device returns must not grow with the site.

A generated site (tests/sitegen.py: 8 CTSWs, RTSWs in units of 8, 1:1 servers, every second RTSW on SONiC) is
served by a background twin, every switch is configured from its rendered config, then `run_checks` (every check
but the RDMA matrix) reads a fixed sample of devices: two EOS and two SONiC RTSWs, one CTSW, two servers. The
collectors' runners are wrapped to count what each command returns (text as UTF-8, eAPI JSON replies as compact
JSON). Per-device bytes are compared per kind of device, and as a site mean (each kind weighted by its count).

RTSWs and servers have the same ports at both sizes, so their bytes must not change; a CTSW has one port per
RTSW, so its bytes grow with the site as its port count does (one CTSW per 64 RTSWs at 512).

Usage: .venv/bin/python benchmarks/bench_collect_bytes.py [--rtsw 64 512]
"""

from __future__ import annotations

import argparse
import json
import logging
import pickle
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nr_run.lab.twin.lab import lab_down, lab_status, lab_up  # noqa: E402
from nr_run.platforms.site import load_site  # noqa: E402
from nr_run.runbooks import check as check_runbook  # noqa: E402
from nr_run.runbooks.clab import write_topology  # noqa: E402
from nr_run.runbooks.inventory import init_nornir  # noqa: E402
from nr_run.validators.base import all_checks  # noqa: E402
from tests.sitegen import generate_site  # noqa: E402

KINDS = ("rtsw-eos", "rtsw-sonic", "ctsw", "gpu")


def _size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, Exception):
        return 0
    return len(json.dumps(value, separators=(",", ":")))


@contextmanager
def counting() -> Iterator[Counter]:
    """Count the bytes every collector runner returns, per device, while the block runs."""
    read: Counter = Counter()
    real: Callable[..., Any] = check_runbook.runner_for

    def wrapped(task: Any, device: Any) -> Any:
        run = real(task, device)

        def counted(cmds: list[Any]) -> dict[Any, Any]:
            out = run(cmds)
            read[device.name] += sum(_size(v) for v in out.values())
            return out
        return counted

    check_runbook.runner_for = wrapped  # type: ignore[assignment]
    try:
        yield read
    finally:
        check_runbook.runner_for = real  # type: ignore[assignment]


def _kind(device: Any) -> str:
    return f"rtsw-{device.platform}" if device.role == "rtsw" else device.role


def sample(intent: Any) -> list[str]:
    by_kind: dict[str, list[str]] = {k: [] for k in KINDS}
    for name in sorted(intent.devices, key=lambda n: (len(n), n)):
        by_kind[_kind(intent.devices[name])].append(name)
    take = {"rtsw-eos": 2, "rtsw-sonic": 2, "ctsw": 1, "gpu": 2}
    return [n for k in KINDS for n in by_kind[k][:take[k]]]


def deploy_all(nr: Any, intent: Any, rounds: int = 4) -> None:
    """Every configured device (switches, and the servers' NICs) on its rendered config (replace); hosts whose session failed (a one-process twin of a
    large site misses SSH banner deadlines under load) are tried again, up to `rounds` times."""
    from nornir.core.task import Result, Task

    from nr_run.platforms import registry
    from nr_run.runbooks.render import render_device

    def push(task: Task) -> Result:
        conn = registry.get(task.host.platform or "").transport.deploy_connection
        device = task.host.get_connection(conn, task.nornir.config)
        device.load_replace_candidate(config=render_device(intent.devices[task.host.name], intent))
        device.commit_config()
        return Result(host=task.host)

    todo = {d.name for d in intent.devices.values() if registry.get(d.platform).configurable}
    for _ in range(rounds):
        res = nr.filter(filter_func=lambda h, todo=todo: h.name in todo).run(task=push, on_failed=True)
        todo = {h for h, r in res.items() if r.failed}
        nr.close_connections()
        if not todo:
            return
    raise SystemExit(f"deploy failed on {sorted(todo)[:5]} ...")


def patient(nr: Any) -> Any:
    """Longer SSH handshake deadlines for the SONiC hosts: the one-process twin of a large site answers slowly
    while it converges (what is measured is bytes, not time)."""
    from nr_run.platforms.transport import SSH_EXEC, set_options

    for host in nr.inventory.hosts.values():
        if host.platform == "sonic":
            set_options(host, "napalm", extras={"optional_args": {"banner_timeout": 120, "conn_timeout": 60,
                                                                   "auth_timeout": 60}})
        elif host.platform == "linux":
            set_options(host, SSH_EXEC, extras={"timeout": 120})
    return nr


def measure(site_dir: Path, workers: int = 4) -> dict[str, Any]:
    """Per-device bytes of a check collection on the sample, by kind, and the site-weighted mean."""
    intent, _ = load_site(site_dir)
    assert intent is not None
    with tempfile.TemporaryDirectory() as sd:
        state = Path(sd)
        lab_up(write_topology(intent, state / "clab"), state, base_port=0)
        try:
            addresses = lab_status(state)["addresses"]
            nr = patient(init_nornir(intent.site, site_dir.parent, workers=workers, lab=True, address_map=addresses))
            deploy_all(nr, intent)
            hosts = set(sample(intent))
            nr = patient(init_nornir(intent.site, site_dir.parent, workers=workers, lab=True, address_map=addresses))
            checks = [c for c in all_checks() if c != "rdma"]
            sampled = nr.filter(filter_func=lambda h: h.name in hosts)
            # one collection first: after a deploy of hundreds of switches the one-process twin converges (its
            # routing is recomputed on the first questions), which can outlast an SSH banner deadline
            check_runbook.run_checks(sampled, intent, checks, {"counters": {"interval_s": 0.2}})
            with counting() as read:
                report = check_runbook.run_checks(sampled, intent, checks, {"counters": {"interval_s": 0.2}})
            nr.close_connections()
        finally:
            lab_down(state)
    per_kind: dict[str, list[int]] = {k: [] for k in KINDS}
    for name in hosts:
        per_kind[_kind(intent.devices[name])].append(read[name])
    mean = {k: sum(v) / len(v) for k, v in per_kind.items() if v}
    counts = Counter(_kind(d) for d in intent.devices.values())
    site_mean = sum(mean[k] * counts[k] for k in mean) / sum(counts[k] for k in mean)
    judged = [f for f in report.findings if f.device in hosts]
    # what a run holds per device once collected (its DeviceState, pickled): the memory a site's states take
    held: dict[str, list[int]] = {k: [] for k in KINDS}
    for name in hosts:
        held[_kind(intent.devices[name])].append(len(pickle.dumps(report.states[name])))
    state_mean = {k: sum(v) / len(v) for k, v in held.items() if v}
    return {"site": intent.site, "devices": len(intent.devices), "per_kind": mean, "site_mean": site_mean,
            "state_per_kind": state_mean, "failed": sorted({f.check for f in judged if not f.passed}),
            "errors": report.collection_errors}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rtsw", type=int, nargs="+", default=[64, 512])
    args = ap.parse_args()
    logging.getLogger().addHandler(logging.NullHandler())   # Nornir's per-host tracebacks of retried pushes
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for rtsw in args.rtsw:
            site = generate_site(Path(tmp), rtsw=rtsw, ctsw=8, nics=8, site=f"gen{rtsw}")
            r = measure(site)
            results.append(r)
            kinds = ", ".join(f"{k} {v / 1024:.1f} KiB" for k, v in r["per_kind"].items())
            print(f"{r['site']}: {r['devices']} devices; bytes per device: {kinds}; site mean "
                  f"{r['site_mean'] / 1024:.1f} KiB; failed checks on the sample: {r['failed'] or 'none'}")
            held = ", ".join(f"{k} {v / 1024:.1f} KiB" for k, v in r["state_per_kind"].items())
            print(f"  state held per device (pickled): {held}")
            for host, errors in sorted(r["errors"].items()):
                print(f"  {host}: not collected: {sorted(errors.items())[0]}")
    if len(results) > 1:
        a, b = results[0], results[-1]
        print(f"site mean per device {a['devices']} -> {b['devices']} devices: x{b['site_mean'] / a['site_mean']:.2f} "
              f"(target: within 20 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
