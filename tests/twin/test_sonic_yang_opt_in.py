"""The twin's GCU judges a patch with its own YANG checker unless $NR_RUN_SONIC_YANG names an outside one:
no folder beside the tree is looked for, so a fresh clone's twin behaves as CI's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from nr_run.lab.twin.sonic import gcu

OUTSIDE = "#!{python}\nimport sys\nprint('ERROR: refused by the outside checker:', sys.argv[1].endswith('.json'))\nsys.exit(1)\n"


def test_without_the_variable_the_twins_own_checker_judges(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(gcu.YANG_ENV, raising=False)
    assert gcu.yang_validator() is None
    assert gcu.yang_errors({}) == gcu.check({})


def test_an_outside_checker_is_used_only_when_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "validate"
    script.write_text(OUTSIDE.format(python=sys.executable))
    monkeypatch.setenv(gcu.YANG_ENV, str(script))
    assert gcu.yang_validator() == script
    assert gcu.yang_errors({}) == ["ERROR: refused by the outside checker: True"]
    monkeypatch.setenv(gcu.YANG_ENV, str(tmp_path / "absent"))          # a name that is no file: not used
    assert gcu.yang_validator() is None
