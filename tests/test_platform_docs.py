"""docs/platforms.md's table of optional capabilities is the code's (nr_run.platforms.base.CAPABILITIES)."""

from __future__ import annotations

import re
from pathlib import Path

from nr_run.platforms import registry
from nr_run.platforms.base import CAPABILITIES

DOC = Path(__file__).resolve().parent.parent / "docs" / "platforms.md"


def _rows() -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8")
    table = text.split("| capability | part | member | needed by | without it |", 1)[1].split("\n\n", 1)[0]
    cells = [re.split(r"(?<!\\)\|", line.strip().strip("|")) for line in table.strip().splitlines()[1:]]
    return [[c.strip() for c in row] for row in cells]


def test_the_documented_capabilities_are_the_code_s() -> None:
    documented = [(name.strip("`"), part.strip("`"), member.split("`")[1].split("(")[0].split(":")[0],
                   tuple(n for n in needed.split(", ") if n != "-"), without)
                  for name, part, member, needed, without in _rows()]
    coded = [(c.name, c.part, c.member, c.needed_by, c.without) for c in CAPABILITIES]
    assert documented == coded


def test_the_built_in_platforms_offer_what_their_commands_need() -> None:
    assert registry.capabilities("eos") == ["QosView", "EcmpHashFields", "PortAliases", "MarksDevices",
                                            "ReplaceCandidate", "BatchedCommit", "RouteLookup"]
    assert registry.capabilities("sonic") == ["QosView", "EcmpHashFields", "PortAliases", "ApplyMethod",
                                              "MarksDevices", "ShiftsTraffic", "RouteLookup", "CounterPorts"]
    assert registry.capabilities("linux") == ["QosView", "MarksDevices"]
    for name in registry.names():
        for command in {n for c in CAPABILITIES for n in c.needed_by}:
            assert registry.missing(name, command) == [], (name, command)
