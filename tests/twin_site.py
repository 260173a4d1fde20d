"""The one dc1 twin of the test session, and the helpers that drive it through real clients.

Fixtures (registered through tests/conftest.py):
  dc1_lab        session  the state folder of one background dc1 twin (`lab_up`, as a user runs it); the CLI,
                          `lab_*` calls and subprocesses find it through NR_RUN_LAB_STATE_DIR. A separate process:
                          an in-process twin can deadlock when the garbage collector finalizes a leaked NAPALM
                          driver on the twin's own loop thread (its close() calls the twin and waits)
  twin           function dc1 at day 0: reset through the control API (lab_reset) before the test
  deployed_twin  function dc1 with every switch and server NIC configured from its rendered config (a saved
                          baseline, deployed once per session through NAPALM and the NIC driver), restored
                          before the test
A module that needs another starting point saves its own baseline once (make_baseline) and resets to it
per test (reset_site).
Both function fixtures give a TwinSite with a fresh artifacts folder; its CLI runs of check, compliance and
deploy pass short measurement windows (FAST_CHECKS) as --option values.

Any site, as a twin serves it: the twin reads only a containerlab topology file, so a test generates the site's
file first (`site_topology`, what `nr-run lab topology` writes), may edit it, and serves it:
  site_topology(site_dir, out_dir, edit=None) -> Path            the generated (and edited) <site>.clab.yml
  site_twin(site_dir, state_dir, edit=None) -> Lab               context manager: an in-process twin on free ports
                                                                  (lab.addresses: host -> {"host", "port", ...})
  site_lab_up(site_dir, state_dir, edit=None) -> dict            a background twin (lab_up; stop it with lab_down)
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import napalm
import paramiko
import pyeapi
import pytest
import yaml

from nr_run.cli.main import main
from nr_run.intent import compile_site
from nr_run.lab.twin.lab import (
    Lab,
    lab_clear,
    lab_down,
    lab_fault,
    lab_reset,
    lab_save_baseline,
    lab_status,
    lab_up,
)
from nr_run.platforms import registry
from nr_run.platforms.linux.driver import NicDriver
from nr_run.platforms.site import load_site
from nr_run.runbooks.clab import write_topology
from nr_run.runbooks.render import render_device
from tests.conftest import DC1

Edit = Callable[[dict], None]

FABRIC = compile_site(DC1)
SWITCHES = ["ctsw1", "ctsw2", "rtsw1", "rtsw2", "rtsw3", "rtsw4"]
SERVERS = ["gpu1", "gpu2", "gpu3", "gpu4"]
DEVICES = sorted(SWITCHES + SERVERS)      # what deploy renders and changes: switches, and the servers' NICs
CREDS = {"eos": ("admin", "admin"), "sonic": ("admin", "YourPaSsWoRd"), "linux": ("admin", "admin")}
# the production windows (2 s between counter samples, 0.5 s for a perftest server) only cost time here:
# the twin's counters grow from fault start times and its perftest server listens as soon as it is started
FAST_CHECKS: dict[str, dict[str, Any]] = {"counters": {"interval_s": 0.2},
                                          "rdma": {"seconds": 1, "server_wait_s": 0.05}}
DEPLOYED = "deployed"

# a batch script: "echo <mark> 0 0; <cmd> 2>&1; echo <mark> 1 $?; ...; echo <mark> end $?"
BATCH_MARK = re.compile(r"echo nr-run-batch-[0-9a-f]+ 0 0; ")
BATCHED = re.compile(r"; (.*?) 2>&1; echo nr-run-batch-[0-9a-f]+ (?:\d+|end) \$\?")


class TwinSite:
    """One test's view of the shared dc1 twin: CLI, NAPALM/pyeapi/SSH clients, audit log."""

    def __init__(self, state: Path, artifacts: Path) -> None:
        self.state, self.artifacts = state, artifacts
        self.addresses: dict[str, dict] = lab_status(state)["addresses"]

    def fault(self, kind: str, **params: object) -> dict:
        return lab_fault(self.state, kind, **params)

    def clear_faults(self, kind: str | None = None, **params: object) -> int:
        """Clear faults; after a PFC storm, also wait until the switches' watchdogs have restored the queues
        (a real watchdog holds a queue stormed for its restoration time after the pause stops)."""
        cleared = lab_clear(self.state, kind, **params)
        if kind in (None, "pfc_storm"):
            time.sleep(watchdog_restore_s())
        return cleared

    def cli(self, *argv: str) -> int:
        fast = [f"--option={c}.{k}={v}" for c, opts in FAST_CHECKS.items() for k, v in opts.items()] \
            if argv and argv[0] in ("check", "compliance", "deploy") else []
        return main([*argv, "--site", "dc1", "--lab", "--artifacts", str(self.artifacts), *fast])

    def driver(self, host: str, transport: str = "https") -> Any:
        """An opened NAPALM driver (eos over https/http, napalm_sonic over SSH; a server's NIC driver over SSH)."""
        ep = self.addresses[host]
        platform = ep["platform"]
        if platform == "linux":
            return NicDriver(self.ssh(host))
        if platform == "eos":
            opts = {"transport": transport, "port": ep["port"] if transport == "https" else ep["http_port"]}
        else:
            opts = {"port": ep["port"], "ssh_strict": False}
        drv = napalm.get_network_driver(platform)("127.0.0.1", *CREDS[platform], timeout=30, optional_args=opts)
        drv.open()
        return drv

    def eapi(self, host: str, transport: str = "https") -> pyeapi.client.Node:
        ep = self.addresses[host]
        conn = pyeapi.client.connect(transport=transport, host="127.0.0.1", username="admin", password="admin",
                                     port=ep["port"] if transport == "https" else ep["http_port"], timeout=20)
        return pyeapi.client.Node(conn)

    def ssh(self, host: str, user: str = "admin", password: str = "admin") -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        client.connect("127.0.0.1", port=self.addresses[host]["port"], username=user, password=password,
                       look_for_keys=False, allow_agent=False)
        return client

    def push(self, host: str, config: str, replace: bool = False) -> None:
        drv = self.driver(host)
        try:
            (drv.load_replace_candidate if replace else drv.load_merge_candidate)(config=config)
            drv.commit_config()
        finally:
            drv.close()

    def deploy(self, *hosts: str) -> None:
        """Replace each host's config with its rendered one, through its NAPALM driver, keeping what a
        `deploy --replace` keeps (the platform policy's device-local lines: EOS users and AAA)."""
        for host in hosts:
            config = render_device(FABRIC.devices[host])
            complete = getattr(registry.get(FABRIC.devices[host].platform).deploy, "replace_candidate", None)
            if complete is not None:
                config = complete(self.running(host), config)
            self.push(host, config, replace=True)

    def running(self, host: str) -> str:
        drv = self.driver(host)
        try:
            return str(drv.get_config(retrieve="running")["running"])
        finally:
            drv.close()

    def snapshot(self) -> dict[str, str]:
        return {h: self.running(h) for h in SWITCHES}

    def audit(self) -> list[dict]:
        path = self.artifacts / "audit.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def log_commands(self, host: str) -> list[str]:
        log = self.state / "logs" / f"{host}.log"
        if not log.exists():            # the twin writes a device's log with the first command it is asked
            return []
        lines = log.read_text().splitlines()
        return [json.loads(line.split("\t", 2)[2]) for line in lines]

    def asked(self, host: str) -> list[str]:
        """The commands `host` was asked to run, a batch (one exec channel running several commands between
        marker lines) counted as the commands it ran."""
        out: list[str] = []
        for entry in self.log_commands(host):
            if BATCH_MARK.match(entry):
                out += BATCHED.findall(entry)
            else:
                out.append(entry)
        return out


