"""BGP: sessions from both ends' configs and the links, path propagation with ECMP, session uptimes."""

from __future__ import annotations

import ipaddress
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from nr_run.lab.twin.model.addressing import Addressing
from nr_run.lab.twin.model.prefixes import net_key
from nr_run.lab.twin.model.propagation import Edge, InEdge, Propagation
from nr_run.lab.twin.model.route import NextHop, Route
from nr_run.lab.twin.policy import filter_redistributed


def _hop_key(nh: NextHop) -> tuple[str, str]:
    return (nh.ip or "", nh.interface)


def _in_key(edge: InEdge) -> tuple[str, str]:
    return edge[4]


def _inside(key: tuple[int, int, int, int], agg: tuple[int, int, int, int]) -> bool:
    """Whether the prefix `key` (net_key) is strictly more specific than `agg`."""
    return key[0] == agg[0] and key[2] > agg[2] and key[1] & agg[3] == agg[1]



@dataclass(frozen=True)
class BgpSessionView:
    peer_ip: str
    local_ip: str | None
    local_as: int
    remote_as: int | None   # as configured locally
    peer_as: int | None     # the peer's real ASN (None if nothing answers)
    state: str              # Established | Active | Idle
    idle_reason: str
    description: str
    router_id: str | None
    peer_router_id: str
    prefixes_received: int
    prefixes_sent: int
    peer_device: str | None
    since: float            # when the current state started (lab clock)



@dataclass(frozen=True)
class _Session:
    """A directed, Established adjacency: `dev` learns from `peer` via `peer_ip` on `port`."""

    dev: str
    peer: str
    peer_ip: str
    port: str
    ebgp: bool



def message_counts(s: BgpSessionView, now: float, keepalive_s: float) -> tuple[int, int]:
    """(received, sent) BGP messages of a session at `now`: OPEN and the first KEEPALIVE, an UPDATE per prefix
    and End-of-RIB each way, then a KEEPALIVE every keepalive_s while it stays Established (0 before it ever was)."""
    if s.state != "Established":
        return 0, 0
    ticks = int(max(0.0, now - s.since) / keepalive_s)
    return 3 + s.prefixes_received + ticks, 3 + s.prefixes_sent + ticks


@dataclass
class _Tally:
    """One device's BGP counts: routes held, per next-hop address, and what it can advertise."""

    total: int = 0                                   # routes in its BGP table
    via: Counter[str | None] = field(default_factory=Counter)   # next-hop address -> routes using it
    own: int = 0                                     # prefixes it originates and advertises
    learned: int = 0                                 # learned routes it advertises (not suppressed)
    from_ibgp: int = 0                               # of those, learned over iBGP
    with_asn: Counter[int] = field(default_factory=Counter)     # peer ASN -> advertised learned routes through it


