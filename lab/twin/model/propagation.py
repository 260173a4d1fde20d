"""One origin's BGP propagation, expanded a layer (one BGP hop) at a time and only as far as a question needs.

A whole propagation holds every speaker's best path toward the origin: kept for every origin of a site, that
is the site's size squared (at 4,096 switches, gigabytes). Here a layer is expanded only when it is cheap or
when a question reaches past it; a speaker one hop beyond the expanded layers is answered from its own
advertisers (its in-degree, a few uplinks on a leaf) without storing it, so a leaf's question about a far
leaf's prefix costs its uplinks, not the spine's fan-out.
"""

from __future__ import annotations

from nr_run.lab.twin.model.route import NextHop

# (as_path, next hops, learned over iBGP): one speaker's best path toward the origin
Best = tuple[tuple[int, ...], list[NextHop], bool]
# an advertiser's edge toward one receiver: (receiver, the receiver's next hop, eBGP, the receiver's ASN,
# the next hop's sort key, the receiver's inbound route-map as a stop, if it applies one)
Edge = tuple[str, NextHop, bool, int, tuple[str, str], "tuple[str, str] | None"]
# the same edge seen from the receiver: (advertiser, ...the rest as in Edge)
InEdge = Edge
# (as_path, next hop key, next hop, learned over iBGP): one candidate path of a receiver
_Candidate = tuple[tuple[int, ...], tuple[str, str], NextHop, bool]

# a layer whose expansion reads at most this many edges is expanded (and kept) rather than answered per speaker
CHEAP_LAYER = 64


def _by_hop(candidate: _Candidate) -> tuple[str, str]:
    return candidate[1]


class Propagation:
    """Best paths toward `origin`'s prefixes that meet `stops`: ("sup", device) for a device that advertises
    them to nobody, ("in", "device route-map") for an inbound route-map that denies them.

    Paths spread one BGP hop per layer; a speaker takes the first layer that reaches it, the shortest AS path
    among that layer's candidates, ECMP over their next hops up to its maximum-paths."""

    def __init__(self, origin: str, stops: frozenset[tuple[str, str]], receivers: dict[str, list[Edge]],
                 senders: dict[str, list[InEdge]], asn: dict[str, int], limits: dict[str, int]) -> None:
        self.stops = stops
        self._receivers = receivers
        self._senders = senders
        self._asn = asn
        self._limits = limits
        self._best: dict[str, Best] = {origin: ((), [], False)}
        self._frontier: list[str] = [origin]      # the last expanded layer
        self._in_frontier: set[str] = {origin}
        self._fan_out = len(receivers.get(origin, ()))     # edges the next expansion reads

    def get(self, dev: str) -> Best | None:
        """`dev`'s best path toward the origin (None: no path reaches it)."""
        while True:
            found = self._best.get(dev)
            if found is not None or not self._frontier:
                return found
            if not self._worth_expanding(dev):
                found = self._next_layer_at(dev)
                if found is not None:
                    return found
            self._expand()

    def _worth_expanding(self, dev: str) -> bool:
        """Whether to expand (and keep) the next layer rather than answer `dev` from its own advertisers: when
        the layer is cheap, or costs no more than `dev`'s advertisers do."""
        return self._fan_out <= CHEAP_LAYER or self._fan_out <= len(self._senders.get(dev, ()))

    def table(self) -> dict[str, Best]:
        """Every speaker's best path (all layers expanded)."""
        while self._frontier:
            self._expand()
        return self._best

    # ---- one layer ---------------------------------------------------------------------------------------
    def _offer(self, v: str, u: str, nh: NextHop, ebgp: bool, asn_u: int, key: tuple[str, str],
               stop: tuple[str, str] | None) -> _Candidate | None:
        """The path `v` (on the last layer) offers `u`, if `v` advertises it and `u` accepts it."""
        stops = self.stops
        if stops and ("sup", v) in stops:
            return None
        path_v, _, ibgp_learned = self._best[v]
        if ebgp:
            path = (self._asn[v],) + path_v
        elif ibgp_learned:              # iBGP split horizon
            return None
        else:
            path = path_v
        if (stop is not None and stop in stops) or asn_u in path:
            return None
        return path, key, nh, not ebgp

    def _choose(self, u: str, offers: list[_Candidate]) -> Best:
        """`u`'s best of `offers` (in next-hop key order): the shortest AS paths (iBGP-learned paths do not
        grow), the lowest of them kept, ECMP over their next hops; a next hop's key names it, so it is offered
        once per advertiser and duplicates sit side by side."""
        if len(offers) == 1:
            path, _, nh, ibgp = offers[0]
            return path, [nh], ibgp
        shortest = min(len(c[0]) for c in offers)
        offers = [c for c in offers if len(c[0]) == shortest]
        path = min(c[0] for c in offers)
        ibgp = next(c[3] for c in offers if c[0] == path)
        hops = [c[2] for i, c in enumerate(offers) if i == 0 or c[1] != offers[i - 1][1]]
        return path, hops[:max(1, self._limits[u])], ibgp

    def _next_layer_at(self, u: str) -> Best | None:
        """`u`'s best path if the next layer reaches it, from its own advertisers on the last layer (held in
        next-hop key order); not kept."""
        offers = []
        for v, nh, ebgp, asn_u, key, stop in self._senders.get(u, ()):
            if v in self._in_frontier:
                offer = self._offer(v, u, nh, ebgp, asn_u, key, stop)
                if offer is not None:
                    offers.append(offer)
        return self._choose(u, offers) if offers else None

    def _expand(self) -> None:
        best = self._best
        cand: dict[str, list[_Candidate]] = {}
        for v in self._frontier:
            for u, nh, ebgp, asn_u, key, stop in self._receivers.get(v, ()):
                if u in best:
                    continue
                offer = self._offer(v, u, nh, ebgp, asn_u, key, stop)
                if offer is not None:
                    cand.setdefault(u, []).append(offer)
        self._frontier = sorted(cand)
        self._in_frontier = set(cand)
        self._fan_out = sum(len(self._receivers.get(v, ())) for v in self._frontier)
        for u in self._frontier:
            offers = cand[u]
            offers.sort(key=_by_hop)
            best[u] = self._choose(u, offers)
