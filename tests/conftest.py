"""Shared fixtures: the repo paths and a writable copy of a site inventory."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from nr_run.cli.common import PIPE_WIDTH

# Output width as off a terminal, whoever runs the tests: a developer's terminal (stdin a tty) or a runner that
# sets COLUMNS (pytest-xdist's workers say 80) would otherwise wrap the lines the tests read
os.environ["COLUMNS"] = str(PIPE_WIDTH)
# A test process holds gRPC threads (pygnmi clients) when it starts the CLI as a subprocess: gRPC's fork handlers,
# for a child that goes on using gRPC, can abort one that only execs ("Check failed: next_worker->state ==
# KICKED"), so they stay off; set before grpc is first imported
os.environ["GRPC_ENABLE_FORK_SUPPORT"] = "false"
# The twin's GCU checks a patch with its own checker; an outside validator is opt-in ($NR_RUN_SONIC_YANG) and
# words its refusals differently: the tests (and the twins they start) never use one a developer has set.
# .ci/run runs the outside checker on the rendered configs itself
os.environ.pop("NR_RUN_SONIC_YANG", None)

REPO = Path(__file__).resolve().parents[1]
DC1 = REPO / "inventory" / "dc1"
# Warnings a site with SONiC switches gets for BGP intent SONiC's bgpcfgd cannot carry (dc1 and dc2 ask for
# BFD and a peer-group name): expected on these sites, so "no findings" means none besides these
PLATFORM_LIMITS = frozenset({"sonic-bgp-intent"})


def unexpected(findings: list) -> list:
    """Findings other than the known platform-limit warnings."""
    return [f for f in findings if not (f.severity == "warning" and f.rule in PLATFORM_LIMITS)]


class SiteCopy:
    """A copy of inventory/dc1 in tmp_path that a test can edit as YAML."""

    def __init__(self, path: Path):
        self.path = path

    def load(self, name: str) -> dict:
        return yaml.safe_load((self.path / name).read_text())

    def save(self, name: str, data: dict) -> None:
        (self.path / name).write_text(yaml.safe_dump(data, sort_keys=False))

    def edit(self, name: str, fn) -> None:
        data = self.load(name)
        fn(data)
        self.save(name, data)


def edited_dc1(tmp_path: Path, edit: Callable[[dict], None]) -> Path:
    """An inventory folder in tmp_path holding a copy of dc1 with `edit` applied to its fabric.yaml (as YAML)."""
    inv = tmp_path / "inv"
    shutil.copytree(DC1, inv / "dc1")
    SiteCopy(inv / "dc1").edit("fabric.yaml", edit)
    return inv


@pytest.fixture
def site(tmp_path: Path) -> SiteCopy:
    target = tmp_path / "dc1"
    shutil.copytree(DC1, target)
    return SiteCopy(target)

# What a run writes by default, relative to the working directory: a test must never leave these in the checkout
CHECKOUT_OUTPUTS = (".nr-run", "out")


def _outputs() -> dict[str, list[str]]:
    return {name: sorted(str(p.relative_to(REPO)) for p in (REPO / name).rglob("*"))
            for name in CHECKOUT_OUTPUTS if (REPO / name).exists()}


@pytest.fixture(autouse=True, scope="session")
def _checkout_stays_clean() -> object:
    """Fail the session if a test wrote artifacts into the checkout (tests pass --artifacts/--out in tmp)."""
    before = _outputs()
    yield
    after = _outputs()
    assert after == before, f"tests wrote into the checkout: {after}"


@pytest.fixture(autouse=True)
def _private_lock_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deploy locks are host-wide (/run/lock/nr-run): tests take theirs in the session's temp folder."""
    monkeypatch.setenv("NR_RUN_LOCK_DIR", str(tmp_path_factory.getbasetemp() / "locks"))


# the session's one dc1 twin (dc1_lab) and its per-test fixtures (twin, deployed_twin) live with their helpers
pytest_plugins = ["tests.twin_site"]