class Bgp(Addressing):
    def _session_check(self, dev: str, peer_ip: str) -> tuple[str, str, str | None, str | None, str | None]:
        """(state, idle_reason, peer_device, local_ip, port) of dev's configured neighbor peer_ip."""
        st = self.states[dev]
        assert st.bgp is not None
        nb = st.bgp.neighbors[peer_ip]
        if nb.shutdown:
            return "Idle", "Administratively shut down", None, None, None
        port = self._local_if_for(dev, peer_ip)
        if port is None:
            return "Active", "", None, None, None
        local_ip = st.interfaces[port].ipv4.split("/")[0]  # type: ignore[union-attr]
        far = self.peer(dev, port)
        owner = self.owners().get(peer_ip)
        if far is None or owner != far:
            return "Active", "", None, local_ip, port
        pst = self.states.get(far[0])
        if not pst or not pst.bgp or local_ip not in pst.bgp.neighbors:
            return "Active", "", far[0], local_ip, port
        pnb = pst.bgp.neighbors[local_ip]
        if pnb.shutdown:
            return "Active", "", far[0], local_ip, port
        if nb.remote_as != pst.bgp.asn or pnb.remote_as != st.bgp.asn:
            return "Active", "", far[0], local_ip, port
        return "Established", "", far[0], local_ip, port

    def _sessions(self) -> list[_Session]:
        def build() -> list[_Session]:
            out = []
            for dev, st in sorted(self.states.items()):
                if not st.bgp:
                    continue
                for ip, nb in sorted(st.bgp.neighbors.items()):
                    state, _, pdev, _, port = self._session_check(dev, ip)
                    if state == "Established" and nb.activated and pdev and port:
                        pst = self.states[pdev]
                        ebgp = pst.bgp.asn != st.bgp.asn  # type: ignore[union-attr]
                        out.append(_Session(dev, pdev, ip, port, ebgp))
            # a session exchanges routes only if both ends activated it
            pairs = {(s.dev, s.peer) for s in out}
            return [s for s in out if (s.peer, s.dev) in pairs]
        return self._cached("sessions", build)

    def _exchanging(self) -> set[tuple[str, str]]:
        """(device, peer address) of every session that exchanges routes: built once per change, since each
        device's summary asks it of every neighbour."""
        return self._cached("exchanging", lambda: {(s.dev, s.peer_ip) for s in self._sessions()})

    def originated(self, dev: str) -> list[str]:
        """Prefixes `dev` injects into BGP: connected (if redistributed), `network` statements, advertised
        static routes and its active aggregates (cached)."""
        def build() -> list[str]:
            return sorted(set(self._base_originated(dev)) | set(self.active_aggregates(dev)))
        return self._cached(f"orig:{dev}", build)

    def _base_originated(self, dev: str) -> list[str]:
        return self._cached(f"base-orig:{dev}", lambda: self._originated(dev))

    def active_aggregates(self, dev: str) -> list[str]:
        """The aggregates `dev` originates: those with a contributing route, a strictly more specific prefix it
        originates or holds in its BGP table (RFC 4271 9.2.2.2). An aggregate contributes to no other one here.
        Only the contributors' own propagations are computed, until one is found."""
        def build() -> list[str]:
            st = self.states.get(dev)
            if not st or not st.bgp or not st.bgp.aggregates:
                return []
            own = [net_key(p) for p in self._base_originated(dev)]
            learned = self._origins(base=True)
            out = []
            for agg in st.bgp.aggregates:
                key = net_key(agg)
                if any(_inside(k, key) for k in own) or any(
                        _inside(net_key(p), key) and self.bgp_route(dev, p, base=True) is not None for p in learned):
                    out.append(agg)
            return sorted(out)
        return self._cached(f"agg:{dev}", build)

    def _filters(self) -> tuple[list[tuple[str, ipaddress.IPv4Network]], dict[tuple[str, str], str]]:
        """What stops a prefix on its way: (device, summary-only aggregate) pairs, whose more specific prefixes
        that device advertises to nobody, and (receiver, peer address) -> the route-map it applies inbound."""
        def build() -> tuple[list[tuple[str, ipaddress.IPv4Network]], dict[tuple[str, str], str]]:
            suppress = [(d, ipaddress.IPv4Network(a)) for d, st in sorted(self.states.items()) if st.bgp
                        for a, only in sorted(st.bgp.aggregates.items()) if only]
            maps_in = {(d, ip): nb.route_map_in for d, st in sorted(self.states.items()) if st.bgp
                       for ip, nb in sorted(st.bgp.neighbors.items()) if nb.route_map_in is not None}
            return suppress, maps_in
        return self._cached("bgp-filters", build)

    def _signature(self, prefix: str) -> frozenset[tuple[str, str]]:
        """The stops `prefix` meets: ("sup", device) for a device that suppresses it, ("in", "device route-map")
        for an inbound route-map that denies it. Prefixes with equal signatures propagate alike."""
        suppress, maps_in = self._filters()
        if not suppress and not maps_in:
            return frozenset()
        memo: dict[str, frozenset[tuple[str, str]]] = self._cached("bgp-signatures", dict)
        if prefix not in memo:
            memo[prefix] = self._stops(prefix, suppress, maps_in)
        return memo[prefix]

    def _stops(self, prefix: str, suppress: list[tuple[str, ipaddress.IPv4Network]],
               maps_in: dict[tuple[str, str], str]) -> frozenset[tuple[str, str]]:
        net = ipaddress.IPv4Network(prefix)
        out = {("sup", d) for d, agg in suppress if net.prefixlen > agg.prefixlen and net.subnet_of(agg)}
        for dev, rm in sorted(set((d, m) for (d, _), m in maps_in.items())):
            policy = self.states[dev].routing_policy
            if policy is None or not policy.route_map_permits(rm, prefix):
                out.add(("in", f"{dev} {rm}"))
        return frozenset(out)

    def _originated(self, dev: str) -> list[str]:
        st = self.states.get(dev)
        if not st or not st.bgp:
            return []
        conn = self.connected(dev)
        out = set(conn) if st.bgp.redistribute_connected else set()
        out = filter_redistributed(st.routing_policy, st.bgp.redistribute_connected_route_map, out)
        out |= {str(ipaddress.ip_network(n, strict=False)) for n in st.bgp.networks
                if str(ipaddress.ip_network(n, strict=False)) in conn}
        if st.bgp.redistribute_static:
            # zebra redistributes a static route only while it is installed: a blackhole always is,
            # a next-hop route when the next hop is on a connected subnet (and connected does not win)
            for sr in st.static_routes:
                pfx = str(ipaddress.ip_network(sr.prefix, strict=False))
                if sr.advertise and pfx not in conn and (sr.blackhole or self._local_if_for(dev, sr.next_hop)):
                    out.add(pfx)
        return sorted(out)

    def _receivers(self) -> tuple[dict[str, list[Edge]], dict[str, list[InEdge]], dict[str, int]]:
        """Who learns from whom: advertising device -> edges toward its receivers, receiving device -> the same
        edges from its advertisers, and each BGP speaker's ASN; built once per change and shared by every
        origin's propagation."""
        def build() -> tuple[dict[str, list[Edge]], dict[str, list[InEdge]], dict[str, int]]:
            asn = {d: st.bgp.asn for d, st in self.states.items() if st.bgp}
            maps_in = self._filters()[1]
            receivers: dict[str, list[Edge]] = defaultdict(list)
            senders: dict[str, list[InEdge]] = defaultdict(list)
            for s in self._sessions():
                nh = NextHop(s.peer_ip, s.port)
                rm = maps_in.get((s.dev, s.peer_ip))
                stop = None if rm is None else ("in", f"{s.dev} {rm}")
                receivers[s.peer].append((s.dev, nh, s.ebgp, asn[s.dev], _hop_key(nh), stop))
                senders[s.dev].append((s.peer, nh, s.ebgp, asn[s.dev], _hop_key(nh), stop))
            for edges in senders.values():
                edges.sort(key=_in_key)
            return dict(receivers), dict(senders), asn
        return self._cached("receivers", build)

    def _max_paths(self) -> dict[str, int]:
        return self._cached("maxpaths", lambda: {d: st.bgp.maximum_paths if st.bgp else 1
                                                 for d, st in self.states.items()})

    def _propagation(self, origin: str, stops: frozenset[tuple[str, str]] = frozenset()) -> Propagation:
        """Best paths toward `origin`'s prefixes that meet `stops` (_signature), expanded as far as questions
        reach; kept until the next change."""
        def build() -> Propagation:
            receivers, senders, asn = self._receivers()
            return Propagation(origin, stops, receivers, senders, asn, self._max_paths())
        return self._cached(f"prop:{origin}:{sorted(stops)}", build)

    # ---- per prefix: who originates it, and a device's best path toward it ------------------------------
    def _origins(self, base: bool = False) -> dict[str, tuple[str, ...]]:
        """prefix -> the devices that originate it (sorted), with active aggregates or (base) without."""
        def build() -> dict[str, tuple[str, ...]]:
            originated = self._base_originated if base else self.originated
            out: dict[str, list[str]] = defaultdict(list)
            for origin in sorted(self.states):
                for pfx in originated(origin):
                    out[pfx].append(origin)
            return {p: tuple(v) for p, v in out.items()}
        return self._cached("origins-base" if base else "origins", build)

    def _classes(self) -> dict[tuple[tuple[str, ...], frozenset[tuple[str, str]]], list[str]]:
        """Prefixes that propagate alike, grouped: (their origins, their stops) -> the prefixes."""
        def build() -> dict[tuple[tuple[str, ...], frozenset[tuple[str, str]]], list[str]]:
            out: dict[tuple[tuple[str, ...], frozenset[tuple[str, str]]], list[str]] = defaultdict(list)
            for pfx, origins in self._origins().items():
                out[(origins, self._signature(pfx))].append(pfx)
            return dict(out)
        return self._cached("prefix-classes", build)

    def _best(self, dev: str, origins: tuple[str, ...], stops: frozenset[tuple[str, str]]
              ) -> tuple[tuple[int, ...], list[NextHop], bool] | None:
        """`dev`'s BGP path toward prefixes of `origins` meeting `stops`: the shortest AS path over the origins
        (in name order, the first one's path kept), equal lengths merged into ECMP up to maximum-paths; and
        whether that path was learned over iBGP."""
        path: tuple[int, ...] | None = None
        hops: list[NextHop] = []
        ibgp = False
        for origin in origins:
            if origin == dev:
                continue
            found = self._propagation(origin, stops).get(dev)
            if found is None:
                continue
            if path is None or len(found[0]) < len(path):
                path, hops, ibgp = found[0], list(found[1]), found[2]
            elif len(found[0]) == len(path):
                limit = max(1, self.states[dev].bgp.maximum_paths)  # type: ignore[union-attr]
                hops = sorted(set(hops) | set(found[1]), key=_hop_key)[:limit]
        return None if path is None else (path, hops, ibgp)

    def bgp_route(self, dev: str, prefix: str, base: bool = False) -> Route | None:
        """`dev`'s best BGP route to one prefix (None: it holds none, or the prefix is connected there); only
        the propagations of that prefix's origins are computed."""
        st = self.states.get(dev)
        origins = self._origins(base).get(prefix)
        if not st or not st.bgp or not origins or prefix in self.connected(dev):
            return None
        memo: dict[tuple[str, str, bool], Route | None] = self._cached("bgp-routes", dict)
        key = (dev, prefix, base)
        if key not in memo:
            best = self._best(dev, origins, self._signature(prefix))
            memo[key] = None if best is None else Route(prefix, "bgp", best[1], best[0], 200)
        return memo[key]

    def bgp_table(self, dev: str) -> dict[str, Route]:
        """Best BGP routes of `dev` (prefixes it learned; own connected prefixes excluded): the whole table,
        in the order the origins (by name) first give each prefix."""
        def build() -> dict[str, Route]:
            out: dict[str, Route] = {}
            st = self.states.get(dev)
            if not st or not st.bgp:
                return out
            conn = self.connected(dev)
            origins = self._origins()
            for origin in sorted(self.states):
                if origin == dev:
                    continue
                by_stops: dict[frozenset[tuple[str, str]], list[str]] = defaultdict(list)
                for pfx in self.originated(origin):
                    by_stops[self._signature(pfx)].append(pfx)
                for stops, group in by_stops.items():
                    if self._propagation(origin, stops).get(dev) is None:
                        continue
                    for pfx in group:
                        if pfx in out or pfx in conn:
                            continue
                        best = self._best(dev, origins[pfx], stops)
                        assert best is not None     # this origin's path at least
                        out[pfx] = Route(pfx, "bgp", best[1], best[0], 200)
            return out
        return self._cached(f"bgp:{dev}", build)

    def _counts(self, dev: str) -> _Tally:
        """What `dev`'s BGP table holds and advertises, counted per class of prefixes that propagate alike: no
        table is built, and a device's counts need no other device's, so a spine's summary over thousands of
        peers costs its own table once."""
        def build() -> _Tally:
            tally = _Tally()
            st = self.states.get(dev)
            if not st or not st.bgp:
                return tally
            conn = self.connected(dev)
            origins = self._origins()
            skipped: Counter[tuple[tuple[str, ...], frozenset[tuple[str, str]]]] = Counter(
                (origins[p], self._signature(p)) for p in conn if p in origins)
            suppressed = ("sup", dev)
            peer_asns = {nb.remote_as for nb in st.bgp.neighbors.values() if nb.remote_as is not None}
            for pfx in self.originated(dev):
                if suppressed not in self._signature(pfx):
                    tally.own += 1
            for (owners, stops), prefixes in self._classes().items():
                best = self._best(dev, owners, stops)
                if best is None:
                    continue
                n = len(prefixes) - skipped[(owners, stops)]
                tally.total += n
                for ip in {nh.ip for nh in best[1]}:
                    tally.via[ip] += n
                if suppressed in stops:
                    continue
                tally.learned += n
                if best[2]:
                    tally.from_ibgp += n
                for asn in peer_asns.intersection(best[0]):
                    tally.with_asn[asn] += n
            return tally
        return self._cached(f"counts:{dev}", build)

    def _sent(self, dev: str, peer_asn: int) -> int:
        """How many prefixes `dev` advertises to a peer of `peer_asn`: what it originates and learned, less what
        it suppresses, what the peer would drop as an AS-path loop (eBGP) and what iBGP split horizon keeps
        (an iBGP peer). Unverified against EOS and FRR, whose adj-RIB-out may still hold the looped routes."""
        st = self.states[dev]
        tally = self._counts(dev)
        if st.bgp is not None and st.bgp.asn == peer_asn:
            return tally.own + tally.learned - tally.from_ibgp
        return tally.own + tally.learned - tally.with_asn[peer_asn]

    def bgp_route_count(self, dev: str) -> int:
        """How many prefixes `dev`'s BGP table holds (a summary's RIB entries), without building it."""
        return self._counts(dev).total

    def track_sessions(self) -> None:
        """After any change, note which sessions changed state (and since when); the others keep their time."""
        key = (self._version, self.faults.version)
        if key == self._tracked_key:
            return
        self._sessions()            # refreshes the cache (and _changed_at) for the current inputs
        now = self._changed_at
        seen = set()
        for dev, st in self.states.items():
            if not st.bgp:
                continue
            for ip in st.bgp.neighbors:
                state = self._session_check(dev, ip)[0]
                old = self._session_since.get((dev, ip))
                if old is None or old[0] != state:
                    self._session_since[(dev, ip)] = (state, now)
                seen.add((dev, ip))
        for gone in set(self._session_since) - seen:
            del self._session_since[gone]
        self._tracked_key = key

    def timers(self, dev: str, s: BgpSessionView) -> tuple[int, int]:
        """(keepalive, hold) seconds a session of `dev` negotiates: the lower hold time of both ends, and the
        local keepalive unless it exceeds a third of that hold time (RFC 4271 4.2)."""
        st = self.states[dev]
        assert st.bgp is not None
        mine = st.bgp.neighbors[s.peer_ip]
        hold = mine.hold_s
        pst = self.states.get(s.peer_device) if s.peer_device else None
        theirs = pst.bgp.neighbors.get(s.local_ip or "") if pst and pst.bgp else None
        if theirs is not None:
            hold = min(hold, theirs.hold_s)
        return min(mine.keepalive_s, hold // 3) if hold else 0, hold

    def _routes_via(self, dev: str) -> Counter[str | None]:
        """next-hop address -> how many of dev's BGP routes use it: counted once per device, not once per
        neighbour (a spine of a big site has hundreds)."""
        return self._counts(dev).via

    def bgp_sessions(self, dev: str) -> list[BgpSessionView]:
        st = self.states.get(dev)
        if not st or not st.bgp:
            return []
        self.track_sessions()
        out = []
        established = self._exchanging()
        for ip, nb in sorted(st.bgp.neighbors.items(), key=lambda kv: ipaddress.ip_address(kv[0])):
            state, reason, pdev, local_ip, _ = self._session_check(dev, ip)
            pst = self.states.get(pdev) if pdev else None
            received = sent = 0
            if state == "Established" and (dev, ip) in established and pdev:
                received = self._routes_via(dev).get(ip, 0)
                peer_asn = pst.bgp.asn if pst and pst.bgp else None
                sent = 0 if peer_asn is None else self._sent(dev, peer_asn)
            out.append(BgpSessionView(
                peer_ip=ip, local_ip=local_ip, local_as=st.bgp.asn, remote_as=nb.remote_as,
                peer_as=pst.bgp.asn if pst and pst.bgp else None, state=state, idle_reason=reason,
                description=nb.description, router_id=st.bgp.router_id,
                peer_router_id=(pst.bgp.router_id or "0.0.0.0") if state == "Established" and pst and pst.bgp
                else "0.0.0.0",
                prefixes_received=received, prefixes_sent=sent, peer_device=pdev,
                since=self._session_since.get((dev, ip), (state, self._changed_at))[1]))
        return out

