"""SONiC click tables against sonic-utilities' published outputs (tests/conformance/upstream/sonic-utilities): the
twin's `show interfaces status` and `show interfaces description` over SSH, and the upstream strings, parsed by
the same table parser, must have the same columns, and each column's values must be of a kind the upstream
column has (a number, a lane list, a speed such as 400G, N/A, a word; descriptions are free text)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from napalm_sonic.parsers import parse_table
from tests.twin_site import TwinSite, ssh_run

UPSTREAM = Path(__file__).parent / "upstream" / "sonic-utilities"
COMMANDS = {"show interfaces status": "show_interfaces_status.txt",
            "show interfaces description": "show_interfaces_description.txt"}
SONIC_NODES = ["rtsw3", "rtsw4"]


def kind(value: str) -> str:
    if value == "N/A":
        return "n/a"
    if value.isdigit():
        return "number"
    if re.fullmatch(r"\d+(,\d+)+", value):
        return "lanes"
    if re.fullmatch(r"\d+[GM]", value):
        return "speed"
    if re.fullmatch(r"Ethernet\d+|PortChannel\d+", value):
        return "port"
    return "word"


def kinds(rows: list[dict[str, str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for row in rows:
        for column, value in row.items():
            out.setdefault(column, set()).add(kind(value))
    return out


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_sonic_table_has_the_published_columns_and_kinds(deployed_twin: TwinSite, command: str):
    upstream = kinds(parse_table((UPSTREAM / COMMANDS[command]).read_text()))
    for node in SONIC_NODES:
        client = deployed_twin.ssh(node, password="YourPaSsWoRd")
        try:
            rc, out = ssh_run(client, command)
        finally:
            client.close()
        rows = parse_table(out)
        assert rc == 0 and rows, out
        mine = kinds(rows)
        assert list(rows[0]) == list(parse_table((UPSTREAM / COMMANDS[command]).read_text())[0]), out
        # a description is free text: any kind
        odd = {c: sorted(k - upstream[c]) for c, k in mine.items() if c != "Description" and k - upstream[c]}
        assert not odd, f"{node}: {command}: columns with values of a kind upstream never shows: {odd}\n{out}"
