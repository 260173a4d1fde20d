"""Capacity: oversubscription, bisection (exact for a two-tier Clos, max-flow otherwise) and the capacity
each destination RTSW keeps under failures."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nr_run.analysis import capacity
from nr_run.analysis.capacity import (
    MaxFlow,
    bisection,
    capacities,
    halves_max_flow,
    oversubscription,
    worst_case,
)
from nr_run.analysis.options import AnalysisOptions
from tests.analysis.fabrics import clos, generated, graph, site, small


def test_dc1_is_non_blocking_and_loses_half_toward_an_rtsw_with_one_uplink_down():
    result = capacity.analyse(site("dc1"), AnalysisOptions(failures=1))
    s = result.summary
    assert s["bisection_gbps"] == 1600 and s["bisection_share"] == 1.0
    assert s["bisection_method"] == "two-tier Clos, exact"
    assert s["worst_oversubscription"] == 1.0 and s["worst_destination_percent"] == 50.0
    rows = {r[0]: r for r in result.tables[2].rows}
    assert rows["rtsw3"] == ["rtsw3", 800.0, 50.0, "link ctsw1:Ethernet3-rtsw3:Ethernet0"]
    assert [r[1] for r in result.tables[3].rows] == [1, 8, 2, 4]          # sets alike: none, link, ctsw, rtsw
    fig = result.figures[0]
    assert fig.kind == "bar" and fig.data["labels"][0] == "none"
    assert fig.data["series"]["worst destination %"] == [100.0, 50.0, 50.0, 100.0]   # none, link, ctsw, rtsw


# one defect per case: spec, expected bisection share, worst oversubscription, worst destination % (K=1)
H = {"host_speed": "400G"}
CASES = [
    ("four CTSWs: an uplink is a quarter", clos(4, 2, 2, servers_per_unit=4, **H), 1.0, 1.0, 75.0),
    ("one CTSW: its failure cuts everything", clos(1, 2, 2, **H), 1.0, 1.0, 0.0),
    ("slow uplinks: 2:1 oversubscribed", clos(2, 2, 2, fabric_speed="100G", **H), 0.5, 2.0, 50.0),
    ("a removed uplink: irregular, that RTSW is 3:2 and keeps one of two", clos(3, 2, 2, servers_per_unit=3,
                                                                             remove_uplink=True, **H),
     2000 / 2400, 1.5, 50.0),
    ("a parallel uplink: rtsw1 keeps a third without ctsw1", clos(2, 2, 2, servers_per_unit=2, add_uplink=True,
                                                                  **H), 1.0, 1.0, 100 / 3),
]


@pytest.mark.parametrize("why,spec,share,over,worst", CASES, ids=[c[0] for c in CASES])
def test_capacity_defects(why, spec, share, over, worst):
    result = capacity.analyse(small(spec), AnalysisOptions(failures=1))
    s = result.summary
    assert s["bisection_share"] == pytest.approx(share, abs=1e-3)
    assert s["worst_oversubscription"] == pytest.approx(over, abs=1e-2)
    assert s["worst_destination_percent"] == pytest.approx(worst, abs=0.1)


def test_dc2_single_homed_rtsw_is_unreachable_after_its_link_fails():
    result = capacity.analyse(site("dc2"), AnalysisOptions(failures=1))
    warn = [f for f in result.findings if not f.passed]
    assert [f.subject for f in warn] == ["rtsw2"]
    assert warn[0].severity == "warning" and "unreachable" in warn[0].message
    assert result.summary["bisection_method"].startswith("max-flow")


@pytest.mark.parametrize("name", ["dc1", "dc2", "three-ctsw", "removed-uplink"])
def test_worst_case_equals_brute_force_over_every_single_failure(name):
    fabric = {"dc1": lambda: site("dc1"), "dc2": lambda: site("dc2"),
              "three-ctsw": lambda: small(clos(3, 2, 2)),
              "removed-uplink": lambda: small(clos(3, 2, 2, remove_uplink=True))}[name]()
    g = graph(fabric)
    worst, _per_set, healthy, _n = worst_case(g, 1)
    brute = {d: 1.0 for d in healthy}
    elements = [("switch", n) for n in g.switches] + [("link", lk.id) for lk in g.links]
    for x in [None, *elements]:
        failures = frozenset() if x is None else frozenset({x})
        caps = capacities(g, failures, symmetric=False)
        for d in healthy:
            if x != ("switch", d):
                brute[d] = min(brute[d], caps.get(d, 0) / healthy[d])
    assert {d: round(w, 6) for d, (w, _) in worst.items()} == {d: round(v, 6) for d, v in brute.items()}
    # the failure set reported for each destination does cause its worst case
    for d, (w, failures) in worst.items():
        assert capacities(g, failures, symmetric=False).get(d, 0) / healthy[d] == pytest.approx(w)


@pytest.mark.parametrize("spec", [clos(2, 2, 2), clos(4, 3, 2), clos(3, 4, 1)])
def test_exact_clos_bisection_equals_the_max_flow_across_the_halves(spec):
    g = graph(small(spec))
    exact = bisection(g)
    assert exact.method == "two-tier Clos, exact"
    assert exact.mbps == halves_max_flow(g)


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(ctsw=st.integers(1, 4), units=st.integers(1, 3), rails=st.integers(1, 2),
       fabric=st.sampled_from(["100G", "400G"]), servers=st.integers(1, 3))
def test_adding_a_ctsw_never_lowers_bisection(ctsw, units, rails, fabric, servers):
    before = bisection(graph(small(clos(ctsw, units, rails, fabric_speed=fabric, host_speed="400G",
                                        servers_per_unit=servers))))
    after = bisection(graph(small(clos(ctsw + 1, units, rails, fabric_speed=fabric, host_speed="400G",
                                       servers_per_unit=servers))))
    assert after.mbps >= before.mbps
    assert before.mbps <= before.full_mbps


def test_oversubscription_rows_per_tier():
    rows = oversubscription(graph(small(clos(2, 1, 2, fabric_speed="100G", host_speed="400G",
                                             servers_per_unit=2))))
    assert rows == [["rtsw", 2, 1600, 400, 4.0, "rtsw1"], ["ctsw", 2, 400, 0, None, None]]


def test_max_flow_on_a_textbook_network():
    # Cormen et al., Introduction to Algorithms, fig. 26.1: maximum flow 23
    flow = MaxFlow()
    for a, b, c in [("s", "v1", 16), ("s", "v2", 13), ("v2", "v1", 4), ("v1", "v3", 12), ("v3", "v2", 9),
                    ("v2", "v4", 14), ("v4", "v3", 7), ("v3", "t", 20), ("v4", "t", 4)]:
        flow.add(a, b, c)
    assert flow.run("s", "t") == 23
    assert MaxFlow().run("s", "t") == 0


@pytest.mark.long
def test_generated_site_capacity_under_every_single_failure():
    result = capacity.analyse(generated(64, 8, 8), AnalysisOptions(failures=1))
    assert result.summary["worst_destination_percent"] == 87.5          # one of eight uplinks
    assert result.summary["failure_sets_evaluated"] == 4
    assert result.summary["bisection_share"] == 1.0
