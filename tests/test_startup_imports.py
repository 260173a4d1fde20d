"""What a start-up loads: `nr-run --help` no pydantic (nor typing), `inventory validate` neither Nornir, the
platforms' collectors nor the twin. Checked on sys.modules of a fresh interpreter (CPU: benchmarks/bench_startup.py)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import DC1

PROBE = """
import contextlib, io, json, sys
from nr_run.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    rc = main(sys.argv[1:])
print(json.dumps({"rc": rc, "modules": sorted(sys.modules)}))
"""


def _loaded(*argv: str) -> tuple[int, set[str]]:
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    return result["rc"], set(result["modules"])


def _under(modules: set[str], *roots: str) -> list[str]:
    return sorted(m for m in modules if any(m == r or m.startswith(r + ".") for r in roots))


def test_help_loads_no_pydantic_and_no_product_layer() -> None:
    rc, modules = _loaded("--help")
    assert rc == 0
    assert _under(modules, "pydantic", "typing", "nornir", "yaml", "rich", "nr_run.platforms", "nr_run.lab") == []


def test_a_subcommand_help_loads_no_pydantic() -> None:
    rc, modules = _loaded("check", "--help")
    assert rc == 0
    assert _under(modules, "pydantic", "nornir", "nr_run.platforms") == []


def test_inventory_validate_loads_neither_nornir_collectors_nor_twin() -> None:
    rc, modules = _loaded("inventory", "validate", "--site", "dc1", "--inventory-dir", str(DC1.parent))
    assert rc == 0
    assert "nr_run.platforms.site" in modules            # it did compile and preflight the site
    assert _under(modules, "nornir", "napalm", "napalm_sonic", "pyeapi", "paramiko", "netmiko", "nr_run.lab",
                  "nr_run.validators", "nr_run.runbooks.check") == []
    assert [m for m in modules if m.startswith("nr_run.platforms.") and m.endswith(".collect")] == []
