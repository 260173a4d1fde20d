"""PFC deadlock: the buffer-dependency graph is acyclic on valley-free routing under failures, and a bounce
route closes a cycle that is reported hop by hop."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nr_run.analysis import deadlock
from nr_run.analysis.deadlock import (
    dependency_graph,
    evaluate,
    find_cycles,
    strongly_connected,
)
from nr_run.analysis.graph import Failed
from nr_run.analysis.options import AnalysisOptions
from nr_run.analysis.routing import Routes, StaticRoute, static_pins
from tests.analysis.fabrics import clos, generated, graph, link_id, site, small, with_ctsw_asns


@pytest.mark.parametrize("name", ["dc1", "dc2", "generated"])
def test_valley_free_fabrics_have_no_cycle_for_two_failures(name):
    fabric = generated(32, 4, 4) if name == "generated" else site(name)
    found, counts = evaluate(graph(fabric), 2)
    assert found == []
    assert counts["evaluated"] == counts["proved"] > 1


def test_the_rank_proof_agrees_with_a_full_search_on_dc1_and_dc2():
    for name in ("dc1", "dc2"):
        g = graph(site(name))
        for failures in g.failure_reps(2):
            assert find_cycles(g, failures, exhaustive=True) == ([], "search")


def _statics(fabric, *routes):
    """(switch, destination RTSW, via) -> StaticRoute for the destination's host block."""
    return tuple(StaticRoute(sw, fabric.devices[dest].host_block, via) for sw, dest, via in routes)


# one defect per case: the extra routes, the failures, and the cycle's switches (or None: no cycle)
CASES = [
    ("bounce from a CTSW down to another RTSW", [("ctsw1", "rtsw2", "rtsw3")], [],
     ["ctsw1", "rtsw3", "ctsw1"]),
    ("two bounces: a 4-hop cycle without a forwarding loop",
     [("ctsw1", "rtsw2", "rtsw3"), ("rtsw3", "rtsw2", "ctsw2"), ("ctsw2", "rtsw4", "rtsw1"),
      ("rtsw1", "rtsw4", "ctsw1")], [], ["ctsw1", "rtsw3", "ctsw2", "rtsw1", "ctsw1"]),
    ("bounce whose next hop is down is withdrawn", [("ctsw1", "rtsw2", "rtsw3")], [("ctsw1", "rtsw3")], None),
    ("a static that stays valley-free (CTSW to the destination itself)", [("ctsw1", "rtsw2", "rtsw2")], [], None),
    ("an RTSW static up to one CTSW stays valley-free", [("rtsw1", "rtsw2", "ctsw1")], [], None),
]


@pytest.mark.parametrize("why,routes,down,cycle", CASES, ids=[c[0] for c in CASES])
def test_extra_routes(why, routes, down, cycle):
    fabric = site("dc1")
    g = graph(fabric)
    failures = frozenset(("link", link_id(g, a, b)) for a, b in down)
    found, how = find_cycles(g, failures, _statics(fabric, *routes))
    if cycle is None:
        assert found == []
        assert find_cycles(g, failures, _statics(fabric, *routes), exhaustive=True)[0] == []
        return
    assert how == "search" and found
    priority, hops = found[0]
    assert priority == 3
    switches = [s for s, _ in hops]
    assert hops[0] == hops[-1]
    # the same cycle, read from any of its hops
    rotations = [switches[i:-1] + switches[:i] + [switches[i]] for i in range(len(switches) - 1)]
    assert cycle in rotations, switches
    # every hop is an ingress port cabled to the previous switch
    for (s, _port), (t, tport) in itertools.pairwise(hops):
        iface = {i.name: i for i in fabric.devices[t].interfaces}[tport]
        assert iface.peer_device == s


