"""Benchmarks measure nr-run as installed: a wheel install byte-compiles its modules (pip does), so a child
process imports cached bytecode. Source checkouts here run with PYTHONDONTWRITEBYTECODE, which would make every
measured process compile every module it imports, a cost no installed nr-run (or pyavd, compiled by pip) pays."""

from __future__ import annotations

import compileall
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("nr_run", "runbooks", "validators", "lab", "templates", "napalm_sonic")


def installed_env() -> dict[str, str]:
    """Byte-compile the package folders once and return the environment for measured children (bytecode
    caches read, as an installed package's are)."""
    for name in PACKAGES:
        if (REPO / name).is_dir():
            compileall.compile_dir(str(REPO / name), quiet=1)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env
