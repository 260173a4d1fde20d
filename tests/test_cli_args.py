"""Command-line values are validated by argparse types (nr_run/cli/args.py): bad values exit 3 before any work,
never a traceback, and `--site` can never point outside the inventory or the artifacts folder."""

from __future__ import annotations

import os

import pytest

from nr_run.cli.main import main
from tests.conftest import DC1

INV = ["--inventory-dir", str(DC1.parent)]


@pytest.mark.parametrize("argv", [
    ["deploy", "--site", "dc1", "--workers", "0"],
    ["deploy", "--site", "dc1", "--workers", "-1"],
    ["check", "--site", "dc1", "--workers", "99999999999999999999"],
    ["check", "--site", "dc1", "--workers", "two"],
    ["deploy", "--site", "dc1", "--canary", "-1"],
    ["deploy", "--site", "dc1", "--confirm-timeout", "0"],
    ["deploy", "--site", "dc1", "--confirm-timeout", "-5"],
    ["deploy", "--site", "dc1", "--confirm-timeout", str(10**12)],
    ["compliance", "--site", "dc1", "--every", "0s"],
    ["compliance", "--site", "dc1", "--every", "99999999999h"],
    ["compliance", "--site", "dc1", "--every", "soon"],
    ["deploy", "--site", "dc1", "--hosts", ""],
    ["render", "--site", "dc1", "--hosts", ","],
    ["render", "--site", "dc1", "--hosts", "rtsw1,,rtsw2"],
    ["render", "--site", "dc1", "--hosts", "../x"],
    ["render", "--site", "x" * 5000],
    ["render", "--site", "../x"],
    ["render", "--site", "/etc"],
    ["render", "--site", "dc1\n"],
    ["render", "--site", "."],
    ["render", "--site", "nope"],
    ["lab", "status", "--site", "dc1", "--latency-ms", "-1"],
])
def test_bad_values_exit_3(argv, capsys):
    assert main([*argv, *INV]) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip()


def test_out_and_artifacts_must_be_creatable_folders(tmp_path, capsys):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert main(["render", "--site", "dc1", *INV, "--out", str(a_file)]) == 3
    assert main(["render", "--site", "dc1", *INV, "--out", str(a_file / "sub")]) == 3
    assert main(["check", "--site", "dc1", *INV, "--artifacts", str(a_file)]) == 3
    if os.geteuid() != 0:      # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert main(["render", "--site", "dc1", *INV, "--out", str(locked / "out")]) == 3
    assert "Traceback" not in capsys.readouterr().err


def test_common_device_options_are_accepted_by_every_device_command():
    from nr_run.cli.main import build_parser

    parser = build_parser()
    for command in (["deploy"], ["check"], ["compliance"], ["lab", "status"]):
        args = parser.parse_args([*command, "--site", "dc1", "--workers", "3", "--insecure", "-v", "-q"])
        assert (args.workers, args.insecure, args.verbose, args.quiet) == (3, True, True, True)


def test_good_values_pass(tmp_path):
    out = tmp_path / "new" / "out"
    assert main(["render", "--site", "dc1", *INV, "--out", str(out), "--hosts", "rtsw1, rtsw3"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["rtsw1.cfg", "rtsw3.json"]
