"""A pure-Python model of the fabric's eBGP routing, computed from the intent.

Every switch originates its prefixes (RTSW: host block and loopback; CTSW: loopback) to its eBGP peers, one
session per fabric link. The model is the converged state of shortest-AS-path selection with AS-path loop
prevention: a switch rejects a path that holds its own ASN, so with the CTSW tier sharing one ASN a path can
never go CTSW -> RTSW -> CTSW (valley-free), and a CTSW that loses its link to an RTSW has no route to it.
Equal-length paths are used together (ECMP, one member per session, at most `maximum_paths`); the path a
switch advertises is the one from the neighbour with the lowest router ID (a deterministic stand-in for
"oldest path first", which depends on timing).

Computing the state in order of AS-path length gives a stable solution: a switch reached at length L has no
acceptable shorter path (it would have been reached earlier) and nothing a later switch advertises is shorter.

Static routes (`StaticRoute`, none in the intent today) override BGP in the switch's FIB only (their
administrative distance is lower); they are not redistributed.

Twin symmetry (see graph.py): destinations in one twin class share their routes up to the swap of the
destination with the class representative, so only representatives are computed, unless the result could
depend on a tie-break (equal-length paths through different shared ASNs, or more equal paths than
`maximum_paths`) or static routes pin switches; then every destination is computed.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from nr_run.analysis.graph import NO_FAILURES, FabricGraph, Failed


@dataclass(frozen=True)
class StaticRoute:
    """On `switch`, send traffic for `prefix` to the neighbour `via` (every live link to it)."""

    switch: str
    prefix: str
    via: str


@dataclass
class Table:
    """Routes of one destination switch: per switch, the ECMP next-hop links (empty: no route, or the
    destination itself), and whether the computation was tie-break sensitive."""

    dest: str
    next_hops: dict[str, tuple[int, ...]]
    length: dict[str, int]
    tie_sensitive: bool = False


def bgp_table(graph: FabricGraph, adj: dict[str, list[tuple[int, str]]], dest: str,
              shared: frozenset[int]) -> Table:
    """The converged BGP routes toward `dest`'s prefixes over the live adjacency `adj`."""
    sw, rid = graph.switches, graph.rid
    asn = {n: s.asn for n, s in sw.items()}
    path_asns: dict[str, frozenset[int]] = {dest: frozenset((asn[dest],))}
    # the shared ASNs on each switch's path, as a small number: two options differ there when their numbers do
    via_shared: dict[str, int] = {}
    shared_id: dict[frozenset[int], int] = {}
    if shared:
        via_shared[dest] = shared_id.setdefault(path_asns[dest] & shared, len(shared_id))
    next_hops: dict[str, tuple[int, ...]] = {dest: ()}
    length: dict[str, int] = {dest: 0}
    sensitive = False
    frontier = [dest]
    level = 0
    while frontier:
        level += 1
        cand: dict[str, list[tuple[int, int, str]]] = {}
        for x in frontier:
            advertised = path_asns[x]
            rx = rid[x]
            for lid, y in adj[x]:
                if y in length or asn[y] in advertised:
                    continue
                found = cand.get(y)
                if found is None:
                    cand[y] = [(rx, lid, x)]
                else:
                    found.append((rx, lid, x))
        frontier = sorted(cand)
        for y in frontier:
            options = cand[y]
            if len(options) > 1:
                options.sort()
            limit = sw[y].maximum_paths
            if len(options) > limit:
                sensitive = True
            if shared and not sensitive and len({via_shared[x] for _, _, x in options}) > 1:
                sensitive = True
            chosen = options[:limit]
            winner = chosen[0][2]
            next_hops[y] = tuple(lid for _, lid, _ in chosen)
            length[y] = level
            path_asns[y] = path_asns[winner] | {asn[y]}
            if shared:
                via_shared[y] = shared_id.setdefault(path_asns[y] & shared, len(shared_id))
    return Table(dest, next_hops, length, sensitive)


ROUTES_KEPT = 32      # Routes remembered per graph: every K=1 representative of a large site, bounded at K >= 2


def routes_under(graph: FabricGraph, failed: Failed = NO_FAILURES) -> Routes:
    """Routes(graph, failed) (no statics, symmetric), remembered on the graph: the deadlock, ECMP and capacity
    analyses of one run evaluate the same failure representatives, so each BGP table is computed once."""
    memo = graph.memo.setdefault("routes", {})
    found = memo.get(failed)
    if found is None:
        if len(memo) >= ROUTES_KEPT:
            memo.pop(next(iter(memo)))
        found = memo[failed] = Routes(graph, failed)
    assert isinstance(found, Routes)
    return found


def static_pins(graph: FabricGraph, statics: tuple[StaticRoute, ...]) -> set[str]:
    """Switches a static route names (its switch, next hop and destination): symmetry must keep them fixed."""
    if not statics:
        return set()
    return Routes(graph, statics=statics, symmetric=False).pinned