@functools.cache
def watchdog_restore_s() -> float:
    """The longest PFC watchdog restoration time dc1 configures, plus a margin for the twin's clock reads."""
    fabric = compile_site(DC1)
    return max(d.roce.watchdog.restoration_ms for d in fabric.switches()) / 1000 + 0.1


def ssh_run(client: paramiko.SSHClient, cmd: str) -> tuple[int, str]:
    """Exit status and stdout+stderr of one exec request."""
    _, out, err = client.exec_command(cmd, timeout=10)
    text = out.read().decode() + err.read().decode()
    return out.channel.recv_exit_status(), text


def wait_until(condition: Callable[[], bool], timeout: float, step: float = 0.1, what: object = "") -> None:
    """Poll until condition() holds (a device timer fired, a session came up). `timeout` only keeps a broken
    run from hanging (generous, never what a test asserts): past it the test fails, saying `what`."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not reached within {timeout} s {what() if callable(what) else what}".rstrip())
        time.sleep(step)


def nic_ip(host: str, nic: str) -> str:
    return next(n.ip for n in FABRIC.devices[host].nics if n.name == nic)


def site_topology(site_dir: str | Path, out_dir: str | Path, edit: Edit | None = None) -> Path:
    """The site's containerlab topology as `nr-run lab topology --out out_dir` writes it; `edit(doc)` may change
    the parsed document (swap an endpoint, drop a node) before it is written back."""
    fabric, findings = load_site(Path(site_dir))
    if fabric is None:
        raise ValueError(f"{site_dir}: inventory errors: {[f.message for f in findings if f.severity == 'error']}")
    path = write_topology(fabric, out_dir)
    if edit is not None:
        doc = yaml.safe_load(path.read_text())
        edit(doc)
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@contextlib.contextmanager
def site_twin(site_dir: str | Path, state_dir: str | Path, edit: Edit | None = None) -> Iterator[Lab]:
    """An in-process twin of any inventory site (its generated topology, optionally edited) on free ports."""
    state = Path(state_dir)
    lab = Lab(site_topology(site_dir, state / "clab", edit), state, base_port=0)
    lab.start()
    try:
        yield lab
    finally:
        lab.stop()


def site_lab_up(site_dir: str | Path, state_dir: str | Path, edit: Edit | None = None) -> dict:
    """A background twin (as `nr-run lab up` runs it) of any site on free ports; returns lab_status()."""
    state = Path(state_dir)
    return lab_up(site_topology(site_dir, state / "clab", edit), state, base_port=0)


@pytest.fixture(scope="session")
def dc1_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    state = tmp_path_factory.mktemp("dc1-lab")
    site_lab_up(DC1, state)
    try:
        yield state
    finally:
        lab_down(state)


def make_baseline(lab: Path, name: str, hosts: list[str], scratch: Path) -> str:
    """From day 0, configure `hosts` from their rendered configs (NAPALM) and save that as baseline `name`."""
    lab_reset(lab)
    TwinSite(lab, scratch).deploy(*hosts)
    lab_save_baseline(lab, name)
    return name


@pytest.fixture(scope="session")
def dc1_deployed(dc1_lab: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Every switch and every server's NICs configured from their rendered configs, once per session."""
    return make_baseline(dc1_lab, DEPLOYED, SWITCHES + SERVERS, tmp_path_factory.mktemp("deploy-baseline"))


def reset_site(lab: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, baseline: str | None) -> TwinSite:
    """The shared lab (its state folder) back at day 0 (or at `baseline`), seen from one test."""
    lab_reset(lab, baseline)            # the twin's public control API, as `nr-run lab reset` uses
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(lab))
    return TwinSite(lab, tmp_path / "artifacts")


@pytest.fixture
def twin(dc1_lab: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TwinSite:
    return reset_site(dc1_lab, tmp_path, monkeypatch, None)


@pytest.fixture
def deployed_twin(dc1_lab: Path, dc1_deployed: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TwinSite:
    return reset_site(dc1_lab, tmp_path, monkeypatch, dc1_deployed)


def run_json(twin: TwinSite, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    capsys.readouterr()
    rc = twin.cli(*argv, "--json")
    return rc, json.loads(capsys.readouterr().out)
