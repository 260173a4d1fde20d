"""Hostile inventory files, as a real process: keys of many newlines, files at and over the size and item
caps, symlinks to /proc and /dev, and an audit log of garbage. Every case exits 0 or 3 within 10 s (the
subprocess's timeout), with no traceback, and nothing of a /proc file is echoed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from nr_run.intent.source import HOSTS, MAX_FILE_BYTES, MAX_ITEMS
from tests.conftest import DC1, REPO

TIMEOUT_S = 10


def _site(tmp_path: Path, edit: Callable[[Path], None]) -> Path:
    inv = tmp_path / "inv"
    shutil.copytree(DC1, inv / "dc1")
    edit(inv / "dc1")
    return inv


def _run(inv: Path, *argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nr_run.cli.main", *argv, "--site", "dc1", "--inventory-dir",
                           str(inv)], cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT_S,
                          env={**os.environ, "COLUMNS": "120", **(env or {})})


def _newline_key(site: Path) -> None:          # a host named by 200,000 newlines (escapes: few raw lines)
    (site / HOSTS).write_text((site / HOSTS).read_text() + '? "' + "\\n" * 200_000 + '"\n: {hostname: 10.0.0.9}\n')


def _raw_newlines(site: Path) -> None:         # more lines than the item cap: refused before parsing
    (site / HOSTS).write_text((site / HOSTS).read_text() + "\n" * (MAX_ITEMS + 10))


def _near_size_cap(site: Path) -> None:        # one byte under the cap (a long comment): parsed
    text = (site / HOSTS).read_text()
    pad = MAX_FILE_BYTES - len(text.encode()) - 4
    (site / HOSTS).write_text(text + "# " + "x" * pad + "\n")


def _over_size_cap(site: Path) -> None:
    with open(site / HOSTS, "ab") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)        # sparse: refused by its size, never read


def _to_proc(site: Path) -> None:
    (site / HOSTS).unlink()
    (site / HOSTS).symlink_to("/proc/self/environ")


def _to_dev(site: Path) -> None:
    (site / "groups.yaml").unlink()
    (site / "groups.yaml").symlink_to("/dev/zero")


def _fabric_to_proc(site: Path) -> None:
    (site / "fabric.yaml").unlink()
    (site / "fabric.yaml").symlink_to("/proc/self/status")


CASES = {"key of many newlines": _newline_key, "raw newlines over the item cap": _raw_newlines,
         "a file near the size cap": _near_size_cap, "a file over the size cap": _over_size_cap,
         "hosts.yaml -> /proc/self/environ": _to_proc, "groups.yaml -> /dev/zero": _to_dev,
         "fabric.yaml -> /proc/self/status": _fabric_to_proc}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("verb", [["inventory", "validate"], ["render", "--out", "OUT"]])
def test_hostile_files_exit_0_or_3_within_10_s(tmp_path, case, verb):
    inv = _site(tmp_path, CASES[case])
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in verb]
    done = _run(inv, *argv, "--artifacts", str(tmp_path / "art")) if verb[0] == "render" else _run(inv, *argv)
    assert done.returncode in (0, 3), (done.stdout + done.stderr)[-3000:]
    assert "Traceback" not in done.stderr
    assert "NR_RUN_SECRET_MARK" not in done.stdout + done.stderr        # the environment is never echoed


@pytest.fixture(autouse=True)
def _marked_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NR_RUN_SECRET_MARK", "do-not-print")


@pytest.mark.long
def test_a_file_just_under_the_item_cap_parses_within_10_s(tmp_path):
    """The costliest file the caps let through: MAX_ITEMS - 1 one-character list items."""
    def edit(site: Path) -> None:
        (site / HOSTS).write_text((site / HOSTS).read_text() + "junk: [" + "1," * (MAX_ITEMS - 20) + "1]\n")
    done = _run(_site(tmp_path, edit), "inventory", "validate")
    assert done.returncode in (0, 3) and "Traceback" not in done.stderr


def test_a_garbage_audit_log_does_not_block_a_deploy(tmp_path):
    """Lines that are not audit lines (binary, lists, deep nesting, wrong types) are skipped: the dry run goes
    on (it stops only at the lab, which this test does not start)."""
    art = tmp_path / "art"
    art.mkdir(mode=0o700)
    (art / "audit.jsonl").write_bytes(b"\xff\xfe\x00garbage\n[1, 2]\n" + b"[" * 200_000 + b"\n" +
                                      b'{"id": 1, "site": "dc1", "device": ["x"], "phase": "start"}\n')
    from nr_run.runbooks.records import read_audit, unfinished

    skipped: list[int] = []
    assert read_audit(art, skipped) == [] and skipped == [1, 2, 3, 4]
    assert unfinished(art, "dc1") == []
