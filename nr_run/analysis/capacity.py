"""Capacity: oversubscription per tier, bisection bandwidth, and what each destination keeps under failures.

Remaining capacity toward a destination RTSW is the maximum flow from every other RTSW with GPU hosts into
it, over the links its routes use (the FIB toward it under the failures), relative to the healthy fabric:
"rtsw3 reachable at 75 %" means a quarter of the bandwidth the fabric can deliver to rtsw3 is gone.
Failure sets are enumerated up to twin symmetry (graph.py); a destination's worst case is the minimum over
every representative set and every destination of its twin class, which covers every set of the orbit.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from math import comb

from nr_run.analysis.graph import TIERS, FabricGraph, Failed, FailureSet, natural_key
from nr_run.analysis.options import AnalysisOptions
from nr_run.analysis.result import AnalysisFinding, AnalysisResult, Figure, Table
from nr_run.analysis.routing import Routes, routes_under
from nr_run.intent.models import FabricIntent


class MaxFlow:
    """Dinic's maximum flow on integer capacities (Mbit/s), iterative."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.head: list[list[int]] = []
        self.to: list[int] = []
        self.cap: list[int] = []

    def node(self, name: str) -> int:
        found = self.index.get(name)
        if found is None:
            found = self.index[name] = len(self.head)
            self.head.append([])
        return found

    def add(self, a: str, b: str, cap: int, back: int = 0) -> None:
        u, v = self.node(a), self.node(b)
        self.head[u].append(len(self.to))
        self.to.append(v)
        self.cap.append(cap)
        self.head[v].append(len(self.to))
        self.to.append(u)
        self.cap.append(back)

    def run(self, source: str, sink: str) -> int:
        if source not in self.index or sink not in self.index:
            return 0
        s, t = self.index[source], self.index[sink]
        total = 0
        while True:
            level = [-1] * len(self.head)
            level[s] = 0
            queue = deque([s])
            while queue:
                u = queue.popleft()
                for e in self.head[u]:
                    if self.cap[e] > 0 and level[self.to[e]] < 0:
                        level[self.to[e]] = level[u] + 1
                        queue.append(self.to[e])
            if level[t] < 0:
                return total
            it = [0] * len(self.head)
            while True:
                pushed = self._augment(s, t, level, it)
                if not pushed:
                    break
                total += pushed

    def _augment(self, s: int, t: int, level: list[int], it: list[int]) -> int:
        """One augmenting path in the level graph (iterative DFS with per-node edge pointers)."""
        path: list[int] = []
        u = s
        while u != t:
            edges = self.head[u]
            while it[u] < len(edges):
                e = edges[it[u]]
                if self.cap[e] > 0 and level[self.to[e]] == level[u] + 1:
                    break
                it[u] += 1
            else:
                if not path:
                    return 0
                level[u] = -1          # dead end: never enter it again in this phase
                e = path.pop()
                u = self.to[e ^ 1]
                it[u] += 1
                continue
            path.append(edges[it[u]])
            u = self.to[edges[it[u]]]
        pushed = min(self.cap[e] for e in path)
        for e in path:
            self.cap[e] -= pushed
            self.cap[e ^ 1] += pushed
        return pushed


def dest_capacity(routes: Routes, dest: str) -> int:
    """Mbit/s the fabric can deliver into `dest` from every other RTSW with hosts, along its routes.

    Every source has unlimited supply, so any finite cut leaves all of them on the source side: they are one
    node (the source), their links out are its links (summed per neighbour) and links into them cut nothing.
    The flow network then holds only the switches without hosts (the CTSW and ATSW tiers) and `dest`, the
    same maximum flow on a far smaller graph."""
    graph = routes.graph
    links = graph.links
    sw = graph.switches
    sources = [n for n in routes.adj if n != dest and sw[n].host_mbps > 0]
    is_source = set(sources)
    seen = set(sources)
    queue = deque(sources)
    caps: dict[tuple[str, str], int] = {}
    while queue:
        u = queue.popleft()
        tail = "@source" if u in is_source else u
        for lid in routes.next_hops(u, dest):
            lk = links[lid]
            v = lk.peer(u)
            if v in is_source:
                continue                 # into the source side: never part of a finite cut
            key = (tail, v)
            caps[key] = caps.get(key, 0) + lk.speed_mbps
            if v not in seen and v != dest:
                seen.add(v)
                queue.append(v)
    flow = MaxFlow()
    for (a, b), cap in sorted(caps.items()):
        flow.add(a, b, cap)
    return flow.run("@source", dest)


