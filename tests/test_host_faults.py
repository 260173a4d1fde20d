"""Faults of the automation host, with real processes: a full disk (a file size limit, as `ulimit -f` sets it)
in render, check and deploy is one clear line, never a traceback, and a deploy either stops before touching a
device or finishes its stage and says so; path arguments the host cannot use and a lab of another site are
refused by name (exit 3)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys

import pytest
import yaml

from nr_run.runbooks.records import read_audit, unfinished
from tests.conftest import DC1, REPO
from tests.twin_site import FAST_CHECKS, run_json

FAST = [f"--option={c}.{k}={v}" for c, opts in FAST_CHECKS.items() for k, v in opts.items()]
INV = ["--inventory-dir", str(DC1.parent)]


def _nr_run(*argv: str, fsize: int | None = None, env: dict | None = None, timeout: float = 120):
    """Run nr-run in its own process, optionally with a file size limit (bytes) as `ulimit -f` sets it."""
    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.run([sys.executable, "-m", "nr_run.cli.main", *argv], cwd=REPO, env={**os.environ, **(env or {})},
                          capture_output=True, text=True, timeout=timeout, preexec_fn=limit)


def _one_line(err: str) -> str:
    assert "Traceback" not in err, err[-3000:]
    lines = [ln for ln in err.splitlines() if ln.startswith("nr-run: ")]
    assert len(lines) == 1, err[-3000:]
    return lines[0]


def test_render_on_a_full_disk_is_one_line(tmp_path):
    done = _nr_run("render", "--site", "dc1", *INV, "--out", str(tmp_path / "out"), "--artifacts",
                   str(tmp_path / "art"), fsize=1024)
    assert done.returncode == 1
    assert "cannot write" in _one_line(done.stderr) and "File too large" in done.stderr


@pytest.mark.parametrize("verb", ["check", "compliance"])
def test_check_and_compliance_on_a_full_disk_are_one_line(twin, tmp_path, verb):
    done = _nr_run(verb, "--site", "dc1", "--lab", "--artifacts", str(tmp_path / "art"), *FAST, fsize=1024,
                   env={"NR_RUN_LAB_STATE_DIR": str(twin.state)})
    assert done.returncode == 1
    assert "cannot write" in _one_line(done.stderr)


def test_deploy_that_cannot_write_its_records_changes_nothing(twin, tmp_path):
    before = twin.snapshot()
    done = _nr_run("deploy", "--site", "dc1", "--lab", "--artifacts", str(tmp_path / "art"), "--commit", "--yes",
                   "--confirm-timeout", "20", *FAST, fsize=1024, env={"NR_RUN_LAB_STATE_DIR": str(twin.state)})
    assert done.returncode == 1
    assert "cannot write" in _one_line(done.stderr)
    assert twin.snapshot() == before


def test_a_commit_whose_audit_end_cannot_be_written_finishes_its_stage_and_says_so(deployed_twin, tmp_path, capsys):
    """The audit log is a few hundred bytes short of the limit: the commit's start line fits, nothing after it
    does. The stage still goes through post-checks and its confirm (a device is never left half done), the run
    says the records are incomplete (exit 1) and the next run reads the device back."""
    twin = deployed_twin
    inv = tmp_path / "inv"
    shutil.copytree(DC1, inv / "dc1")
    fabric = inv / "dc1" / "fabric.yaml"
    data = yaml.safe_load(fabric.read_text())
    data["roce_profiles"]["roce"]["ecn"]["min_kbytes"] = 200          # a change of rtsw1 alone
    fabric.write_text(yaml.safe_dump(data, sort_keys=False))
    art = tmp_path / "art"
    art.mkdir(mode=0o700)
    filler = json.dumps({"note": "x" * 200}) + "\n"         # not an audit line: read_audit skips it
    limit = 4 << 20
    audit = art / "audit.jsonl"
    audit.write_text(filler * ((limit - 600) // len(filler)))
    audit.chmod(0o600)
    done = _nr_run("deploy", "--site", "dc1", "--inventory-dir", str(inv), "--lab", "--hosts", "rtsw1",
                   "--artifacts", str(art), "--commit",
                   "--yes", "--confirm-timeout", "30", "--json", *FAST, fsize=limit,
                   env={"NR_RUN_LAB_STATE_DIR": str(twin.state)})
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert done.returncode == 1 and report["exit_code"] == 1
    assert report["host_fault"] == f"cannot write {art / 'audit.jsonl'}: File too large", report["host_fault"]
    assert "could not write all its records" in report["message"], report["message"]
    assert {d["device"]: d["state"] for d in report["devices"]}["rtsw1"] == "confirmed"
    written = [(a["action"], a["phase"]) for a in read_audit(art) if a["device"] == "rtsw1"]
    assert written[0] == ("commit", "start") and ("confirm", "end") not in written, written
    twin.artifacts = art
    assert [a["device"] for a in unfinished(art, "dc1")] == ["rtsw1"]
    audit.write_text("".join(ln + "\n" for ln in audit.read_text().splitlines() if '"id"' in ln))
    rc, again = run_json(twin, capsys, "deploy", "--inventory-dir", str(inv), "--hosts", "rtsw1")
    assert rc == 0
    assert [(r["device"], r["state"]) for r in again["reconciled"]] == [("rtsw1", "kept")]
    assert unfinished(art, "dc1") == []


def test_path_arguments_the_host_cannot_use_exit_3(tmp_path):
    (tmp_path / "to-proc").symlink_to("/proc/self")
    cases = [["render", "--site", "dc1", *INV, "--out", "/proc/x"],
             ["render", "--site", "dc1", *INV, "--out", str(tmp_path / "to-proc" / "x")],
             ["render", "--site", "dc1", *INV, "--out", "a" * 300],
             ["render", "--site", "dc1", "--inventory-dir", "a/" * 3000],
             ["render", "--site", "dc1", "--inventory-dir", "a" * 300],
             ["check", "--site", "dc1", *INV, "--artifacts", "/sys/x"]]
    for argv in cases:
        done = _nr_run(*argv, "--artifacts", str(tmp_path / "art"), timeout=10) if "--artifacts" not in argv \
            else _nr_run(*argv, timeout=10)
        assert done.returncode == 3, (argv[:5], done.stderr[-2000:])
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "art").exists()


def test_lab_fault_before_lab_up_is_refused(tmp_path):
    done = _nr_run("lab", "fault", "--site", "dc1", *INV, "link_down", "device=rtsw1", "port=Ethernet1",
                   env={"NR_RUN_LAB_STATE_DIR": str(tmp_path / "never-up")}, timeout=30)
    assert done.returncode == 3 and "lab up --site dc1` first" in _one_line(done.stderr)


def test_a_lab_of_another_site_is_refused_by_name(twin, tmp_path):
    inv = tmp_path / "inv"
    shutil.copytree(DC1, inv / "mysite")
    fabric = inv / "mysite" / "fabric.yaml"
    data = yaml.safe_load(fabric.read_text())
    data["site"] = "mysite"
    fabric.write_text(yaml.safe_dump(data, sort_keys=False))
    site = ["--site", "mysite", "--inventory-dir", str(inv)]
    lab = ["--lab", "--artifacts", str(tmp_path / "art")]
    for argv in (["deploy", *site, *lab], ["check", *site, *lab],
                 ["lab", "fault", *site, "link_down", "device=rtsw1", "port=Ethernet1"]):
        done = _nr_run(*argv, env={"NR_RUN_LAB_STATE_DIR": str(twin.state)}, timeout=60)
        assert done.returncode == 3, (argv, done.stdout[-1500:], done.stderr[-1500:])
        assert "serves dc1, not mysite" in _one_line(done.stderr)
    assert not (tmp_path / "art").exists()


def test_a_temporary_twin_says_whose_state_it_starts_from(tmp_path):
    state = tmp_path / "lab"
    (state / "devices" / "rtsw1").mkdir(parents=True)
    (state / "devices" / "rtsw1" / "running-config").write_text("hostname rtsw1\n")
    done = _nr_run("deploy", "--site", "dc1", *INV, "--lab", "--artifacts", str(tmp_path / "art"), "--hosts",
                   "rtsw2", env={"NR_RUN_LAB_STATE_DIR": str(state)}, timeout=120)
    assert "Traceback" not in done.stderr
    text = " ".join((done.stdout + done.stderr).split())
    assert f"from the device state saved in {state}" in text and "lab reset --site dc1" in text
    fresh = _nr_run("deploy", "--site", "dc1", *INV, "--lab", "--artifacts", str(tmp_path / "art2"), "--hosts",
                    "rtsw2", env={"NR_RUN_LAB_STATE_DIR": str(tmp_path / "fresh")}, timeout=120)
    assert "from day 0" in " ".join((fresh.stdout + fresh.stderr).split())
