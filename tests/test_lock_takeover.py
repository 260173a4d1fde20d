"""The site lock under contention, with real processes: a stale lock (its holder died) is taken over by exactly
one of several processes started at the same moment, every trial; the markers of a dead run are told apart
from a live one's."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from nr_run.runbooks.lock import SiteLock, SiteLocked, dead_markers, register_marker, unregister_marker
from tests.conftest import REPO

RIVALS = 4


def _stale(directory) -> None:
    """A lock file left by a process that died (no flock on it any more)."""
    SiteLock("dc1", directory).dir.mkdir(parents=True, exist_ok=True)
    (directory / "dc1.lock").write_text(json.dumps({"pid": 999999, "host": socket.gethostname(), "user": "x",
                                                    "since": "-"}))


def _contend(directory) -> list[str]:
    """RIVALS forked processes released together by one byte on a pipe each try the lock; each says whether it
    took it and (if it did) holds it until every rival has answered. Their answers."""
    go_r, go_w = os.pipe()
    out_r, out_w = os.pipe()
    hold_r, hold_w = os.pipe()
    pids = []
    for _ in range(RIVALS):
        pid = os.fork()
        if pid == 0:        # the child: only os calls and the lock, then _exit (no pytest teardown)
            code = 0
            try:
                os.close(go_w)
                os.close(hold_w)
                os.read(go_r, 1)
                try:
                    lock = SiteLock("dc1", directory)
                    lock.acquire()
                    os.write(out_w, b"H")
                    os.read(hold_r, 1)          # until the parent closes the pipe
                    lock.release()
                except SiteLocked:
                    os.write(out_w, b"R")
            except BaseException:
                code = 1
            os._exit(code)
        pids.append(pid)
    os.close(go_r)
    os.close(out_w)
    os.close(hold_r)
    os.write(go_w, b"x" * RIVALS)
    answers = []
    while len(answers) < RIVALS:
        ready, _, _ = select.select([out_r], [], [], 20)
        assert ready, f"rivals answered {answers} within 20 s"
        answers.extend(os.read(out_r, RIVALS).decode())
    os.close(hold_w)
    for pid in pids:
        assert os.waitpid(pid, 0)[1] == 0
    os.close(out_r)
    os.close(go_w)
    return answers


def run_trials(tmp_path: Path, count: int) -> None:
    for trial in range(count):
        directory = tmp_path / f"t{trial}"
        _stale(directory)
        answers = _contend(directory)
        assert answers.count("H") == 1, f"trial {trial}: {answers}"
        assert not (directory / "dc1.lock").exists(), f"trial {trial}: the holder left its lock file"


def _trials(tmp_path: Path, count: int) -> None:
    """The trials in an interpreter of their own: a fork of a pytest worker that earlier tests left with threads
    (gRPC's, a dask client's) can abort in the child, whatever the lock does."""
    code = ("import pathlib; from tests.test_lock_takeover import run_trials; "
            f"run_trials(pathlib.Path({str(tmp_path)!r}), {count})")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]


def test_a_stale_lock_is_taken_over_by_exactly_one_process(tmp_path):
    _trials(tmp_path, 10)


@pytest.mark.long
def test_a_stale_lock_is_taken_over_by_exactly_one_process_in_200_trials(tmp_path):
    _trials(tmp_path, 200)


def test_a_killed_holder_frees_the_lock_at_once(tmp_path):
    """SIGKILL leaves the file behind; the kernel dropped the flock with the process, so the next run takes it."""
    code = ("import sys, time; from nr_run.runbooks.lock import SiteLock; "
            f"SiteLock('dc1', {str(tmp_path)!r}).acquire(); print('held', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with pytest.raises(SiteLocked, match=f"pid {proc.pid}"):
            SiteLock("dc1", tmp_path).acquire()
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert (tmp_path / "dc1.lock").exists()
    lock = SiteLock("dc1", tmp_path)
    lock.acquire()
    assert lock.holder()["pid"] == os.getpid()
    lock.release()


def test_markers_of_dead_runs_are_told_from_live_ones(tmp_path):
    register_marker("dc1", "nr-run-dc1-20260101T000000000000Z", tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from nr_run.runbooks.lock import register_marker; "
                             f"register_marker('dc1', 'nr-run-dc1-20260101T000001000000Z', __import__('pathlib')"
                             f".Path({str(tmp_path)!r}))"])
    assert proc.wait(timeout=30) == 0
    assert set(dead_markers("dc1", tmp_path)) == {"nr-run-dc1-20260101T000001000000Z"}   # ours is alive
    unregister_marker("dc1", "nr-run-dc1-20260101T000000000000Z", tmp_path)
    assert set(dead_markers("dc1", tmp_path)) == {"nr-run-dc1-20260101T000001000000Z"}