def test_a_bounce_route_is_a_deadlock_error_with_a_topology_figure():
    fabric = site("dc1")
    result = deadlock.analyse(fabric, AnalysisOptions(failures=1), _statics(fabric, ("ctsw1", "rtsw2", "rtsw3")))
    assert not result.ok
    first = result.findings[0]
    assert first.severity == "error" and not first.passed and first.data["failures"] == "none"
    assert "ctsw1:" in first.message and "rtsw3:" in first.message
    fig = result.figures[0]
    assert fig.kind == "topology" and fig.data["highlight"] == [["ctsw1", "rtsw3"]]
    assert {n["name"] for n in fig.data["nodes"]} == set(g for g in fabric.devices if not g.startswith("gpu"))
    # failing the bounce's own link removes the cycle; every other single failure keeps it
    failed_sets = {f["failures"] for f in (x.data for x in result.findings)}
    assert not any("ctsw1:Ethernet3-rtsw3" in s for s in failed_sets)
    assert result.summary["searched"] >= 1


def test_healthy_result_passes_and_says_how_many_sets_were_evaluated():
    result = deadlock.analyse(site("dc1"), AnalysisOptions(failures=2))
    assert result.ok and result.figures == []
    assert result.summary["failure_sets_evaluated"] == 12          # none; link/ctsw/rtsw; 8 pairs
    assert "12 failure sets evaluated" in result.findings[0].message


def test_safety_findings_are_empty_for_a_healthy_fabric():
    assert deadlock.deadlock_safety(site("dc1")) == []
    assert deadlock.deadlock_safety(site("dc2")) == []


def test_valley_routes_that_carry_no_host_traffic_close_no_cycle():
    """Unique CTSW ASNs: after an uplink failure a CTSW reaches the RTSW through a valley, but no RTSW
    sends host traffic into that CTSW for it (they have a shorter path), so no buffer depends on it."""
    g = graph(with_ctsw_asns(site("dc1"), 65500))
    failures = frozenset({("link", link_id(g, "rtsw1", "ctsw1"))})
    assert find_cycles(g, failures, exhaustive=True)[0] == []


def test_tarjan_is_iterative_and_finds_every_component():
    chain = {(f"s{i}", "p"): {(f"s{i + 1}", "p")} for i in range(50_000)}
    chain[("s50000", "p")] = set()
    assert strongly_connected(chain) == []                   # no RecursionError on a 50k-long path
    chain[("s50000", "p")] = {("s0", "p")}
    assert len(strongly_connected(chain)[0]) == 50_001
    two = {("a", "1"): {("b", "1")}, ("b", "1"): {("a", "1")}, ("c", "1"): {("c", "1")}, ("d", "1"): set()}
    assert strongly_connected(two) == [[("a", "1"), ("b", "1")], [("c", "1")]]


def test_failure_representatives_agree_with_brute_force():
    """Brute force on dc1 with a bounce route, every set of <= 1 failures (15 sets): the cycle is gone only
    when the bounce's switches, its link, or the destination go, or when ctsw1 loses its own link to the
    destination (it then withdraws the BGP route, so no RTSW sends it that traffic: the static is not
    redistributed); each representative evaluate() picks has the brute-force verdict."""
    fabric = site("dc1")
    statics = _statics(fabric, ("ctsw1", "rtsw2", "rtsw3"))
    g = graph(fabric)
    brute = {}
    elements = [("switch", n) for n in g.switches] + [("link", lk.id) for lk in g.links]
    for x in [None, *elements]:
        failures = frozenset() if x is None else frozenset({x})
        brute[g.describe(failures)] = bool(find_cycles(g, failures, statics)[0])
    assert {d for d, c in brute.items() if not c} == {
        "switch ctsw1", "switch rtsw2", "switch rtsw3",
        "link ctsw1:Ethernet2-rtsw2:Ethernet1", "link ctsw1:Ethernet3-rtsw3:Ethernet0"}
    found, counts = evaluate(g, 1, statics)
    pins = static_pins(g, statics)
    assert pins == {"ctsw1", "rtsw2", "rtsw3"}
    reps = g.failure_reps(1, fixed=pins)
    assert counts["evaluated"] == len(reps) < len(brute)
    assert {g.describe(f) for f, _, _ in found} == {g.describe(f) for f in reps if brute[g.describe(f)]}
    # every failure set has the verdict of the representative of its orbit
    cls_of = {n: i for i, members in enumerate(g.twin_classes(fixed=pins)) for n in members}
    rep_verdict = {g._canonical(f, cls_of): brute[g.describe(f)] for f in reps}
    for x in elements:
        assert brute[g.describe(frozenset({x}))] == rep_verdict[g._canonical(frozenset({x}), cls_of)], x


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(ctsw=st.integers(1, 4), units=st.integers(1, 3), rails=st.integers(1, 2), remove=st.booleans(),
       add=st.booleans())
