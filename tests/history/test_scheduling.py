"""The shipped systemd units and cron file: `systemd-analyze verify` where it exists (any warning about a unit
fails), and everywhere a strict parse: known sections and keys only, and every nr-run command line in them is
one the CLI accepts."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from nr_run.cli.main import build_parser
from tests.conftest import REPO

UNITS = REPO / "deploy" / "systemd"
BIN = "/opt/nr-run/venv/bin/nr-run"
KEYS = {
    "Unit": {"Description", "Documentation", "Wants", "After"},
    "Service": {"Type", "User", "Group", "WorkingDirectory", "EnvironmentFile", "ExecStart", "SuccessExitStatus",
                "TimeoutStartSec", "TimeoutStopSec", "KillSignal", "Restart", "RestartSec", "UMask",
                "NoNewPrivileges", "PrivateTmp", "ProtectSystem", "ProtectHome", "ReadWritePaths"},
    "Timer": {"OnCalendar", "RandomizedDelaySec", "Persistent", "Unit", "OnBootSec", "OnUnitInactiveSec"},
    "Install": {"WantedBy"},
}
EXPECTED = {"nr-run-compliance@.service", "nr-run-compliance@.timer", "nr-run-watch@.service",
            "nr-run-watch@.timer", "nr-run-exporter@.service"}


def parse_unit(path: Path) -> dict[str, dict[str, str]]:
    """Sections -> keys; a line outside a section, a duplicate or unknown key, or a bad line fails."""
    sections: dict[str, dict[str, str]] = {}
    current = None
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
            assert current in KEYS and current not in sections, f"{path.name}:{n}: section {current}"
            sections[current] = {}
            continue
        assert current is not None and "=" in line, f"{path.name}:{n}: {line!r}"
        key, value = (p.strip() for p in line.split("=", 1))
        assert key in KEYS[current], f"{path.name}:{n}: unknown key {key} in [{current}]"
        assert key not in sections[current], f"{path.name}:{n}: duplicate {key}"
        sections[current][key] = value
    return sections


def nr_run_args(command: str) -> list[str]:
    """The nr-run arguments of a command line (instance %i -> dc1), checked by the CLI's own parser."""
    words = shlex.split(command.replace("%i", "dc1"))
    assert words[0] == BIN, command
    args = build_parser().parse_args(words[1:])
    assert args.site == "dc1"
    return words[1:]


def test_units_parse_strictly_and_run_valid_commands() -> None:
    assert {p.name for p in UNITS.glob("*@.*")} == EXPECTED
    units = {p.name: parse_unit(p) for p in UNITS.glob("*@.*")}
    for name, u in units.items():
        assert u["Unit"]["Description"], name
        if name.endswith(".service"):
            assert u["Service"]["User"] == "nr-run" and u["Service"]["UMask"] == "0077", name
            nr_run_args(u["Service"]["ExecStart"])
        else:
            target = u["Timer"]["Unit"].replace("%i", "")
            assert target in units and u["Install"]["WantedBy"] == "timers.target", name
    assert units["nr-run-compliance@.service"]["Service"]["SuccessExitStatus"] == "2"   # drift only is a result
    assert units["nr-run-compliance@.service"]["Service"]["Type"] == "oneshot"
    assert nr_run_args(units["nr-run-watch@.service"]["Service"]["ExecStart"])[0] == "watch"
    assert "--listen" in nr_run_args(units["nr-run-exporter@.service"]["Service"]["ExecStart"])


def test_cron_lines_run_valid_commands() -> None:
    lines = [ln for ln in (UNITS / "nr-run.cron").read_text().splitlines() if ln and not ln.startswith("#")]
    jobs = [ln for ln in lines if "=" not in ln.split()[0]]
    assert len(jobs) == 2
    for line in jobs:
        fields = line.split(None, 6 if not line.startswith("@") else 2)
        user, command = (fields[5], fields[6]) if not line.startswith("@") else (fields[1], fields[2])
        assert user == "nr-run"
        steps = [step.strip() for step in command.split("&&")]
        # the credentials reach nr-run's environment only when exported (cron has no EnvironmentFile)
        assert steps[:4] == ["cd /srv/nr-run", "set -a", ". /etc/nr-run/credentials.env", "set +a"], steps
        nr_run_args(steps[4].split(">>")[0])


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed (no systemd)")
def test_systemd_analyze_verify(tmp_path: Path) -> None:
    """verify the instances for site dc1, with ExecStart pointed at this checkout's nr-run (verify checks that
    the program exists) and the working directory at a temporary one."""
    import sys

    exe = Path(sys.executable).with_name("nr-run")
    assert exe.exists(), exe
    paths = []
    for unit in sorted(UNITS.glob("*@.*")):
        text = unit.read_text().replace(BIN, str(exe)).replace("/srv/nr-run", str(tmp_path))
        out = tmp_path / unit.name.replace("@.", "@dc1.")
        out.write_text(text)
        paths.append(str(out))
    proc = subprocess.run(["systemd-analyze", "verify", *paths], capture_output=True, text=True, timeout=60)
    problems = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "nr-run" in ln]
    assert proc.returncode == 0 and not problems, proc.stdout + proc.stderr