# ---- oversubscription and bisection --------------------------------------------------------------------

def oversubscription(graph: FabricGraph) -> list[list[object]]:
    """Per tier: switches, down (host or lower-tier) and up bandwidth, worst down/up ratio and where."""
    rows: list[list[object]] = []
    for role in sorted({s.role for s in graph.switches.values()}, key=lambda r: (TIERS.get(r, 1), r)):
        members = sorted(n for n, s in graph.switches.items() if s.role == role)
        worst: tuple[float, str] = (0.0, "")
        down_total = up_total = 0
        for n in members:
            tier = graph.switches[n].tier
            down = graph.switches[n].host_mbps
            up = 0
            for lid, peer in graph.adj[n]:
                if graph.switches[peer].tier > tier:
                    up += graph.links[lid].speed_mbps
                elif graph.switches[peer].tier < tier:
                    down += graph.links[lid].speed_mbps
            down_total += down
            up_total += up
            ratio = down / up if up else 0.0
            if up and ratio > worst[0]:
                worst = (ratio, n)
        rows.append([role, len(members), down_total // 1000, up_total // 1000,
                     round(worst[0], 2) if up_total else None, worst[1] or None])
    return rows


@dataclass(frozen=True)
class Bisection:
    mbps: int
    full_mbps: int          # half of all host bandwidth: what a non-blocking fabric carries across
    method: str


