"""EOS text replies against published device outputs: the twin's text for a command is parsed with the
ntc-templates template engineers use (textfsm), and its records must have the shape the template gives the
upstream samples (tests/conformance/upstream/ntc-templates, see SOURCE.txt): the same keys, the same value
types, and every field that every published sample fills filled here too."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
import yaml
from ntc_templates.parse import parse_output

from tests.twin_site import TwinSite

UPSTREAM = Path(__file__).parent / "upstream" / "ntc-templates" / "arista_eos"
COMMANDS = sorted(d.name.replace("_", " ") for d in UPSTREAM.iterdir() if d.is_dir())
EOS_NODES = ["ctsw1", "ctsw2", "rtsw1", "rtsw2"]
TARGET = 0.90           # the share of (command, node) replies that must parse to the samples' shape


def _parse(command: str, text: str) -> list[dict]:
    return parse_output(platform="arista_eos", command=command, data=text)


@cache
def samples(command: str) -> list[list[dict]]:
    """Each published sample of a command, parsed by the installed template (its .yml says what upstream got)."""
    out = []
    for raw in sorted((UPSTREAM / command.replace(" ", "_")).glob("*.raw")):
        out.append(_parse(command, raw.read_text()))
    return out


def shape(command: str) -> tuple[dict[str, str], set[str]]:
    """(field -> value type, fields every record of every sample fills)."""
    types: dict[str, str] = {}
    always: set[str] | None = None
    for records in samples(command):
        for rec in records:
            types.update({k: type(v).__name__ for k, v in rec.items()})
            filled = {k for k, v in rec.items() if v not in ("", [], None)}
            always = filled if always is None else always & filled
    return types, always or set()


def mismatches(command: str, records: list[dict]) -> list[str]:
    """What keeps the twin's records from having the published samples' shape (empty: none)."""
    if not records:
        return ["no record parsed"]
    types, always = shape(command)
    out = []
    for i, rec in enumerate(records):
        if set(rec) != set(types):
            out.append(f"record {i}: keys {sorted(set(rec) ^ set(types))} differ")
        out += [f"record {i}: {k} is {type(v).__name__}, samples have {types[k]}" for k, v in rec.items()
                if k in types and type(v).__name__ != types[k]]
        out += [f"record {i}: {k} empty (every sample fills it)" for k in sorted(always)
                if rec.get(k) in ("", [], None)]
    return out


def test_the_installed_templates_parse_the_published_samples_as_upstream_does():
    for command in COMMANDS:
        for raw in sorted((UPSTREAM / command.replace(" ", "_")).glob("*.raw")):
            want = yaml.safe_load(raw.with_suffix(".yml").read_text())["parsed_sample"]
            got = _parse(command, raw.read_text())
            # one inventory sample was recorded with an older template; its records differ only there
            if raw.name != "arista_eos_show_inventory1.raw":
                assert got == want, raw.name


@pytest.fixture(scope="module")
def replies(dc1_lab: Path, dc1_deployed: str, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], str]:
    """Every (command, EOS node) text reply of the deployed dc1 twin, read through pyeapi."""
    from nr_run.lab.twin.lab import lab_reset

    lab_reset(dc1_lab, dc1_deployed)
    site = TwinSite(dc1_lab, tmp_path_factory.mktemp("ntc"))
    out = {}
    for node in EOS_NODES:
        eapi = site.eapi(node)
        for command in COMMANDS:
            out[(command, node)] = eapi.enable([command], encoding="text")[0]["result"]["output"]
    return out


@pytest.mark.parametrize("command", COMMANDS)
def test_text_reply_has_the_published_shape(replies: dict[tuple[str, str], str], command: str):
    for node in EOS_NODES:
        text = replies[(command, node)]
        assert not text.lstrip().startswith("{"), f"{node}: {command} answered JSON in text"
        problems = mismatches(command, _parse(command, text))
        assert not problems, f"{node}: {command}: {problems[:5]}\n{text[:1500]}"


def test_textfsm_parses_at_least_90_percent_of_the_replies(replies: dict[tuple[str, str], str]):
    ok = [key for key, text in replies.items() if not mismatches(key[0], _parse(key[0], text))]
    assert len(ok) >= TARGET * len(replies), sorted(set(replies) - set(ok))
