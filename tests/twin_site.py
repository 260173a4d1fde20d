"""A dc1 twin running as a background `lab up` process, as a user runs it, plus helpers to drive the
CLI against it and read device state back through the real NAPALM drivers."""

from __future__ import annotations

import json
from pathlib import Path

import napalm
import pytest

from nr_run.cli.main import main
from nr_run.lab.twin.lab import lab_down, lab_status, lab_up
from tests.conftest import DC1

SWITCHES = ["ctsw1", "ctsw2", "rtsw1", "rtsw2", "rtsw3", "rtsw4"]
CREDS = {"eos": ("admin", "admin"), "sonic": ("admin", "YourPaSsWoRd")}


class TwinSite:
    def __init__(self, state: Path, artifacts: Path):
        self.state, self.artifacts = state, artifacts
        self.addresses = lab_status(state)["addresses"]

    def cli(self, *argv: str) -> int:
        return main([*argv, "--site", "dc1", "--lab", "--artifacts", str(self.artifacts)])

    def driver(self, host: str):
        ep = self.addresses[host]
        platform = ep["platform"]
        opts = ({"transport": "https", "port": ep["port"]} if platform == "eos"
                else {"port": ep["port"], "ssh_strict": False})
        drv = napalm.get_network_driver(platform)("127.0.0.1", *CREDS[platform], timeout=30, optional_args=opts)
        drv.open()
        return drv

    def running(self, host: str) -> str:
        drv = self.driver(host)
        try:
            return drv.get_config(retrieve="running")["running"]
        finally:
            drv.close()

    def snapshot(self) -> dict[str, str]:
        return {h: self.running(h) for h in SWITCHES}

    def audit(self) -> list[dict]:
        path = self.artifacts / "audit.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def twin(tmp_path, monkeypatch):
    state = tmp_path / "lab"
    lab_up(DC1, state, base_port=0)
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(state))
    try:
        yield TwinSite(state, tmp_path / "artifacts")
    finally:
        lab_down(state)


def run_json(twin: TwinSite, capsys, *argv: str) -> tuple[int, dict]:
    capsys.readouterr()
    rc = twin.cli(*argv, "--json")
    return rc, json.loads(capsys.readouterr().out)