def bisection(graph: FabricGraph) -> Bisection:
    """Bisection bandwidth over splits of the RTSWs into two halves.

    Two-tier Clos (links only between RTSWs and CTSWs, each RTSW with equal capacity to every CTSW, all
    RTSWs with the same host bandwidth): with e(a) = min(host bandwidth, uplink bandwidth) of RTSW a, the
    maximum flow from half A to half B is exactly min(sum e over A, sum e over B). It is no more (cut, for
    each RTSW of A, its host links or its uplinks), and it is reached by spreading e(a) evenly over the
    CTSWs: each CTSW then receives sum_A e / C and can pass sum_B e / C down, as each b takes e(b) / C from
    it. The worst balanced split puts the floor(N/2) smallest e on one side, so the bisection is their sum.
    Any other topology: the maximum flow (Dinic) between the two halves of the RTSWs in name order, which
    bounds the worst split from above.
    """
    leaves = sorted(n for n, s in graph.switches.items() if s.host_mbps > 0)
    full = sum(graph.switches[n].host_mbps for n in leaves) // 2
    if len(leaves) < 2:
        return Bisection(0, full, "fewer than two RTSWs")
    spines = sorted(n for n, s in graph.switches.items() if s.host_mbps == 0)
    regular = all(graph.switches[n].tier == 1 for n in leaves) and \
        all(graph.switches[n].tier == 2 for n in spines) and \
        len({graph.switches[n].host_mbps for n in leaves}) == 1
    egress: list[int] = []
    if regular:
        for n in leaves:
            per_spine = {c: 0 for c in spines}
            for lid, peer in graph.adj[n]:
                if peer not in per_spine:
                    regular = False
                    break
                per_spine[peer] += graph.links[lid].speed_mbps
            if not regular or len(set(per_spine.values())) != 1:
                regular = False
                break
            egress.append(min(graph.switches[n].host_mbps, sum(per_spine.values())))
    if regular:
        return Bisection(sum(sorted(egress)[:len(leaves) // 2]), full, "two-tier Clos, exact")
    return Bisection(halves_max_flow(graph), full, "max-flow between the RTSW halves (irregular fabric)")


def halves_max_flow(graph: FabricGraph) -> int:
    """Maximum flow from the hosts of the first half of the RTSWs (name order) to those of the second."""
    leaves = sorted((n for n, s in graph.switches.items() if s.host_mbps > 0), key=natural_key)
    half = len(leaves) // 2
    flow = MaxFlow()
    for i, n in enumerate(leaves):
        if i < half:
            flow.add("@a", n, graph.switches[n].host_mbps)
        else:
            flow.add(n, "@b", graph.switches[n].host_mbps)
    for lk in graph.links:
        flow.add(lk.a, lk.b, lk.speed_mbps, lk.speed_mbps)
    return flow.run("@a", "@b")


# ---- across zones ---------------------------------------------------------------------------------------

def cross_zone(graph: FabricGraph, fabric: FabricIntent) -> list[list[object]]:
    """Per zone: its host bandwidth, its CTSWs' bandwidth toward the aggregation tier, the maximum flow from the
    zone's hosts to every other zone's hosts (its cross-zone bisection) and the share of its NIC bandwidth a
    job spread over zones gets across the boundary when every server of the zone sends out of it at once."""
    zone_of = {n: d.zone for n, d in fabric.devices.items() if d.zone is not None}
    zones = sorted({zone_of[n] for n in graph.switches if n in zone_of})
    rows: list[list[object]] = []
    if len(zones) < 2:
        return rows
    for zone in zones:
        flow = MaxFlow()
        host = up = 0
        for n, sw in graph.switches.items():
            if not sw.host_mbps:
                continue
            if zone_of.get(n) == zone:
                flow.add("@a", n, sw.host_mbps)
                host += sw.host_mbps
            else:
                flow.add(n, "@b", sw.host_mbps)
        for lk in graph.links:
            flow.add(lk.a, lk.b, lk.speed_mbps, lk.speed_mbps)
            a, b = graph.switches[lk.a], graph.switches[lk.b]
            lower = lk.a if a.tier < b.tier else lk.b
            if zone_of.get(lower) == zone and max(a.tier, b.tier) >= 3:
                up += lk.speed_mbps
        out = flow.run("@a", "@b")
        rows.append([f"z{zone}", host // 1000, up // 1000, out // 1000,
                     round(100 * min(1.0, out / host), 1) if host else None,
                     round(host / up, 2) if up else None])
    return rows


# ---- capacity under failures ---------------------------------------------------------------------------

def capacities(graph: FabricGraph, failures: FailureSet, symmetric: bool = True) -> dict[str, int]:
    """Capacity into every live destination RTSW without `failures` (computed per twin class)."""
    routes = routes_under(graph, Failed.of(failures)) if symmetric else \
        Routes(graph, Failed.of(failures), symmetric=False)
    out: dict[str, int] = {}
    for rep in routes.representatives():
        value = dest_capacity(routes, rep)
        for m in routes.members(rep) or [rep]:
            if graph.switches[m].host_mbps > 0:
                out[m] = value
    return out


def worst_case(graph: FabricGraph, k: int) -> tuple[dict[str, tuple[float, FailureSet]], list[list[object]],
                                                    dict[str, int], int]:
    """Per destination: the lowest remaining share (0..1) over 0..k failures and a set that causes it; per
    failure representative: [description, sets alike, worst %, mean %, unreachable]; healthy capacities;
    the number of representatives."""
    healthy = capacities(graph, frozenset())
    classes = graph.twin_classes()
    cls_of = {n: i for i, members in enumerate(classes) for n in members}
    worst_cls: dict[int, tuple[float, FailureSet, str]] = {}
    per_set: list[list[object]] = []
    reps = graph.failure_reps(k)
    for failures in reps:
        dead = Failed.of(failures).switches
        caps = capacities(graph, failures) if failures else healthy
        shares = []
        for d, base in healthy.items():
            if d in dead or not base:
                continue
            share = caps.get(d, 0) / base
            shares.append(share)
            c = cls_of[d]
            if c not in worst_cls or share < worst_cls[c][0]:
                worst_cls[c] = (share, failures, d)
        if shares:
            per_set.append([graph.describe(failures), graph.orbit_size(failures), round(100 * min(shares), 1),
                            round(100 * sum(shares) / len(shares), 1), sum(1 for s in shares if s == 0)])
    worst: dict[str, tuple[float, FailureSet]] = {}
    for d in healthy:
        if cls_of[d] in worst_cls:
            share, failures, witness = worst_cls[cls_of[d]]
            worst[d] = (share, graph.swap_failures(failures, witness, d))
    return worst, per_set, healthy, len(reps)


def analyse(fabric: FabricIntent, options: AnalysisOptions) -> AnalysisResult:
    t0 = time.perf_counter()
    graph = FabricGraph.of(fabric)
    result = AnalysisResult(name="capacity", title="Capacity, bisection and failures")
    over = oversubscription(graph)
    result.tables.append(Table(
        title="Oversubscription per tier",
        columns=["tier", "switches", "down Gbit/s", "up Gbit/s", "worst down:up", "worst switch"], rows=over))
    bis = bisection(graph)
    share = bis.mbps / bis.full_mbps if bis.full_mbps else 0.0
    zones = cross_zone(graph, fabric)
    if zones:
        result.tables.append(Table(
            title="Across zones: bisection out of each zone and what a job spread over zones gets",
            columns=["zone", "host Gbit/s", "to aggregation Gbit/s", "cross-zone bisection Gbit/s",
                     "cross-zone job % of NIC bandwidth", "CTSW down:up"], rows=zones))
        worst_zone = min(zones, key=lambda r: (r[4] if isinstance(r[4], float) else 0.0, str(r[0])))
        result.findings.append(AnalysisFinding(
            analysis="capacity", subject="cross-zone", passed=True, severity="info",
            message=(f"cross-zone bisection {worst_zone[3]} Gbit/s out of {worst_zone[0]} ({worst_zone[1]} Gbit/s of "
                     f"hosts): a job spread over zones gets {worst_zone[4]} % of its NIC bandwidth across the "
                     f"aggregation tier when every server sends across at once"),
            data={"zone": worst_zone[0], "cross_zone_percent": worst_zone[4]}))
    result.tables.append(Table(
        title="Bisection bandwidth", columns=["bisection Gbit/s", "full (half of host) Gbit/s", "share", "method"],
        rows=[[bis.mbps / 1000, bis.full_mbps / 1000, round(share, 3), bis.method]]))
    worst, per_set, healthy, evaluated = worst_case(graph, options.failures)
    rows = sorted(([d, healthy[d] / 1000, round(100 * w, 1), graph.describe(f)] for d, (w, f) in worst.items()),
                  key=lambda r: (r[2], natural_key(str(r[0]))))
    result.tables.append(Table(
        title=f"Remaining capacity per destination RTSW, worst case over 0..{options.failures} failures",
        columns=["destination", "healthy Gbit/s", "worst %", "failures"], rows=rows[:100]))
    result.tables.append(Table(
        title="Capacity per failure set (one per symmetry class)",
        columns=["failures", "sets alike", "worst destination %", "mean %", "unreachable destinations"],
        rows=per_set))
    result.figures.append(Figure(
        title="Capacity under failure (per symmetry class of failure sets)", kind="bar",
        data={"labels": [r[0] for r in per_set], "series": {"worst destination %": [r[2] for r in per_set],
                                                            "mean %": [r[3] for r in per_set]},
              "xlabel": "failure set", "ylabel": "remaining capacity %"}))
    for d, (w, f) in sorted(worst.items()):
        if w == 0:
            result.findings.append(AnalysisFinding(
                analysis="capacity", subject=d, passed=False, severity="warning",
                message=f"{d} is unreachable from the other RTSWs after {graph.describe(f)}",
                fix="cable the RTSW to more CTSWs (hardware uplinks.count, cabling overrides)",
                data={"destination": d, "failures": graph.describe(f), "share": 0.0}))
    worst_row = rows[0] if rows else None
    ratio = max((r[4] for r in over if isinstance(r[4], float)), default=0.0)
    result.findings.append(AnalysisFinding(
        analysis="capacity", subject="fabric", passed=True, severity="info",
        message=(f"bisection {bis.mbps / 1000:g} Gbit/s ({100 * share:.0f} % of full, {bis.method}); worst "
                 f"RTSW oversubscription {ratio}:1" +
                 (f"; worst destination {worst_row[0]} reachable at {worst_row[2]} % after {worst_row[3]}"
                  if worst_row else "")),
        data={"bisection_mbps": bis.mbps}))
    total = sum(comb(graph.failure_elements(), i) for i in range(options.failures + 1))
    result.summary = {"bisection_gbps": bis.mbps / 1000, "bisection_share": round(share, 3),
                      "cross_zone_percent": min((r[4] for r in zones if isinstance(r[4], float)), default=None),
                      "bisection_method": bis.method, "worst_oversubscription": ratio,
                      "failure_sets_evaluated": evaluated, "failure_sets_represented": total,
                      "worst_destination": worst_row[0] if worst_row else None,
                      "worst_destination_percent": worst_row[2] if worst_row else None}
    result.seconds = time.perf_counter() - t0
    return result
