"""PFC deadlock: cycles in the buffer-dependency graph, with 0..K link or switch failures.

A node is an ingress buffer (switch, ingress port) on a lossless priority. There is an edge from (s, i) to
(t, j) when traffic for some destination can arrive at s on port i and s forwards it out of the port cabled
to t's port j: a full buffer at (t, j) pauses s's egress, which lets (s, i) fill and pause its upstream. A
cycle of such edges can pause itself forever (Hu et al., "Deadlocks in Datacenter Networks: Why Do They
Form, and How to Avoid Them", HotNets 2016; Guo et al., "RDMA over Commodity Ethernet at Scale", SIGCOMM
2016). Traffic "can arrive" at s for destination d when s is reached from a switch with GPU hosts by
following the FIB toward d. Host ports never close a cycle (a NIC consumes what it receives), so only
fabric ports are nodes.

Proof first, search second: rank an ingress buffer by how far along an up-down path it is (going up: the
tier; going down: 2*T+1 minus the tier). Every edge of a valley-free path raises the rank, so a graph whose
edges all raise it is acyclic: that rank is a topological order. Only a graph with a non-rising edge (a
valley: down then up, or a hop within a tier) is built in full and searched with an iterative Tarjan SCC
(no recursion limit); a cycle is reported as the hops that close it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Iterator
from math import comb

from nr_run.analysis.graph import FabricGraph, Failed, FailureSet
from nr_run.analysis.options import AnalysisOptions
from nr_run.analysis.result import AnalysisFinding, AnalysisResult, Figure, Table
from nr_run.analysis.routing import Routes, StaticRoute, routes_under, static_pins
from nr_run.intent.models import FabricIntent

Node = tuple[str, str]          # (switch, ingress port)
Edge = tuple[Node, Node]


def _rank(graph: FabricGraph, top: int, switch: str, from_switch: str) -> int | None:
    """Rank of the ingress buffer of `switch` fed by `from_switch`; None within a tier."""
    tier, other = graph.switches[switch].tier, graph.switches[from_switch].tier
    if other < tier:
        return tier
    if other > tier:
        return 2 * top + 1 - tier
    return None


def dependency_edges(routes: Routes, dest: str) -> Iterator[tuple[Node, Node, str, str, str]]:
    """Edges induced by traffic toward `dest`: ((s, i), (t, j), upstream of s, s, t)."""
    graph = routes.graph
    links = graph.links
    sources = [n for n in routes.adj if n != dest and graph.switches[n].host_mbps > 0]
    seen = set(sources)
    queue = deque(sources)
    while queue:
        u = queue.popleft()
        for lid in routes.next_hops(u, dest):
            lk = links[lid]
            s = lk.peer(u)
            ingress = (s, lk.port(s))
            if s not in seen:
                seen.add(s)
                queue.append(s)
            for lid2 in routes.next_hops(s, dest):
                lk2 = links[lid2]
                t = lk2.peer(s)
                yield ingress, (t, lk2.port(t)), u, s, t


def non_rising_edges(routes: Routes) -> list[tuple[Edge, str]]:
    """Edges that do not raise the rank, over the representative destinations (symmetry carries the
    answer to the others); empty means the dependency graph is provably acyclic.

    The edges at a switch s toward one destination are every (arrival link) x (next hop) pair, and an edge's
    rank test reads only the tiers of its upstream, s and its next hop; so all edges at s rise exactly when
    the highest arrival rank is below the lowest departure rank (no hop within a tier). Only switches where
    that fails list their edges, which keeps the proof linear in the routes instead of in their pairs."""
    graph = routes.graph
    links = graph.links
    tier = {n: sw.tier for n, sw in graph.switches.items()}
    top = max(tier.values(), default=1)
    out: list[tuple[Edge, str]] = []
    for dest in routes.representatives():
        upstream, departures = _arrivals(routes, dest, tier)
        for s in sorted(upstream):
            hops = departures.get(s, ())
            if not hops:
                continue
            ts = tier[s]
            # rank of s's ingress fed from below is its tier, from above 2T+1 minus it; within a tier: none
            downstream = {tier[links[lid].peer(s)] for lid in hops}
            if ts not in upstream[s] and ts not in downstream:
                highest_in = ts if max(upstream[s]) < ts else 2 * top + 1 - ts
                lowest_out = min((t if ts < t else 2 * top + 1 - t) for t in downstream)
                if highest_in < lowest_out:
                    continue
            arrivals = [(lid, u) for u, out in departures.items() for lid in out if links[lid].peer(u) == s]
            for lid, u in sorted(arrivals):
                ra = _rank(graph, top, s, u)
                ingress = (s, links[lid].port(s))
                for lid2 in hops:
                    t = links[lid2].peer(s)
                    rb = _rank(graph, top, t, s)
                    if ra is None or rb is None or rb <= ra:
                        out.append(((ingress, (t, links[lid2].port(t))), dest))
    return out


def _arrivals(routes: Routes, dest: str, tier: dict[str, int]
              ) -> tuple[dict[str, set[int]], dict[str, tuple[int, ...]]]:
    """Toward `dest`, from the switches with GPU hosts along the FIB (the nodes and edges dependency_edges
    walks): per reached switch the tiers of the switches its traffic arrives from, and per switch its next-hop
    links."""
    graph = routes.graph
    ends = graph.link_ends
    sources = [n for n in routes.adj if n != dest and graph.switches[n].host_mbps > 0]
    seen = set(sources)
    queue = deque(sources)
    upstream: dict[str, set[int]] = {}
    departures: dict[str, tuple[int, ...]] = {}
    next_hops = routes.next_hops
    while queue:
        u = queue.popleft()
        hops = departures[u] = next_hops(u, dest)
        tu = tier[u]
        for lid in hops:
            a, b = ends[lid]
            s = b if a == u else a
            found = upstream.get(s)
            if found is None:
                upstream[s] = {tu}
            else:
                found.add(tu)
            if s not in seen:
                seen.add(s)
                queue.append(s)
    for s in upstream:
        if s not in departures:
            departures[s] = next_hops(s, dest)
    return upstream, departures


def dependency_graph(routes: Routes) -> dict[Node, set[Node]]:
    """The whole buffer-dependency graph (every destination)."""
    succ: dict[Node, set[Node]] = {}
    for dest in routes.dests:
        for a, b, *_ in dependency_edges(routes, dest):
            succ.setdefault(a, set()).add(b)
            succ.setdefault(b, set())
    return succ


def strongly_connected(succ: dict[Node, set[Node]]) -> list[list[Node]]:
    """Tarjan's SCCs, iteratively (an explicit stack instead of recursion); components with a cycle only
    (more than one node, or a self-loop), each sorted, in sorted order."""
    index: dict[Node, int] = {}
    low: dict[Node, int] = {}
    on_stack: set[Node] = set()
    stack: list[Node] = []
    out: list[list[Node]] = []
    counter = 0
    order = {n: sorted(s) for n, s in succ.items()}
    for root in sorted(succ):
        if root in index:
            continue
        work: list[tuple[Node, int]] = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, i = work[-1]
            children = order[node]
            if i < len(children):
                work[-1] = (node, i + 1)
                child = children[i]
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, 0))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1 or node in succ[node]:
                    out.append(sorted(comp))
    return sorted(out)


def cycle_in(succ: dict[Node, set[Node]], component: list[Node]) -> list[Node]:
    """A shortest cycle through the component's first node, staying inside the component (BFS)."""
    members = set(component)
    start = component[0]
    parent: dict[Node, Node] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(succ[node]):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return list(reversed(path)) + [start]
            if nxt in members and nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    return [start, start]