def test_generated_valley_free_fabrics_have_no_cycle_and_the_proof_matches_search(ctsw, units, rails, remove, add):
    g = graph(small(clos(ctsw, units, rails, remove_uplink=remove, add_uplink=add)))
    reps = g.failure_reps(2)
    for failures in reps:
        cycles, how = find_cycles(g, failures)
        assert cycles == [] and how == "proof"
    for failures in reps[:6]:
        assert find_cycles(g, failures, exhaustive=True)[0] == []


def test_dependency_graph_of_a_healthy_clos_goes_up_then_down():
    fabric = site("dc1")
    g = graph(fabric)
    succ = dependency_graph(Routes(g, Failed()))
    # an RTSW's ingress from a CTSW only feeds its hosts: no fabric dependency leaves it
    assert all(not succ[n] for n in succ if n[0].startswith("rtsw"))
    assert succ[("ctsw1", "Ethernet1")] == {("rtsw2", "Ethernet1"), ("rtsw3", "Ethernet0"), ("rtsw4", "Ethernet0")}


@pytest.mark.parametrize("name", ["dc1", "dc2", "parallel-uplink"])
def test_failure_representatives_are_one_per_orbit_of_every_pair_and_triple(name):
    """Brute force: every non-redundant set of 2 or 3 failures falls in the orbit of exactly one
    representative (orbits compared by the canonical form)."""
    fabric = small(clos(3, 2, 2, add_uplink=True)) if name == "parallel-uplink" else site(name)
    g = graph(fabric)
    cls_of = {n: i for i, members in enumerate(g.twin_classes()) for n in members}
    elements = [("switch", n) for n in g.switches] + [("link", lk.id) for lk in g.links]
    reps = g.failure_reps(3)
    assert sum(g.orbit_size(f) for f in reps if len(f) == 1) == len(elements)
    for size in (2, 3):
        brute = {g._canonical(frozenset(c), cls_of) for c in itertools.combinations(elements, size)
                 if not g._redundant(frozenset(c))}
        chosen = [g._canonical(f, cls_of) for f in reps if len(f) == size]
        assert len(chosen) == len(set(chosen)) == len(brute)
        assert set(chosen) == brute


@pytest.mark.long
def test_1024_switch_site_analyses_with_one_failure():
    """The acceptance size: 16 CTSWs and 1,008 RTSWs, every analysis of this module set with K=1 (how long it
    takes is benchmarks/' business)."""
    from nr_run.analysis import capacity, ecmp

    fabric = generated(1008, 16, 8)
    results = [m.analyse(fabric, AnalysisOptions(failures=1)) for m in (deadlock, ecmp, capacity)]
    dl, _ecmp, cap = results
    assert dl.ok and dl.summary["failure_sets_evaluated"] == 4 and dl.summary["proved_acyclic"] == 4
    assert dl.summary["failure_sets_represented"] == 1 + 1024 + 16128
    assert cap.summary["worst_destination_percent"] == 93.8           # 15 of 16 uplinks
