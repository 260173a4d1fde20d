"""watch / report / exporter on the command line: bad values exit 3 before any work, a missing history exits 1,
a watch reports a collection that outlasts its interval and stops cleanly on SIGTERM."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from nr_run.cli.main import main
from nr_run.runbooks.history import history_path, open_store
from tests.conftest import DC1, REPO
from tests.twin_site import TwinSite, wait_until

INV = ["--inventory-dir", str(DC1.parent)]


@pytest.mark.parametrize("argv", [
    ["watch", "--site", "dc1", "--every", "0s"],
    ["watch", "--site", "dc1", "--every", "2d"],
    ["watch", "--site", "dc1", "--count", "0"],
    ["watch", "--site", "dc1", "--retention", "10m"],
    ["watch", "--site", "dc1", "--source", "carrier-pigeon"],
    ["check", "--site", "dc1", "--retention", "forever"],
    ["exporter", "--site", "dc1"],
    ["exporter", "--site", "dc1", "--listen", "localhost"],
    ["exporter", "--site", "dc1", "--listen", "127.0.0.1:70000"],
    ["exporter", "--site", "dc1", "--listen", "127.0.0.1:80;rm"],
    ["report", "--site", "dc1", "--job", "42"],
    ["report", "--site", "dc1", "--nodes", "gpu1"],
    ["report", "--site", "dc1", "--job", "42", "--nodes", "gpu[1-", "--from", "2026-01-01T00:00:00"],
    ["report", "--site", "dc1", "--job", "42", "--nodes", "gpu1", "--from", "yesterday"],
    ["report", "--site", "dc1", "--job", "42", "--nodes", "gpu1", "--from", "2026-01-02", "--to", "2026-01-01"],
    ["report", "--site", "dc1", "--job", "42", "--nodes", "rtsw1", "--from", "2026-01-01"],
    ["report", "--site", "dc1", "--job", "../x", "--nodes", "gpu1", "--from", "2026-01-01"],
])
def test_bad_values_exit_3(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    artifacts = [] if argv[0] == "exporter" and "--listen" not in argv else ["--artifacts", str(tmp_path)]
    assert main([*argv, *INV, *artifacts]) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip()
    assert not history_path(tmp_path, "dc1").exists()


def test_report_without_history_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--site", "dc1", *INV, "--artifacts", str(tmp_path)]) == 1
    assert "no history for dc1" in capsys.readouterr().out


def test_exporter_refuses_a_busy_port(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(tmp_path / "lab"))    # the port is opened once the lab is up
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert main(["exporter", "--site", "dc1", *INV, "--lab", "--listen", f"127.0.0.1:{port}",
                     "--artifacts", str(tmp_path)]) == 1
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().out


def test_watch_reports_an_overrun(deployed_twin: TwinSite, capsys: pytest.CaptureFixture[str]) -> None:
    # the counters check's two samples 1.5 s apart cannot fit a 1 s interval
    capsys.readouterr()
    assert deployed_twin.cli("watch", "--every", "1s", "--count", "2", "--json",
                             "--option", "counters.interval_s=1.5") == 0
    ticks = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [t["index"] for t in ticks] == [1, 2]
    assert all(t["schema"] == "nr-run.watch/1" and t["overrun"] and t["duration_s"] > 1.5 for t in ticks)
    starts = [t["started"] for t in ticks]
    assert starts == sorted(starts)
    with open_store(deployed_twin.artifacts, "dc1") as store:
        runs = store.runs(0, time.time() + 1)
    assert len(runs) == 2 and runs[1]["started"] >= runs[0]["finished"]       # never overlapping
    from nr_run.cli.watch import tick_line

    assert "OVERRUN: collection took" in tick_line(ticks[0])


def test_watch_stops_cleanly_on_sigterm(deployed_twin: TwinSite, tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "nr_run.cli.main", "watch", "--site", "dc1", "--lab", "--every", "60s",
         "--artifacts", str(tmp_path), "--option", "counters.interval_s=0.2"],
        cwd=REPO, env={**os.environ, "NR_RUN_LAB_STATE_DIR": str(deployed_twin.state)},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True).start()
    try:
        wait_until(lambda: proc.poll() is not None or any(re.search(r"watch dc1 #1: \d+ devices", line)
                                                           for line in lines), timeout=60, step=0.05, what=lines)
        assert proc.poll() is None, lines
        proc.send_signal(signal.SIGTERM)          # in the 60 s wait between collections
        assert proc.wait(timeout=10) == 0         # well before the next collection is due: it did not wait
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert any("stopped (SIGTERM) after 1 collection(s)" in line for line in lines), lines
    with open_store(tmp_path, "dc1") as store:
        assert len(store.runs(0, time.time() + 1)) == 1


def test_a_history_that_cannot_be_written_does_not_fail_the_check(deployed_twin: TwinSite,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    history_path(deployed_twin.artifacts, "dc1").mkdir(parents=True)      # a folder where the database goes
    capsys.readouterr()
    assert deployed_twin.cli("check", "--checks", "pfc") == 0
    out = capsys.readouterr().out
    assert "history not recorded" in out and "dc1.sqlite" in out
    [log] = (deployed_twin.artifacts / "runs" / "dc1").glob("*-check/run.log")
    assert "history not recorded" in log.read_text()
    # a watch says so for each collection and exits 1
    assert deployed_twin.cli("watch", "--every", "1s", "--count", "1", "--option", "counters.interval_s=0.2") == 1
    assert "history not recorded" in capsys.readouterr().out