def _lossless_subgraph(graph: FabricGraph, succ: dict[Node, set[Node]], priority: int) -> dict[Node, set[Node]]:
    keep = {n for n in succ if priority in graph.switches[n[0]].lossless}
    return {n: {m for m in succ[n] if m in keep} for n in keep}


def find_cycles(graph: FabricGraph, failures: FailureSet = frozenset(), statics: tuple[StaticRoute, ...] = (),
                exhaustive: bool = False) -> tuple[list[tuple[int, list[Node]]], str]:
    """Cycles (lossless priority, closing hops) of the fabric without `failures`, and how it was decided:
    "proof" (every edge raises the rank) or "search" (Tarjan over the whole graph). `exhaustive` always
    searches (to cross-check the proof)."""
    routes = Routes(graph, Failed.of(failures), statics) if statics else routes_under(graph, Failed.of(failures))
    if not exhaustive and not non_rising_edges(routes):
        return [], "proof"
    succ = dependency_graph(routes)
    cycles: list[tuple[int, list[Node]]] = []
    for priority in sorted({p for s in graph.switches.values() for p in s.lossless}):
        sub = _lossless_subgraph(graph, succ, priority)
        for comp in strongly_connected(sub):
            cycles.append((priority, cycle_in(sub, comp)))
    return cycles, "search"


