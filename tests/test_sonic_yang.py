"""Every rendered SONiC config_db passes SONiC's own YANG models (tests/sonic_yang: the vendored models and
a libyang validator of this repository's own; .ci/run also runs the outside checker ../shared/sonic-yang)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nr_run.intent import compile_site
from nr_run.runbooks.render import render_site
from tests.sonic_yang.validator import Report, validate

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "tests" / "sonic_yang" / "cases"


def validate_text(config: str) -> Report:
    """The report for a rendered config_db text; a table the models do not describe fails it."""
    report = validate(json.loads(config))
    assert report.unchecked == [], f"tables the models do not describe: {report.unchecked}"
    return report


@pytest.fixture(scope="module")
def sonic_configs() -> dict[str, str]:
    fabric = compile_site(REPO / "inventory" / "dc1")
    configs = {n: c for n, c in render_site(fabric).items() if fabric.devices[n].platform == "sonic"}
    assert sorted(configs) == ["rtsw3", "rtsw4"]
    return configs


@pytest.mark.parametrize("name", ["rtsw3", "rtsw4"])
def test_rendered_config_passes_yang(sonic_configs, name):
    report = validate_text(sonic_configs[name])
    assert report.errors == [] and report.entries > 50


def test_broken_reference_fails_yang(sonic_configs):
    """Drop the lossless PG profile that BUFFER_PG points at: the validator must say so."""
    db = json.loads(sonic_configs["rtsw3"])
    referenced = db["BUFFER_PG"]["Ethernet0|3"]["profile"]
    del db["BUFFER_PROFILE"][referenced]
    errors = validate_text(json.dumps(db)).errors
    assert any("BUFFER_PG_LIST[port='Ethernet0'][pg_num='3']/profile" in e and referenced in e for e in errors), errors


def test_mismatched_watchdog_fails_yang(sonic_configs):
    """A detection time below the poll interval is rejected by sonic-pfcwd.yang."""
    db = json.loads(sonic_configs["rtsw4"])
    db["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"] = "300"
    errors = validate_text(json.dumps(db)).errors
    assert errors and all("/PFC_WD/" in e for e in errors), errors
    assert any("detection_time must be greater than or equal to POLL_INTERVAL" in e for e in errors), errors


@pytest.mark.parametrize("case", sorted(p.name for p in (CASES / "good").glob("*.json")))
def test_corpus_good_passes(case):
    assert validate(json.loads((CASES / "good" / case).read_text())).errors == []


_EXPECT = re.compile(r"^(?P<table>[A-Z_]+)\|(?P<key>\S+)(?: field '(?P<field>[^']+)')?")


@pytest.mark.parametrize("case", sorted(p.stem for p in (CASES / "bad").glob("*.json")))
def test_corpus_bad_fails_naming_the_entry(case):
    errors = validate(json.loads((CASES / "bad" / f"{case}.json").read_text())).errors
    assert errors
    expect = CASES / "bad" / f"{case}.expect"
    lines = [ln for ln in expect.read_text().splitlines() if ln and not ln.startswith("#")] if expect.exists() else []
    m = _EXPECT.match(lines[0]) if lines else None
    if m:          # the error names the table's entry (its first key part) and the field
        table, first, fld = m.group("table"), m.group("key").split("|")[0], m.group("field") or ""
        assert any(f"/{table}/" in e and f"'{first}'" in e and fld in e for e in errors), (lines[0], errors)


@pytest.mark.long
def test_generated_large_site_sonic_config_passes_yang(tmp_path):
    """A 32-port SONiC RTSW of the 512-RTSW scale site (16 uplinks, 16 host ports) is valid too."""
    from tests.sitegen import generate_site

    fabric = compile_site(generate_site(tmp_path / "site", rtsw=16, ctsw=16))
    name = next(d.name for d in fabric.switches() if d.platform == "sonic")
    assert validate_text(render_site(fabric, hosts=[name])[name]).errors == []
