"""Conventions engineers bring from ANTA and friends: --version, device filters on check and compliance, the
site's catalog of checks and thresholds (validated like the inventory), CSV, -q, the exit code of "could not
check", and a last line that says what happened."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
import yaml

from nr_run.cli.main import main
from tests.conftest import DC1
from tests.twin_site import TwinSite

INV = ["--inventory-dir", str(DC1.parent)]


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        from nr_run.cli.main import build_parser

        build_parser().parse_args(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("nr-run ")
    assert main(["--version"]) == 0


def _site(tmp_path: Path, catalog: object) -> list[str]:
    shutil.copytree(DC1, tmp_path / "dc1")
    (tmp_path / "dc1" / "catalog.yaml").write_text(catalog if isinstance(catalog, str) else yaml.safe_dump(catalog))
    return ["--inventory-dir", str(tmp_path)]


@pytest.mark.parametrize("catalog, field", [
    ({"version": 2}, "version"),
    ({"options": {"counters": {"interval_sx": 1}}}, "options"),
    ({"options": {"counters": {"interval_s": -1}}}, "options"),
    ({"checks": ["pfc", "nosuch"]}, "checks"),
    ({"job_check": {"unknown": "maybe"}}, "job_check.unknown"),
    ({"job_check": {"budget_s": 0}}, "job_check.budget_s"),
    ({"thresholds": {}}, "thresholds"),
    ("[a, b]\n", "-"),
])
def test_a_bad_catalog_exits_3_naming_file_and_field_before_any_device(tmp_path, capsys, catalog, field) -> None:
    inv = _site(tmp_path, catalog)
    for argv in (["check", "--lab"], ["compliance", "--lab"], ["job-check", "--lab", "--nodes", "gpu1"],
                 ["deploy", "--lab"], ["watch", "--lab", "--count", "1"]):
        assert main([*argv, "--site", "dc1", *inv, "--artifacts", str(tmp_path / "a")]) == 3
        err = capsys.readouterr().err
        assert "catalog.yaml" in err and f"field {field}" in err, err


def test_check_filters_catalog_and_csv(deployed_twin: TwinSite, tmp_path: Path, capsys) -> None:
    inv = _site(tmp_path, {"version": 1, "checks": ["interfaces", "pfc"],
                           "options": {"counters": {"interval_s": 0.2}}})
    capsys.readouterr()
    # the catalog picks the checks; --role narrows the devices read and judged
    assert deployed_twin.cli("check", *inv, "--role", "ctsw", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["checks"] == ["interfaces", "pfc"] and report["summary"]["devices"] == 2
    assert {f["device"] for f in report["findings"]} == {"ctsw1", "ctsw2"}
    # --tags: a Nornir group of the host (hosts.yaml: groups); CSV on stdout, the verdict on stderr
    deployed_twin.fault("link_down", device="rtsw1", port="Ethernet3")
    assert deployed_twin.cli("check", *inv, "--tags", "gpu", "--checks", "host", "--format", "csv") == 1
    out, err = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["device"] for r in rows} == {"gpu1", "gpu2", "gpu3", "gpu4"}
    down = [r for r in rows if r["passed"] == "false"]
    assert [(r["device"], r["port"]) for r in down] == [("gpu1", "eth1")] and down[0]["cause"] == "config:gpu1:host"
    assert err.splitlines()[-1].startswith("FAIL dc1: 1 checks on 4 devices")
    assert deployed_twin.cli("check", *inv, "--hosts", "rtsw1,nosuch") == 3
    assert "not a device of site dc1: nosuch" in capsys.readouterr().err


def test_could_not_check_has_its_own_exit_code(deployed_twin: TwinSite, capsys) -> None:
    """Only unreadable devices fail: exit 4, not 1 (the checked-and-bad exit)."""
    deployed_twin.fault("unreachable", device="rtsw2")
    capsys.readouterr()
    assert deployed_twin.cli("check", "--hosts", "rtsw2", "--checks", "interfaces") == 4
    assert deployed_twin.cli("check", "--hosts", "rtsw1,rtsw2", "--checks", "interfaces") == 4
    deployed_twin.fault("link_down", device="rtsw1", port="Ethernet3")
    assert deployed_twin.cli("check", "--hosts", "rtsw1,rtsw2", "--checks", "interfaces") == 1


def test_quiet_render_and_validate_print_only_their_verdict(tmp_path, capsys) -> None:
    assert main(["render", "--site", "dc1", *INV, "--out", str(tmp_path / "r"), "-q"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith(f"rendered 10 config(s) for dc1 into {tmp_path / 'r'}"), out
    assert main(["inventory", "validate", "--site", "dc1", *INV, "-q"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("site dc1 valid: "), out


def test_lab_fault_and_status_speak_in_words(twin: TwinSite, capsys) -> None:
    capsys.readouterr()
    assert main(["lab", "fault", "--site", "dc1", "link_down", "device=rtsw1", "port=Ethernet3"]) == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith("lab dc1: fault injected: link_down device=rtsw1 port=Ethernet3 (since ") and "{" not in out
    assert main(["lab", "status", "--site", "dc1", "-q"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("fault: link_down device=rtsw1 port=Ethernet3")
    assert lines[-1] == "lab dc1: running, 10 device(s), 1 fault(s)" and len(lines) == 2, lines
