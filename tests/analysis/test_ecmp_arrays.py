"""The array simulation of the ECMP analysis against the per-QP walk it replaces: the same QPs, hashes, loads
and groups, in the same order, on every shape and hash model."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import numpy as np
import pytest

from nr_run.analysis import ecmp
from nr_run.analysis.ecmp import (
    FIELDS,
    FIVE_TUPLE,
    HashModel,
    Simulation,
    connections,
    connections_per_nic,
    flow_hash,
    make_qps,
    simulate,
)
from nr_run.analysis.graph import FabricGraph, Failed, natural_key
from nr_run.analysis.qparrays import QpArrays, crc_hashes, nic_ips
from nr_run.analysis.routing import Routes
from tests.analysis.fabrics import clos, generated, graph, site, small


def walk(graph: FabricGraph, routes: Routes, pattern: str, q: int, model: HashModel,
         budget: int = 120_000) -> Simulation:
    """The reference: every QP an object, hashed with zlib and walked hop by hop."""
    per_nic = connections_per_nic(graph, pattern)
    sources = sorted({nic.switch for nic in graph.nics}, key=natural_key)
    total = sum(per_nic.values()) * q
    sim = Simulation(total_sources=len(sources))
    if total > budget and sources:
        keep = max(1, budget * len(sources) // total)
        step = len(sources) / keep
        sources = [sources[int(i * step)] for i in range(min(keep, len(sources)))]
    sim.sampled_sources = len(sources)
    for qp in make_qps(connections(graph, pattern, set(sources)), q, per_nic):
        if qp.src.switch == qp.dst.switch:
            continue
        sim.qps += 1
        h = flow_hash(model, qp)
        here, dest = qp.src.switch, qp.dst.switch
        for _hop in range(16):
            if here == dest:
                break
            hops = routes.next_hops(here, dest)
            if not hops:
                break
            lid = hops[h % len(hops)]
            sim.link_load[(lid, here)] = sim.link_load.get((lid, here), 0.0) + qp.rate_mbps
            if len(hops) > 1:
                gk = (here, hops)
                sim.groups.setdefault(gk, Counter())[lid] += 1
                loads = sim.group_load.setdefault(gk, {})
                loads[lid] = loads.get(lid, 0.0) + qp.rate_mbps
            here = graph.links[lid].peer(here)
    return sim


def _same(a: Simulation, b: Simulation) -> None:
    assert (a.qps, a.sampled_sources, a.total_sources) == (b.qps, b.sampled_sources, b.total_sources)
    assert list(a.link_load.items()) == list(b.link_load.items())       # same floats, same order
    assert [(k, list(v.items())) for k, v in a.groups.items()] == [(k, list(v.items())) for k, v in b.groups.items()]
    assert [(k, list(v.items())) for k, v in a.group_load.items()] == \
        [(k, list(v.items())) for k, v in b.group_load.items()]


def _mz():
    return site("mz1")


SITES = {
    "dc1": lambda: site("dc1"),
    "dc2": lambda: site("dc2"),
    "star1": lambda: site("star1"),
    "mz1": _mz,
    "clos 2 rails, 400G NICs": lambda: small(clos(4, 2, 2, host_speed="400G", servers_per_unit=4)),
    "generated 32 RTSWs": lambda: generated(32, 4, 4),
}


@pytest.mark.parametrize("name", sorted(SITES))
@pytest.mark.parametrize("pattern", ["ring", "pairs", "alltoall"])
def test_arrays_walk_as_the_per_qp_model_does(name, pattern):
    g = graph(SITES[name]())
    routes = Routes(g)
    for q, model in ((1, HashModel()), (3, HashModel(("src_ip", "dst_ip", "dest_qp"), 99))):
        _same(simulate(g, routes, pattern, q, model), walk(g, routes, pattern, q, model))


def test_sampled_and_failed_runs_match_too():
    g = graph(generated(32, 4, 4))
    for failures in g.failure_reps(1)[:4]:
        routes = Routes(g, Failed.of(failures))
        _same(simulate(g, routes, "alltoall", 8, HashModel(seed=5), budget=2_000),
              walk(g, routes, "alltoall", 8, HashModel(seed=5), budget=2_000))


def _mixed_speeds(g: FabricGraph) -> FabricGraph:
    """The graph with every third NIC at a quarter of its speed: QPs of several rates share links."""
    nics = [dataclasses.replace(n, speed_mbps=n.speed_mbps // 4) if i % 3 == 0 else n for i, n in enumerate(g.nics)]
    out = FabricGraph(g.switches, g.links, nics)
    out.adj, out.rid = g.adj, g.rid
    return out


@pytest.mark.parametrize("name", ["dc1", "mz1"])
def test_a_mixed_rate_fabric_sums_loads_in_the_same_order(name):
    g = _mixed_speeds(graph(SITES[name]()))
    routes = Routes(g)
    per_nic = connections_per_nic(g, "alltoall")
    assert len({q.rate_mbps for q in make_qps(connections(g, "alltoall"), 2, per_nic)}) > 1
    _same(simulate(g, routes, "alltoall", 2, HashModel()), walk(g, routes, "alltoall", 2, HashModel()))


@pytest.mark.parametrize("mixed", [False, True])
def test_chunks_carry_the_qp_numbers_and_the_sums(monkeypatch, mixed):
    g = graph(site("mz1"))
    g = _mixed_speeds(g) if mixed else g
    routes = Routes(g)
    monkeypatch.setattr(ecmp, "CHUNK_QPS", 50)         # many chunks: counters and sums carry over
    _same(simulate(g, routes, "alltoall", 3, HashModel()), walk(g, routes, "alltoall", 3, HashModel()))


def test_the_table_crc_equals_zlib_on_random_headers():
    g = graph(site("dc1"))
    rng = random.Random(7)
    n = 500
    src = np.array([rng.randrange(len(g.nics)) for _ in range(n)])
    dst = np.array([rng.randrange(len(g.nics)) for _ in range(n)])
    sport = np.array([rng.randrange(0xC000, 0x10000) for _ in range(n)])
    dqp = np.array([rng.randrange(1 << 24) for _ in range(n)])
    qps = QpArrays(g.nics, src, dst, sport, dqp, np.ones(n))
    for fields in (FIVE_TUPLE, FIELDS, ("dest_qp",), ("src_port", "src_ip")):
        model = HashModel(fields, rng.randrange(1 << 32))
        got = crc_hashes(model.fields, model.seed, qps, nic_ips(g.nics)).tolist()
        from nr_run.analysis.ecmp import Qp
        want = [flow_hash(model, Qp(g.nics[a], g.nics[b], int(p), int(d), 1.0))
                for a, b, p, d in zip(src, dst, sport, dqp, strict=True)]
        assert got == want


def test_pairs_without_the_dense_index_walk_the_same(monkeypatch):
    g = graph(site("mz1"))
    routes = Routes(g)
    monkeypatch.setattr(ecmp, "DENSE_PAIRS", 0)          # a site too large for the array: sorted per hop
    monkeypatch.setattr(ecmp, "CHUNK_QPS", 64)
    _same(simulate(g, routes, "alltoall", 2, HashModel()), walk(g, routes, "alltoall", 2, HashModel()))
