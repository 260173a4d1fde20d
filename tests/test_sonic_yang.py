"""Every rendered SONiC config_db passes SONiC's own YANG models (../shared/sonic-yang/validate).

The validator and yanglint are required: a missing one fails these tests (set NR_RUN_SONIC_YANG to the
validator's path when ../shared is elsewhere), it never turns them into a silent pass."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from nr_run.intent import compile_site
from nr_run.runbooks.render import render_site

REPO = Path(__file__).resolve().parents[1]
VALIDATOR = Path(os.environ.get("NR_RUN_SONIC_YANG", REPO.parent / "shared" / "sonic-yang" / "validate"))


def _validate(path: Path) -> subprocess.CompletedProcess[str]:
    if not VALIDATOR.is_file():
        pytest.fail(f"SONiC YANG validator not found at {VALIDATOR} (../shared/sonic-yang or NR_RUN_SONIC_YANG)")
    if shutil.which("yanglint") is None:
        pytest.fail("yanglint is missing: apt-get install -y libyang-tools")
    return subprocess.run([str(VALIDATOR), str(path)], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def sonic_configs() -> dict[str, str]:
    fabric = compile_site(REPO / "inventory" / "dc1")
    configs = {n: c for n, c in render_site(fabric).items() if fabric.devices[n].platform == "sonic"}
    assert sorted(configs) == ["rtsw3", "rtsw4"]
    return configs


@pytest.mark.parametrize("name", ["rtsw3", "rtsw4"])
def test_rendered_config_passes_yang(sonic_configs, tmp_path, name):
    path = tmp_path / f"{name}.json"
    path.write_text(sonic_configs[name])
    proc = _validate(path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK:" in proc.stdout


def test_broken_reference_fails_yang(sonic_configs, tmp_path):
    """Drop the lossless PG profile that BUFFER_PG points at: the validator must say so."""
    db = json.loads(sonic_configs["rtsw3"])
    referenced = db["BUFFER_PG"]["Ethernet0|3"]["profile"]
    del db["BUFFER_PROFILE"][referenced]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(db, indent=4))
    proc = _validate(path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"ERROR BUFFER_PG|Ethernet0|3 field 'profile': value '{referenced}'" in proc.stdout
    assert "INVALID" in proc.stdout


def test_mismatched_watchdog_fails_yang(sonic_configs, tmp_path):
    """A detection time below the poll interval is rejected by sonic-pfcwd.yang."""
    db = json.loads(sonic_configs["rtsw4"])
    db["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"] = "300"
    path = tmp_path / "bad_pfcwd.json"
    path.write_text(json.dumps(db, indent=4))
    proc = _validate(path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "PFC_WD" in proc.stdout


@pytest.mark.slow
def test_generated_large_site_sonic_config_passes_yang(tmp_path):
    """A 32-port SONiC RTSW of the 512-RTSW scale site (16 uplinks, 16 host ports) is valid too."""
    from tests.sitegen import generate_site

    fabric = compile_site(generate_site(tmp_path / "site", rtsw=16, ctsw=16))
    name = next(d.name for d in fabric.switches() if d.platform == "sonic")
    path = tmp_path / f"{name}.json"
    path.write_text(render_site(fabric, hosts=[name])[name])
    proc = _validate(path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
