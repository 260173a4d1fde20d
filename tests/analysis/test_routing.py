"""The eBGP routing model: next hops per destination, loop prevention, ECMP width, failures, static routes,
and the twin symmetry that computes one destination per class."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nr_run.analysis.graph import Failed
from nr_run.analysis.routing import Routes, StaticRoute
from tests.analysis.fabrics import (
    clos,
    generated,
    graph,
    link_id,
    site,
    small,
    with_ctsw_asns,
    with_maximum_paths,
)
from tests.sitegen import SmallSite


def peers(g, routes, switch, dest):
    return sorted(g.links[lid].peer(switch) for lid in routes.next_hops(switch, dest))


def test_dc1_healthy_routes_are_two_way_ecmp_up_and_one_link_down():
    g = graph(site("dc1"))
    r = Routes(g)
    for src in ("rtsw1", "rtsw2", "rtsw3", "rtsw4"):
        for dst in ("rtsw1", "rtsw2", "rtsw3", "rtsw4"):
            assert peers(g, r, src, dst) == ([] if src == dst else ["ctsw1", "ctsw2"])
    assert peers(g, r, "ctsw1", "rtsw3") == ["rtsw3"]
    # CTSWs share one ASN: a CTSW never accepts another CTSW's loopback through an RTSW
    assert peers(g, r, "ctsw1", "ctsw2") == []
    assert r.table("rtsw1").length["rtsw4"] == 2


# one defect per case: (failures as (kind, a, b)), switch, destination, expected next-hop peers
CASES = [
    ("uplink down: CTSW loses the destination", [("link", "rtsw1", "ctsw1")], "ctsw1", "rtsw1", []),
    ("uplink down: others go around it", [("link", "rtsw1", "ctsw1")], "rtsw2", "rtsw1", ["ctsw2"]),
    ("uplink down: the RTSW itself still uses its other uplink", [("link", "rtsw1", "ctsw1")], "rtsw1", "rtsw2",
     ["ctsw2"]),
    ("CTSW down", [("switch", "ctsw2", "")], "rtsw3", "rtsw4", ["ctsw1"]),
    ("destination RTSW down", [("switch", "rtsw4", "")], "rtsw3", "rtsw4", []),
    ("both uplinks of the source down", [("link", "rtsw1", "ctsw1"), ("link", "rtsw1", "ctsw2")], "rtsw1",
     "rtsw2", []),
]


@pytest.mark.parametrize("why,failures,switch,dest,expected", CASES, ids=[c[0] for c in CASES])
def test_failures_change_next_hops(why, failures, switch, dest, expected):
    g = graph(site("dc1"))
    elems = [("switch", a) if kind == "switch" else ("link", link_id(g, a, b)) for kind, a, b in failures]
    r = Routes(g, Failed.of(elems))
    assert peers(g, r, switch, dest) == expected


def test_unique_ctsw_asns_let_a_ctsw_route_through_a_valley():
    """Without a shared CTSW ASN, loop prevention no longer stops CTSW -> RTSW -> CTSW: ctsw1 reaches rtsw1
    through another RTSW once its own link is down (length 3 instead of no route)."""
    fabric = with_ctsw_asns(site("dc1"), 65500)
    g = graph(fabric)
    r = Routes(g, Failed.of([("link", link_id(g, "rtsw1", "ctsw1"))]))
    assert peers(g, r, "ctsw1", "rtsw1") == ["rtsw2", "rtsw3", "rtsw4"]
    assert r.table("rtsw1").length["ctsw1"] == 3
    # the RTSWs still prefer the shorter path through ctsw2
    assert peers(g, r, "rtsw2", "rtsw1") == ["ctsw2"]


def test_maximum_paths_caps_ecmp_by_lowest_router_id():
    g = graph(with_maximum_paths(site("dc1"), 1))
    r = Routes(g)
    # ctsw1 has the lower loopback, so the one path kept goes through it
    assert peers(g, r, "rtsw2", "rtsw3") == ["ctsw1"]
    assert r.table("rtsw3").tie_sensitive


def test_parallel_links_are_separate_ecmp_members():
    fabric = small(SmallSite(ctsw_platforms=("eos", "eos"), rtsw_platforms=("eos", "eos"), add_uplink=True))
    g = graph(fabric)
    r = Routes(g)
    assert len(r.next_hops("ctsw1", "rtsw1")) == 2
    assert len(r.next_hops("rtsw2", "rtsw1")) == 2          # one path per CTSW
    assert len(r.next_hops("rtsw1", "rtsw2")) == 3          # two sessions to ctsw1, one to ctsw2


def test_static_route_overrides_bgp_and_is_withdrawn_when_its_next_hop_is_down():
    fabric = site("dc1")
    g = graph(fabric)
    block = fabric.devices["rtsw2"].host_block
    static = (StaticRoute("ctsw1", block, "rtsw3"),)
    assert peers(g, Routes(g, statics=static), "ctsw1", "rtsw2") == ["rtsw3"]
    down = Failed.of([("link", link_id(g, "ctsw1", "rtsw3"))])
    assert peers(g, Routes(g, down, statics=static), "ctsw1", "rtsw2") == ["rtsw2"]
    # a more specific static (inside the block) covers that destination too
    inner = block.split("/")[0] + "/31"
    assert peers(g, Routes(g, statics=(StaticRoute("ctsw1", inner, "rtsw4"),)), "ctsw1", "rtsw2") == ["rtsw4"]


def _all_next_hops(routes):
    # in FIB order: a flow's hash picks a member by its position
    return {(s, d): routes.next_hops(s, d) for s in routes.adj for d in routes.dests}


@pytest.mark.parametrize("name", ["dc1", "dc2", "mz1", "generated"])
def test_symmetry_gives_the_routes_a_full_computation_gives(name):
    """Destinations of one twin class are computed once and mapped; under every failure representative of
    size <= 2 the result equals computing every destination."""
    fabric = generated(32, 4, 4) if name == "generated" else site(name)
    g = graph(fabric)
    for failures in g.failure_reps(2):
        failed = Failed.of(failures)
        fast, full = Routes(g, failed), Routes(g, failed, symmetric=False)
        assert len(fast.representatives()) < len(fast.dests) or name == "dc2"
        assert _all_next_hops(fast) == _all_next_hops(full), g.describe(failures)


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(ctsw=st.integers(1, 4), units=st.integers(1, 3), rails=st.integers(1, 2), remove=st.booleans(),
       add=st.booleans())
def test_generated_sites_route_every_rtsw_pair_with_symmetry_exact(ctsw, units, rails, remove, add):
    g = graph(small(clos(ctsw, units, rails, remove_uplink=remove, add_uplink=add)))
    fast, full = Routes(g), Routes(g, symmetric=False)
    assert _all_next_hops(fast) == _all_next_hops(full)
    rtsws = [n for n in g.switches if g.switches[n].role == "rtsw"]
    for a in rtsws:
        for b in rtsws:
            if a != b:
                assert fast.next_hops(a, b), (a, b)          # a healthy Clos connects every pair


def test_routes_under_a_failure_set_are_shared_and_bounded(monkeypatch):
    from nr_run.analysis import routing
    from nr_run.analysis.routing import routes_under

    monkeypatch.setattr(routing, "ROUTES_KEPT", 8)
    g = graph(generated(32, 4, 4))
    reps = g.failure_reps(2)
    assert len(reps) > routing.ROUTES_KEPT
    first = routes_under(g, Failed.of(reps[1]))
    assert routes_under(g, Failed.of(reps[1])) is first          # deadlock, ECMP and capacity share it
    for failures in reps:
        shared = routes_under(g, Failed.of(failures))
        assert _all_next_hops(shared) == _all_next_hops(Routes(g, Failed.of(failures)))
        assert len(g.memo["routes"]) <= routing.ROUTES_KEPT