def describe_cycle(hops: list[Node]) -> str:
    return " -> ".join(f"{s}:{p}" for s, p in hops)


def _finding(graph: FabricGraph, failures: FailureSet, priority: int, hops: list[Node]) -> AnalysisFinding:
    where = graph.describe(failures)
    switches = [s for s, _ in hops]
    return AnalysisFinding(
        analysis="deadlock", subject=f"failures: {where}",
        message=(f"cyclic buffer dependency on lossless priority {priority}: {describe_cycle(hops)} "
                 f"({'no failures' if not failures else 'after ' + where}); PFC can deadlock"),
        passed=False, severity="error",
        fix=("remove the route that sends traffic back up (a valley: down to a switch, then up again), "
             "e.g. a static route on a CTSW toward another RTSW; keep routing valley-free"),
        data={"failures": where, "priority": priority, "device": switches[0],
              "hops": [{"switch": s, "ingress_port": p} for s, p in hops],
              "switches": switches})


def evaluate(graph: FabricGraph, k: int, statics: tuple[StaticRoute, ...] = ()
             ) -> tuple[list[tuple[FailureSet, int, list[Node]]], dict[str, int]]:
    """Cycles over every failure-set representative of size 0..k; counts of sets proved and searched."""
    reps = graph.failure_reps(k, fixed=static_pins(graph, statics))
    found: list[tuple[FailureSet, int, list[Node]]] = []
    counts = {"evaluated": len(reps), "proved": 0, "searched": 0}
    for failures in reps:
        cycles, how = find_cycles(graph, failures, statics)
        counts["proved" if how == "proof" else "searched"] += 1
        found += [(failures, p, hops) for p, hops in cycles]
    return found, counts


def analyse(fabric: FabricIntent, options: AnalysisOptions, statics: tuple[StaticRoute, ...] = ()
            ) -> AnalysisResult:
    t0 = time.perf_counter()
    graph = FabricGraph.of(fabric)
    found, counts = evaluate(graph, options.failures, statics)
    result = AnalysisResult(name="deadlock", title="PFC deadlock (cyclic buffer dependency)")
    total = sum(comb(graph.failure_elements(), i) for i in range(options.failures + 1))
    result.summary = {"failures_k": options.failures, "failure_sets_evaluated": counts["evaluated"],
                      "failure_sets_represented": total, "proved_acyclic": counts["proved"],
                      "searched": counts["searched"], "cycles": len(found)}
    for failures, priority, hops in found[:20]:
        result.findings.append(_finding(graph, failures, priority, hops))
    if not found:
        result.findings.append(AnalysisFinding(
            analysis="deadlock", subject=f"0..{options.failures} failures",
            message=(f"no cyclic buffer dependency: {counts['evaluated']} failure sets evaluated (one per "
                     f"symmetry class of {total} sets of up to {options.failures} switch/link failures), "
                     f"{counts['proved']} proved acyclic by rank, {counts['searched']} searched"),
            passed=True, severity="info"))
    else:
        failures, priority, hops = found[0]
        pairs = list(zip([s for s, _ in hops], [s for s, _ in hops[1:]], strict=False))
        cycle_switches = {s for s, _ in hops}
        show = None if len(graph.switches) <= 64 else _neighbourhood(graph, cycle_switches)
        result.figures.append(Figure(
            title=f"Deadlock cycle (priority {priority}, failures: {graph.describe(failures)})",
            kind="topology", data=graph.topology(highlight=pairs, only=show)))
    result.tables.append(Table(
        title="Buffer-dependency cycles", columns=["failures", "priority", "cycle"],
        rows=[[graph.describe(f), p, describe_cycle(h)] for f, p, h in found[:50]]))
    result.seconds = time.perf_counter() - t0
    return result


def _neighbourhood(graph: FabricGraph, core: Iterable[str], limit: int = 48) -> list[str]:
    keep = set(core)
    for n in sorted(core):
        for _, peer in graph.adj[n]:
            if len(keep) >= limit:
                break
            keep.add(peer)
    return sorted(keep)


def deadlock_safety(fabric: FabricIntent) -> list[AnalysisFinding]:
    """The K=0 deadlock proof as safety findings: a cycle with no failure makes the fabric unsafe to deploy
    (an empty list when the fabric is acyclic)."""
    graph = FabricGraph.of(fabric)
    cycles, _how = find_cycles(graph)
    return [_finding(graph, frozenset(), p, hops) for p, hops in cycles]
