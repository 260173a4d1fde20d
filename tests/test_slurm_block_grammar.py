"""topology/block output against Slurm's documented grammar (topology.conf(5), "topology/block"; SchedMD/slurm
doc/man/man5/topology.conf.5). Debian's Slurm (22.05) predates the block plugin (23.11), so no parser here can
read the file: this test is the check, on the shipped sites and on generated ones of every shape.

The documented rules: a line is `BlockName=<name> Nodes=<hostlist>` or `BlockSizes=<n>[,<n>...]`; parameter
names are case insensitive and "#" starts a comment; every block is named, uniquely; each block has at least the
planning base block size (the first BlockSizes value) of nodes; successive BlockSizes are a power of two larger
than the prior value. And what the site needs: every server in exactly one block, a higher level never joining
the units of two zones (Slurm pairs contiguous blocks in file order).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nr_run.intent import compile_site
from nr_run.runbooks.export.slurm import BLOCK_FILE, export_slurm
from nr_run.runbooks.hostlist import expand
from tests.conftest import REPO
from tests.sitegen import SmallSite, generate_zoned_site, write_shaped_site, write_small_site

_PAIR = re.compile(r"^([A-Za-z]+)=(\S+)$")


def parse_block_conf(text: str) -> tuple[list[tuple[str, list[str]]], list[int]]:
    """(blocks in file order as (name, nodes), BlockSizes) of a topology/block file; AssertionError on any line
    outside the documented grammar."""
    blocks: list[tuple[str, list[str]]] = []
    sizes: list[int] | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        pairs = [_PAIR.match(tok) for tok in line.split()]
        assert all(pairs), f"line {number}: not key=value pairs: {raw!r}"
        fields = {m.group(1).lower(): m.group(2) for m in pairs if m}
        assert len(fields) == len(pairs), f"line {number}: a parameter twice: {raw!r}"
        if set(fields) == {"blocksizes"}:
            assert sizes is None, f"line {number}: BlockSizes given twice"
            assert re.fullmatch(r"\d+(,\d+)*", fields["blocksizes"]), f"line {number}: {raw!r}"
            sizes = [int(v) for v in fields["blocksizes"].split(",")]
        else:
            assert set(fields) == {"blockname", "nodes"}, f"line {number}: expected BlockName= Nodes=: {raw!r}"
            blocks.append((fields["blockname"], expand(fields["nodes"])))
    assert sizes is not None and blocks, "a block file has blocks and BlockSizes"
    return blocks, sizes


def assert_documented(text: str, servers: set[str], zone_of: dict[str, int | None]) -> list[int]:
    blocks, sizes = parse_block_conf(text)
    names = [n for n, _ in blocks]
    assert len(set(names)) == len(names), names
    assert sizes[0] >= 1
    for prior, nxt in zip(sizes, sizes[1:], strict=False):
        ratio, rest = divmod(nxt, prior)
        assert rest == 0 and ratio >= 2 and ratio & (ratio - 1) == 0, f"{nxt} is not a power of two times {prior}"
    for name, nodes in blocks:
        assert len(nodes) >= sizes[0], f"block {name}: {len(nodes)} nodes, base size {sizes[0]}"
    placed = [n for _, nodes in blocks for n in nodes]
    assert sorted(placed) == sorted(servers), "every server in exactly one block"
    # a level of size s joins s / base contiguous blocks; none may hold servers of two zones
    for size in sizes[1:]:
        span = size // sizes[0]
        for start in range(0, len(blocks), span):
            zones = {zone_of[n] for _, nodes in blocks[start:start + span] for n in nodes}
            assert len(zones) == 1, f"BlockSizes {size} joins blocks of zones {sorted(map(str, zones))}"
    return sizes


def _check_site(site: Path) -> list[int]:
    intent = compile_site(site)
    servers = {d.name: d.zone for d in intent.devices.values() if d.role == "gpu" and d.nics}
    return assert_documented(export_slurm(intent)[BLOCK_FILE], set(servers), servers)


@pytest.mark.parametrize("site", ["dc1", "dc2", "star1", "mz1"])
def test_shipped_sites_follow_the_documented_block_grammar(site) -> None:
    _check_site(REPO / "inventory" / site)


@pytest.mark.parametrize("spec", [
    SmallSite(shape="multi-zone", zones=2, rails=2, servers_per_unit=2),
    SmallSite(shape="star", rails=2, nics_per_leaf=2, servers_per_unit=3, rtsw_platforms=("eos", "eos")),
    SmallSite(rails=2, servers_per_unit=2, rtsw_platforms=("eos", "sonic") * 3),
], ids=["multi-zone", "star", "clos-3-units"])
def test_generated_sites_follow_the_documented_block_grammar(spec, tmp_path) -> None:
    write = write_small_site if spec.shape == "clos" else write_shaped_site
    _check_site(write(tmp_path / "inventory", spec))


@pytest.mark.parametrize("units,sizes", [(3, [2]), (4, [2, 4, 8])])
def test_block_levels_stop_at_a_zone(units, sizes, tmp_path) -> None:
    """Zones of 3 units: pairing contiguous units would join zone 1's third with zone 2's first, so the base
    level only; zones of 4 units: levels up to a whole zone."""
    site = generate_zoned_site(tmp_path / "inventory", zones=2, units=units, atsw=1, servers=2, rails=2, ctsw=2)
    assert _check_site(site) == sizes


def test_the_grammar_check_refuses_what_the_man_page_forbids() -> None:
    servers = {f"n{i}": 1 for i in range(1, 5)}
    good = "BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\nBlockSizes=2,4\n"
    assert assert_documented(good, set(servers), servers) == [2, 4]
    for bad in ("BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\nBlockSizes=2,6\n",     # 6 = 3 x 2
                "BlockName=b1 Nodes=n1\nBlockName=b2 Nodes=n[2-4]\nBlockSizes=2\n",            # b1 below base
                "BlockName=b1 Nodes=n[1-2]\nBlockName=b1 Nodes=n[3-4]\nBlockSizes=2\n",        # name twice
                "BlockName=b1 Nodes=n[1-2] LinkSpeed=400\nBlockName=b2 Nodes=n[3-4]\nBlockSizes=2\n",
                "BlockName=b1 Nodes=n[1-2]\nBlockSizes=2\n"):                                  # n3, n4 unplaced
        with pytest.raises(AssertionError):
            assert_documented(bad, set(servers), servers)
    zones = {"n1": 1, "n2": 1, "n3": 2, "n4": 2}
    with pytest.raises(AssertionError, match="joins blocks of zones"):
        assert_documented("BlockName=b1 Nodes=n1\nBlockName=b2 Nodes=n[2-3]\nBlockName=b3 Nodes=n4\nBlockSizes=1,2\n",
                          set(zones), zones)