class Routes:
    """Per-switch next-hop sets per destination switch under a set of failed links/switches."""

    def __init__(self, graph: FabricGraph, failed: Failed = NO_FAILURES, statics: tuple[StaticRoute, ...] = (),
                 symmetric: bool = True) -> None:
        self.graph, self.failed, self.statics = graph, failed, statics
        self.adj = graph.alive_adj(failed)
        self.shared = graph.shared_asns()
        self._tables: dict[str, Table] = {}
        self._pair: dict[tuple[str, str], list[int]] = {}
        self._swaps: dict[tuple[str, str], tuple[dict[int, int], dict[int, int], dict[int, int]]] = {}
        self.memo: dict[str, object] = {}        # views the analyses derive from these routes
        # destinations: live switches that originate a prefix
        self.dests = sorted(n for n in self.adj if graph.switches[n].prefixes)
        self.static_hops = self._resolve_statics()
        self.pinned = {s.switch for s in statics} | {s.via for s in statics} | self.static_dests
        self.rep_of: dict[str, str] = {}
        if symmetric:
            for members in graph.twin_classes(failed, fixed=self.pinned):
                rep = members[0]
                for m in members:
                    self.rep_of[m] = rep
        for d in self.dests:
            self.rep_of.setdefault(d, d)
        # a representative whose table was tie-break sensitive makes its members compute their own
        self._own: set[str] = set()

    # -- statics ------------------------------------------------------------------------------------------

    def _resolve_statics(self) -> dict[tuple[str, str], tuple[int, ...]]:
        """(switch, destination) -> static next-hop links; a static applies to a destination whose
        advertised prefix it equals or lies within (conservatively: to all of that destination's traffic)."""
        out: dict[tuple[str, str], tuple[int, ...]] = {}
        self.static_dests: set[str] = set()
        for st in self.statics:
            net = ipaddress.ip_network(st.prefix, strict=False)
            for d in self.dests:
                for p in self.graph.switches[d].prefixes:
                    pn = ipaddress.ip_network(p, strict=False)
                    if pn == net or net.subnet_of(pn):   # type: ignore[arg-type]
                        hops = tuple(lid for lid, peer in self.adj.get(st.switch, []) if peer == st.via)
                        if hops:                       # a static whose next hop is down is withdrawn
                            out[(st.switch, d)] = hops
                            self.static_dests.add(d)
        return out

    # -- tables ---------------------------------------------------------------------------------------------

    def table(self, dest: str) -> Table:
        """The BGP table of `dest` computed directly (no symmetry)."""
        found = self._tables.get(dest)
        if found is None:
            found = bgp_table(self.graph, self.adj, dest, self.shared)
            self._tables[dest] = found
        return found

    def representatives(self) -> list[str]:
        """Destinations whose tables stand for all others (every destination when symmetry cannot be used)."""
        reps = sorted({self.rep_of[d] for d in self.dests})
        out = []
        for r in reps:
            out.append(r)
            if self.table(r).tie_sensitive:
                members = [d for d in self.dests if self.rep_of[d] == r and d != r]
                self._own.update(members)
                out += members
        return sorted(out)

    def members(self, rep: str) -> list[str]:
        return [d for d in self.dests if self.rep_of[d] == rep and d not in self._own]

    def _pair_links(self, a: str, b: str) -> list[int]:
        found = self._pair.get((a, b))
        if found is None:
            if (a, "") not in self._pair:         # index every neighbour of `a` in one pass
                self._pair[(a, "")] = []
                for lid, peer in self.adj.get(a, []):
                    self._pair.setdefault((a, peer), []).append(lid)
            found = self._pair.get((a, b), [])
        return found

    def bgp_next_hops(self, switch: str, dest: str) -> tuple[int, ...]:
        rep = self.rep_of.get(dest, dest)
        if rep == dest or dest in self._own:
            return self.table(dest).next_hops.get(switch, ())
        table = self.table(rep)
        if table.tie_sensitive:
            self._own.add(dest)
            return self.table(dest).next_hops.get(switch, ())

        image = dest if switch == rep else rep if switch == dest else switch
        hops = table.next_hops.get(image, ())
        if not hops:
            return hops
        moved = self._swap_links(rep, dest)
        if image in (rep, dest):
            at_twin = moved[0] if image == rep else moved[1]
            return tuple(at_twin[lid] for lid in hops)
        other = moved[2]
        return tuple(other.get(lid, lid) for lid in hops)

    def _swap_links(self, rep: str, dest: str) -> tuple[dict[int, int], dict[int, int], dict[int, int]]:
        """Where the swap of twins `rep` and `dest` sends a next-hop link, by the switch it leaves: from `rep`
        (to the same-index parallel link from `dest` to the same peer), from `dest`, and from any other switch
        (a link to one twin becomes the same-index link to the other; links to neither stay)."""
        key = (rep, dest)
        found = self._swaps.get(key)
        if found is None:
            from_rep: dict[int, int] = {}
            from_dest: dict[int, int] = {}
            other: dict[int, int] = {}
            for a, b, out in ((rep, dest, from_rep), (dest, rep, from_dest)):
                for lid, peer in self.adj.get(a, []):
                    index = self._pair_links(a, peer).index(lid)
                    out[lid] = self._pair_links(b, peer)[index]
                    index = self._pair_links(peer, a).index(lid)
                    other[lid] = self._pair_links(peer, b)[index]
            found = self._swaps[key] = (from_rep, from_dest, other)
        return found

    def next_hops(self, switch: str, dest: str) -> tuple[int, ...]:
        """The FIB's next-hop links at `switch` toward `dest` (static first, then BGP); () for none."""
        if switch == dest or dest not in self.adj or switch not in self.adj:
            return ()
        static = self.static_hops.get((switch, dest))
        if static is not None:
            return static
        return self.bgp_next_hops(switch, dest)

    def reachable(self, switch: str, dest: str) -> bool:
        return switch == dest or bool(self.next_hops(switch, dest))
