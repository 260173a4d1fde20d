"""The failure-symmetry reduction against exhaustive enumeration on every shape (star, clos, multi-zone): the
capacity worst case and the deadlock verdict over every single link or switch failure equal what one
representative per orbit finds."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nr_run.analysis.capacity import capacities, worst_case
from nr_run.analysis.deadlock import evaluate, find_cycles
from nr_run.analysis.graph import FabricGraph
from nr_run.intent import compile_site
from nr_run.intent.models import FabricIntent
from tests.analysis.fabrics import graph, site
from tests.sitegen import SmallSite, write_shaped_site, write_small_site


def _elements(g: FabricGraph) -> list[tuple[str, str | int]]:
    return [("switch", n) for n in sorted(g.switches)] + [("link", lk.id) for lk in g.links]


def _row(g: FabricGraph, failures: frozenset, healthy: dict[str, int]) -> tuple[float, float, int] | None:
    """(worst %, mean %, unreachable) over the live destinations, as worst_case's per-set table has them."""
    caps = capacities(g, failures, symmetric=False)
    dead = {v for k, v in failures if k == "switch"}
    shares = [caps.get(d, 0) / b for d, b in healthy.items() if d not in dead and b]
    if not shares:
        return None
    return round(100 * min(shares), 1), round(100 * sum(shares) / len(shares), 1), sum(1 for s in shares if s == 0)


def assert_reduction_is_exact(fabric: FabricIntent) -> None:
    g = graph(fabric)
    worst, per_set, healthy, evaluated = worst_case(g, 1)
    brute = dict.fromkeys(healthy, 1.0)
    cycles: dict[object, bool] = {}
    cls_of = {n: i for i, members in enumerate(g.twin_classes()) for n in members}
    reps = {g._canonical(f, cls_of): f for f in g.failure_reps(1)}
    rows = {r[0]: tuple(r[2:]) for r in per_set}
    # every single failure falls in one representative's orbit, and the orbits add up to all of them
    assert sum(g.orbit_size(f) or 0 for f in reps.values() if f) == len(_elements(g))
    for x in [None, *_elements(g)]:
        failures = frozenset() if x is None else frozenset({x})
        caps = capacities(g, failures, symmetric=False)
        for d in healthy:
            if x != ("switch", d) and healthy[d]:
                brute[d] = min(brute[d], caps.get(d, 0) / healthy[d])
        cycles[x] = bool(find_cycles(g, failures, exhaustive=True)[0])
        rep = reps[g._canonical(failures, cls_of)]
        assert rows.get(g.describe(rep)) == _row(g, failures, healthy), (g.describe(failures), g.describe(rep))
    assert {d: round(w, 9) for d, (w, _) in worst.items()} == \
        {d: round(v, 9) for d, v in brute.items() if healthy[d]}
    for d, (w, failures) in worst.items():      # the reported set causes that worst case
        assert capacities(g, failures, symmetric=False).get(d, 0) / healthy[d] == pytest.approx(w)
    found, counts = evaluate(g, 1)
    assert bool(found) == any(cycles.values())
    assert counts["evaluated"] == evaluated <= len(cycles)


@pytest.mark.parametrize("name", ["dc1", "dc2", "star1", "mz1"])
def test_the_inventory_sites_reduce_exactly(name):
    assert_reduction_is_exact(site(name))


@st.composite
def shaped(draw: st.DrawFn) -> SmallSite:
    shape = draw(st.sampled_from(["star", "clos", "multi-zone"]))
    rails = draw(st.integers(1, 2))
    platforms = st.sampled_from(["eos", "sonic"])
    return SmallSite(
        shape=shape, rails=rails, zones=draw(st.integers(1, 2)) if shape == "multi-zone" else 1,
        rtsw_platforms=tuple(draw(st.lists(platforms, min_size=rails, max_size=rails))) * draw(st.integers(1, 2)),
        ctsw_platforms=tuple(draw(st.lists(platforms, min_size=1, max_size=3))),
        atsw_platforms=tuple(draw(st.lists(platforms, min_size=1, max_size=2))),
        servers_per_unit=draw(st.integers(1, 2)),
        nics_per_leaf=draw(st.integers(1, 2)) if shape == "star" else 1,
        remove_uplink=shape == "clos" and draw(st.booleans()),
        add_uplink=shape == "clos" and draw(st.booleans()))


@pytest.mark.long
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(spec=shaped())
def test_generated_sites_of_every_shape_reduce_exactly(spec):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "inventory"
        directory = write_small_site(root, spec) if spec.shape == "clos" else write_shaped_site(root, spec)
        fabric = compile_site(directory)
    assert_reduction_is_exact(fabric)
