"""The faster forms of the deadlock rank proof and of the capacity max-flow against the direct ones they
replace, on every shape, healthy and under every single-failure representative, with valleys too."""

from __future__ import annotations

from collections import deque

import pytest

from nr_run.analysis.capacity import MaxFlow, dest_capacity
from nr_run.analysis.deadlock import _rank, dependency_edges, non_rising_edges
from nr_run.analysis.graph import Failed
from nr_run.analysis.routing import Routes, StaticRoute
from tests.analysis.fabrics import clos, graph, site, small

SITES = {"dc1": lambda: site("dc1"), "dc2": lambda: site("dc2"), "star1": lambda: site("star1"),
         "mz1": lambda: site("mz1"), "removed-uplink": lambda: small(clos(3, 2, 2, remove_uplink=True))}


def edge_by_edge(routes: Routes) -> list:
    """Every dependency edge's rank test, one edge at a time."""
    g = routes.graph
    top = max(s.tier for s in g.switches.values())
    out = []
    for dest in routes.representatives():
        for a, b, u, s, t in dependency_edges(routes, dest):
            ra, rb = _rank(g, top, s, u), _rank(g, top, t, s)
            if ra is None or rb is None or rb <= ra:
                out.append(((a, b), dest))
    return sorted(out)


def flow_with_every_source(routes: Routes, dest: str) -> int:
    """Maximum flow from a super-source with an unbounded link to every host switch, over the routes."""
    g = routes.graph
    flow = MaxFlow()
    sources = [n for n in routes.adj if n != dest and g.switches[n].host_mbps > 0]
    seen, queue = set(sources), deque(sources)
    for s in sources:
        flow.add("@source", s, 1 << 62)
    while queue:
        u = queue.popleft()
        for lid in routes.next_hops(u, dest):
            v = g.links[lid].peer(u)
            flow.add(u, v, g.links[lid].speed_mbps)
            if v not in seen and v != dest:
                seen.add(v)
                queue.append(v)
    return flow.run("@source", dest)


@pytest.mark.parametrize("name", sorted(SITES))
def test_per_switch_rank_proof_and_merged_sources_equal_the_direct_forms(name):
    fabric = SITES[name]()
    g = graph(fabric)
    for failures in g.failure_reps(1):
        routes = Routes(g, Failed.of(failures))
        assert sorted(non_rising_edges(routes)) == edge_by_edge(routes) == []
        for dest in routes.dests:
            assert dest_capacity(routes, dest) == flow_with_every_source(routes, dest), (g.describe(failures), dest)


def test_valleys_are_listed_edge_for_edge():
    fabric = site("dc1")
    g = graph(fabric)
    block = fabric.devices["rtsw2"].host_block
    for statics in ((StaticRoute("ctsw1", block, "rtsw3"),),
                    (StaticRoute("ctsw1", block, "rtsw3"), StaticRoute("rtsw3", block, "ctsw2"))):
        routes = Routes(g, statics=statics)
        edges = edge_by_edge(routes)
        assert edges and sorted(non_rising_edges(routes)) == edges
        for dest in routes.dests:
            assert dest_capacity(routes, dest) == flow_with_every_source(routes, dest)
