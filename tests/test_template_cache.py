"""Compiled templates are cached between runs, in a directory only this user can write, and never used for a
template whose source changed; nothing is cached when Python is told not to write bytecode."""

from __future__ import annotations

import stat
import sys
import tempfile
from pathlib import Path

import pytest

from nr_run.platforms import jinja_env


@pytest.fixture
def cache_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    jinja_env._bytecode_cache.cache_clear()
    yield tmp_path
    jinja_env._bytecode_cache.cache_clear()


def test_a_changed_template_is_compiled_again_not_taken_from_the_cache(cache_in: Path, tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "main.j2").write_text("one {{ x }}\n")
    assert jinja_env.render_environment(str(folder)).get_template("main.j2").render(x=1) == "one 1\n"
    cached = [p for p in cache_in.rglob("*.cache")]
    assert cached, "the compiled template was not cached"
    (folder / "main.j2").write_text("two {{ x }}\n")
    assert jinja_env.render_environment(str(folder)).get_template("main.j2").render(x=1) == "two 1\n"
    home = cached[0].parent
    assert stat.S_IMODE(home.stat().st_mode) == 0o700


def test_a_cache_directory_another_user_owns_is_not_used(cache_in: Path) -> None:
    import os

    if os.getuid() != 0:
        pytest.skip("giving the directory to another user needs root")
    planted = cache_in / f"_jinja2-cache-{os.getuid()}"
    planted.mkdir(mode=0o700)
    os.chown(planted, 65534, 65534)                   # nobody's: whatever is in it could be anyone's code
    assert jinja_env._bytecode_cache() is None


def test_no_template_cache_when_python_writes_no_bytecode(cache_in: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    jinja_env._bytecode_cache.cache_clear()
    assert jinja_env._bytecode_cache() is None
    folder = cache_in / "t"
    folder.mkdir()
    (folder / "main.j2").write_text("{{ x }}")
    assert jinja_env.render_environment(str(folder)).get_template("main.j2").render(x=2) == "2"
    assert not list(cache_in.rglob("*.cache"))
