"""`nr-run render` builds each device's structured config once: the safety preflight's QoS views and the render
share it; no other command keeps structured configs."""

from __future__ import annotations

import contextlib
import io
from collections import Counter

import pytest

from nr_run.cli.main import main
from nr_run.platforms import built, registry
from tests.conftest import DC1


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Count the structured configs the platforms' builders make (the real builders do the work)."""
    counted: Counter = Counter()
    for name in registry.names():
        if registry.get(name).config is None:
            continue
        cls = type(registry.get(name).config)
        real = cls.structured_config

        def counting(self, device, fabric=None, _real=real):
            counted[device.name] += 1
            return _real(self, device, fabric)
        monkeypatch.setattr(cls, "structured_config", counting)
    return counted


def _quiet(*argv: str) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(list(argv))


def test_render_builds_each_switch_once(builds: Counter, tmp_path) -> None:
    rc = _quiet("render", "--site", "dc1", "--inventory-dir", str(DC1.parent), "--out", str(tmp_path), "--json")
    assert rc == 0
    switches = sorted(p.stem for p in tmp_path.iterdir())
    assert len(switches) == 10 and dict(builds) == {s: 1 for s in switches}
    assert built._SHARED is None                     # nothing kept once the command is over


def test_rendered_configs_are_the_same_with_and_without_sharing(tmp_path) -> None:
    shared, alone = tmp_path / "shared", tmp_path / "alone"
    assert _quiet("render", "--site", "dc1", "--inventory-dir", str(DC1.parent), "--out", str(shared), "--json") == 0
    from nr_run.intent import compile_site
    from nr_run.runbooks.render import render_site, write_configs

    fabric = compile_site(DC1)
    write_configs(render_site(fabric), alone, fabric)
    assert {p.name: p.read_text() for p in shared.iterdir()} == {p.name: p.read_text() for p in alone.iterdir()}


def test_validate_keeps_no_structured_config(builds: Counter) -> None:
    assert _quiet("inventory", "validate", "--site", "dc1", "--inventory-dir", str(DC1.parent)) == 0
    assert built._SHARED is None and builds        # the preflight built its views, and kept none
