"""Device failures are one sentence with the real cause; tracebacks go to the run's log file only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nr_run.intent import compile_site
from nr_run.runbooks.failures import cause
from tests.conftest import DC1, REPO
from tests.sitegen import generate_site


def test_commit_rejected_by_the_device_is_one_line_with_its_own_text(twin, capsys):
    twin.fault("commit_rejected", device="rtsw1")
    capsys.readouterr()
    rc = twin.cli("deploy", "--commit", "--yes", "--confirm-timeout", "60", "--json")
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert rc == 1
    rtsw1 = next(d for d in report["devices"] if d["device"] == "rtsw1")
    assert rtsw1["state"] == "failed" and rtsw1["detail"].startswith("commit refused: ")
    assert "\n" not in rtsw1["detail"] and "Traceback" not in rtsw1["detail"]
    # the refused command and the device's own words, not the API's wrapping
    assert rtsw1["detail"].endswith("commit timer 00:01:00: % Failed to commit session "
                                    f"{rtsw1['detail'].split('configure session ')[1].split()[0]}: "
                                    "configuration rejected by the system"), rtsw1["detail"]
    assert "output:" not in rtsw1["detail"] and "Error [1000]" not in rtsw1["detail"]
    assert "Traceback" not in captured.err and "task failed" not in captured.err
    log = (Path(report["artifacts"]) / "run.log").read_text()
    assert "Traceback" in log and "rtsw1" in log


def test_unknown_sonic_host_key_is_named(twin, tmp_path, monkeypatch):
    """Without --insecure the host key must be known; the twin's is not in an empty known_hosts."""
    from nr_run.platforms import registry
    from nr_run.runbooks.deploy import Deployment
    from nr_run.runbooks.inventory import init_nornir
    from nr_run.runbooks.progress import DeviceProgress
    from nr_run.runbooks.records import RunRecords
    from nr_run.runbooks.render import render_device

    monkeypatch.setenv("HOME", str(tmp_path))
    intent = compile_site(DC1)
    nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=twin.addresses).filter(name="rtsw3")
    registry.get("sonic").transport.secure(nr.inventory.hosts["rtsw3"], False)   # as a production run
    run = Deployment(nr, intent, {"rtsw3": render_device(intent.devices["rtsw3"])},
                     RunRecords(tmp_path / "a", "dc1", "deploy"), DeviceProgress(None, ["rtsw3"]))
    run.dry_run()
    nr.close_connections()
    out = run.report.devices["rtsw3"]
    assert out.state == "failed"
    assert out.detail.startswith("host key not in known_hosts"), out.detail


def test_cause_walks_past_generic_wrappers():
    try:
        try:
            raise OSError("[Errno 111] Connection refused")
        except OSError as exc:
            raise RuntimeError("Cannot connect to localhost") from exc
    except RuntimeError as outer:
        assert cause(outer) == "[Errno 111] Connection refused"


@pytest.mark.long
def test_json_piped_into_head_exits_quietly(tmp_path):
    """More JSON than a pipe buffers, read by `head`: no BrokenPipeError, no traceback, exit 0."""
    site = generate_site(tmp_path, rtsw=512, ctsw=16)
    cmd = (f"{sys.executable} -m nr_run.cli.main render --site big --inventory-dir {site.parent} "
           f"--out {tmp_path / 'r'} --json | head -c 10")
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.stderr == "" and proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == '{\n  "devic'


def test_unknown_gpu_host_key_is_refused_and_named(twin, tmp_path, monkeypatch):
    """The GPU hosts' plain SSH connection checks host keys too (~/.ssh/known_hosts) unless --insecure."""
    from nr_run.platforms import registry
    from nr_run.runbooks.check import run_checks
    from nr_run.runbooks.inventory import init_nornir

    monkeypatch.setenv("HOME", str(tmp_path))
    intent = compile_site(DC1)
    nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=twin.addresses).filter(name="gpu1")
    registry.get("linux").transport.secure(nr.inventory.hosts["gpu1"], False)   # as a production run
    report = run_checks(nr, intent, ["host"])
    nr.close_connections()
    assert "not found in known_hosts" in report.collection_errors["gpu1"]["nics"]


def test_a_sonic_refusal_keeps_the_reason_its_cli_prints_last():
    stderr = ("Failed to apply patch due to: Failed to apply patch on the following scopes:\n"
              "- localhost: Given patch is not valid\nUsage: config apply-patch [OPTIONS] PATCH_FILE_PATH\n"
              "Try \"config apply-patch -h\" for help.\n\nError: Given patch is not valid\n")
    assert cause(RuntimeError("commit refused: " + stderr)) == (
        "commit refused: Failed to apply patch due to: Failed to apply patch on the following scopes: "
        "Given patch is not valid")
