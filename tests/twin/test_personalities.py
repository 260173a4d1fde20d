"""The twin's shape: the shared lab asks each node's personality, never names a platform, and a platform that
fails to load stops the lab with an error instead of leaving its nodes silently unserved."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nr_run.lab.twin import personality as registry
from nr_run.lab.twin.clab import load_clab
from nr_run.lab.twin.lab import Lab
from nr_run.lab.twin.personality import PersonalityError

TWIN = Path(__file__).resolve().parents[2] / "lab" / "twin"
PLATFORM_NAMES = {p.platform for p in registry.all_personalities()}
SHARED = sorted([*TWIN.glob("*.py"), *(TWIN / "gnmi").glob("*.py"), *(TWIN / "model").glob("*.py")])


def _literals(tree: ast.AST) -> list[tuple[int, str]]:
    """String constants that are not docstrings."""
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


@pytest.mark.parametrize("path", SHARED, ids=lambda p: str(p.relative_to(TWIN)))
def test_shared_twin_code_names_no_platform(path: Path):
    if path.name == "personality.py":          # the registry: platform -> its personality module
        return
    found = [(line, s) for line, s in _literals(ast.parse(path.read_text())) if s in PLATFORM_NAMES]
    assert found == [], f"{path.name} branches on platform names at {found}: ask the node's personality"


def _topology(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / "toy.clab.yml"
    path.write_text(f"name: toy\ntopology:\n  nodes:\n    sw1:\n      kind: {kind}\n")
    return path


def test_a_personality_that_fails_to_import_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(registry.PERSONALITIES, "toy", "nr_run.lab.twin.no_such_platform:PERSONALITY")
    with pytest.raises(PersonalityError, match="nr_run.lab.twin.no_such_platform"):
        load_clab(_topology(tmp_path, "ceos"))


class _ToyPersonality:
    """A platform whose service module is missing (a typo in its dotted path, a module that fails to import)."""

    platform = "toy"
    kinds = ("toy-os",)
    service = "nr_run.lab.twin.no_such_service:ToyService"
    credentials = ("admin", "admin")
    channels = (0,)
    gnmi_models: tuple[tuple[str, str, str], ...] = ()
    fault_kinds: frozenset[str] = frozenset()

    def port_name(self, endpoint: str, port_map: list[str]) -> str | None:
        return endpoint

    def port_map(self, startup: str | None) -> list[str]:
        return []

    def model(self, startup: str | None) -> str:
        return "toy"


def test_a_service_that_fails_to_import_stops_the_lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(registry.PERSONALITIES, "toy", "unused:PERSONALITY")
    monkeypatch.setitem(registry._LOADED, "toy", _ToyPersonality())
    topo = _topology(tmp_path, "toy-os")
    assert load_clab(topo).nodes["sw1"].platform == "toy"
    with pytest.raises(PersonalityError, match="no_such_service"):
        Lab(topo, tmp_path / "state", base_port=0)
