"""Hostile command-line values of analyze, report, watch, exporter and job-check: each exits 3 with a message
naming the option, before any device is contacted or anything is written; and what analyze writes is private
and the same for the same inventory."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest

from nr_run.cli.main import main
from tests.conftest import DC1

INV = ["--inventory-dir", str(DC1.parent)]


@pytest.mark.parametrize(("argv", "named"), [
    (["analyze", "--failures", "-1"], "--failures"),
    (["analyze", "--failures", "4"], "--failures"),
    (["analyze", "--failures", "1e3"], "--failures"),
    (["analyze", "--qps", "0"], "--qps"),
    (["analyze", "--qps", "257"], "--qps"),
    (["analyze", "--qps", "99999999999999999999999"], "--qps"),
    (["analyze", "--pattern", "ring;rm"], "--pattern"),
    (["analyze", "--only", ""], "--only"),
    (["analyze", "--only", ","], "--only"),
    (["analyze", "--only", "lossless,../../etc"], "--only"),
    (["analyze", "--format", "json,pdf"], "--format"),
    (["analyze", "--format", ","], "--format"),
    (["report", "--top", "0"], "--top"),
    (["report", "--top", "99999999999"], "--top"),
    (["report", "--since", "0s"], "--since"),
    (["report", "--since", "-1h"], "--since"),
    (["report", "--job", "x" * 65, "--nodes", "gpu1", "--from", "2026-01-01"], "--job"),
    (["report", "--job", "42\n", "--nodes", "gpu1", "--from", "2026-01-01"], "--job"),
    (["report", "--job", "42", "--nodes", "gpu[1-3", "--from", "2026-01-01"], "--nodes"),
    (["report", "--job", "42", "--nodes", "gpu1;reboot", "--from", "2026-01-01"], "--nodes"),
    (["report", "--job", "42", "--nodes", "gpu1", "--from", "2026-02-30"], "--from"),
    (["report", "--job", "42", "--nodes", "gpu1", "--from", "2026-01-01", "--to", "never"], "--to"),
    (["report", "--job", "42", "--nodes", "gpu1", "--from", "0001-01-01T00:00:00+14:00"], "--from"),
    (["report", "--job", "42", "--nodes", "gpu1", "--from", "2026-01-01", "--to", "9999-12-31T23:59:59-14:00"],
     "--to"),
    (["report", "--from", "2026-01-01"], "--job"),
    (["report", "--job", "42", "--nodes", "gpu1", "--from", "2026-01-01", "--since", "1h"], "--since"),
    (["watch", "--every", "0.5s"], "--every"),
    (["watch", "--every", "\u0663\u0660s"], "--every"),          # Arabic-Indic 30: not a duration here
    (["exporter", "--listen", "127.0.0.1:\u0669\u0664\u0666\u0664"], "--listen"),
    (["watch", "--every", "999999999d"], "--every"),
    (["watch", "--count", "-3"], "--count"),
    (["watch", "--retention", "1s"], "--retention"),
    (["watch", "--source", "../poll"], "--source"),
    (["exporter", "--listen", "127.0.0.1"], "--listen"),
    (["exporter", "--listen", "127.0.0.1:99999"], "--listen"),
    (["exporter", "--listen", "[::1:9464"], "--listen"),
    (["exporter", "--listen", "127.0.0.1:9464 --lab"], "--listen"),
    (["exporter", "--listen", "0.0.0.0:9464"], "--allow-remote"),
    (["exporter", "--listen", "[::]:9464"], "--allow-remote"),
    (["exporter", "--listen", "metrics.example.net:9464"], "--allow-remote"),
    (["job-check", "--nodes", ""], "--nodes"),
    (["job-check", "--nodes", "gpu[5-1]"], "--nodes"),
    (["job-check", "--nodes", "gpu[1-999999999]"], "--nodes"),
    (["job-check", "--nodes", "rtsw1"], "--nodes"),
    (["job-check", "--nodes", "gpu1", "--budget", "nan"], "--budget"),
    (["job-check", "--nodes", "gpu1", "--budget", "0"], "--budget"),
    (["job-check", "--nodes", "gpu1", "--budget", "1e999"], "--budget"),
])
def test_bad_values_exit_3_naming_the_option(argv: list[str], named: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    listen = [] if argv[0] != "exporter" or "--listen" in argv else ["--listen", "127.0.0.1:0"]
    artifacts = tmp_path / "artifacts"
    code = main([argv[0], "--site", "dc1", *argv[1:], *INV, *listen, "--artifacts", str(artifacts)])
    err = capsys.readouterr().err
    assert code == 3, err
    assert "Traceback" not in err and named in err, err
    assert not artifacts.exists()          # nothing written before the input is valid


def _analyze(out: Path, *extra: str) -> int:
    return main(["analyze", "--site", "dc1", *INV, "--format", "json,html", "--out", str(out), "-q", *extra])


def test_analyze_reports_are_private(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "new" / "reports"
    assert _analyze(out, "--only", "lossless,deadlock") == 0
    for folder in (tmp_path / "new", out):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    for name in ("analyze.json", "analyze.html"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o600, name
    # the default place is the run folder under --artifacts, private the same way
    artifacts = tmp_path / "artifacts"
    assert main(["analyze", "--site", "dc1", *INV, "--format", "json", "--only", "buffers", "-q",
                 "--artifacts", str(artifacts)]) == 0
    [written] = (artifacts / "runs" / "dc1").glob("*-analyze/analyze.json")
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert stat.S_IMODE(written.parent.stat().st_mode) == 0o700


# what may differ between two runs on the same inventory: when it ran and how long it took
_TIMES = re.compile(r'("generated": |"seconds": |"(?:lossless|buffers|deadlock|ecmp|capacity|power)": )[^,\n}]+'
                    r'|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00|<td>\d+\.\d\d</td>|\d+\.\d\d s\b')


def test_analyze_output_is_the_same_for_the_same_inventory(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    texts = []
    for run in ("a", "b"):
        assert _analyze(tmp_path / run) == 0
        texts.append({name: _TIMES.sub(r"\1T", (tmp_path / run / name).read_text())
                      for name in ("analyze.json", "analyze.html")})
    assert texts[0] == texts[1]
    assert texts[0]["analyze.html"].count("<svg") >= 3          # the figures are part of what is compared
    doc = json.loads((tmp_path / "a" / "analyze.json").read_text())
    assert all(len(str(a["seconds"]).split(".")[-1]) <= 3 for a in doc["analyses"])


def test_exporter_serves_the_network_only_when_told(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """--allow-remote lets a non-loopback --listen through; the credentials are still checked before the port
    is opened (nothing listens for a run that cannot collect)."""
    from nr_run.runbooks import exporter

    for name in ("NR_USERNAME", "NR_PASSWORD", "NR_EOS_USERNAME", "NR_EOS_PASSWORD", "NR_SONIC_USERNAME",
                 "NR_SONIC_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    opened: list[tuple[str, int]] = []
    monkeypatch.setattr(exporter, "serve", lambda registry, host, port: opened.append((host, port)))
    code = main(["exporter", "--site", "dc1", *INV, "--listen", "0.0.0.0:0", "--allow-remote",
                 "--artifacts", str(tmp_path / "artifacts")])
    err = capsys.readouterr().err
    assert code == 3 and "credentials" in err and "--listen" not in err, err
    assert opened == [] and not (tmp_path / "artifacts").exists()


def test_report_prints_device_text_as_text() -> None:
    """Port names come from the devices: '[/]' in one is text, not a rich closing tag (a MarkupError)."""
    from io import StringIO

    from rich.console import Console

    from nr_run.cli.report import print_report

    rate = {"counter": "pfc_rx_frames", "device": "rtsw1", "port": "Eth[/]2", "index": 3, "increase": 5,
            "per_second": 1.0, "peak_per_second": 1.0, "windows": {"5m": 1.0, "1h": 1.0}, "resets": 0}
    pause = {"device": "rtsw1", "port": "Eth[bold]1", "priority": 3, "rx": 1, "tx": 2, "total": 3}
    doc = {"site": "dc1", "since": "a", "until": "b", "runs": {"count": 1, "by_kind": {"watch": 1}},
           "findings": {"new": [], "resolved": [], "open": []}, "rates": [rate], "link_flaps": [], "timeline": [],
           "top_pause": {"measure": "pause_frames", "note": "", "ports": [pause]}}
    out = StringIO()
    print_report(doc, Console(file=out, width=200))
    assert "Eth[/]2" in out.getvalue() and "Eth[bold]1" in out.getvalue()


def test_every_command_has_a_handler() -> None:
    import argparse

    from nr_run.cli.main import HANDLERS, _handler, build_parser

    [commands] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert sorted(commands.choices) == sorted(HANDLERS)
    assert all(callable(_handler(argparse.Namespace(command=name))) for name in HANDLERS)


def test_history_files_are_private(tmp_path: Path) -> None:
    """The database, its WAL and shared-memory files, and the folder they are in: none readable by others."""
    import os
    import time

    from nr_run.history.model import Collection
    from nr_run.runbooks.history import history_path, open_store

    old = os.umask(0o022)
    try:
        with open_store(tmp_path / "artifacts", "dc1") as store:
            now = time.time()
            store.record(Collection("watch", "poll", now - 1, now, devices=["rtsw1"]))
            files = sorted(history_path(tmp_path / "artifacts", "dc1").parent.iterdir())
            assert {f.name for f in files} >= {"dc1.sqlite", "dc1.sqlite-wal", "dc1.sqlite-shm"}
            assert {f.name: stat.S_IMODE(f.stat().st_mode) for f in files} == {f.name: 0o600 for f in files}
    finally:
        os.umask(old)
    for folder in (tmp_path / "artifacts", tmp_path / "artifacts" / "history"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_job_check_prints_device_text_as_text(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """What a switch or its connection error says is text: '[/]' in it must not crash a prolog's job-check (an
    uncaught error exits 1, which the prolog would read as 'drain')."""
    import contextlib

    from nr_run.cli import lab
    from nr_run.runbooks import job
    from nr_run.validators.base import Finding

    def verdict(nr: object, fabric: object, scope: job.JobScope, budget_s: float, options: object,
                **_: object) -> job.JobVerdict:
        return job.JobVerdict(scope, [Finding("ecn", "rtsw1", "Ethernet1 queue [/]3", "on", "off [/]", False,
                                              "warning", port="Ethernet1")],
                              {"rtsw2": "section:[dim]gone[/]"}, 1.0, 10.0)

    monkeypatch.setattr(lab, "device_session", lambda args, intent=None: contextlib.nullcontext(None))
    monkeypatch.setattr(job, "run_job_check", verdict)
    code = main(["job-check", "--site", "dc1", *INV, "--nodes", "gpu1", "-v"])
    out, err = capsys.readouterr()
    assert code == 1 and out.startswith("drain: ")
    assert "not checked: rtsw2: section:[dim]gone[/]" in err and "off [/] (expected on)" in err


def test_a_folder_name_with_brackets_is_printed_as_written(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rep[/]orts"
    assert main(["analyze", "--site", "dc1", *INV, "--format", "json", "--out", str(out), "--only", "buffers"]) == 0
    assert f"wrote {out / 'analyze.json'}" in capsys.readouterr().out


def test_drawing_a_figure_leaves_matplotlib_settings_alone() -> None:
    """A user's own process (a notebook) imports the analyses: drawing the report changes no global setting."""
    import matplotlib

    from nr_run.analysis.report import figure_svg
    from nr_run.analysis.result import Figure

    before = (matplotlib.get_backend(), matplotlib.rcParams["svg.hashsalt"], matplotlib.rcParams["svg.fonttype"])
    svg = figure_svg(Figure("load", "bar", {"labels": ["a", "b"], "series": {"x": [1, 2]}}))
    assert svg.startswith("<svg") and "<text" in svg
    after = (matplotlib.get_backend(), matplotlib.rcParams["svg.hashsalt"], matplotlib.rcParams["svg.fonttype"])
    assert after == before
