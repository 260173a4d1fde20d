"""BGP: sessions from both ends' configs and the links, path propagation with ECMP, session uptimes."""

from __future__ import annotations

import ipaddress
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from nr_run.lab.twin.model.addressing import Addressing
from nr_run.lab.twin.model.route import NextHop, Route
from nr_run.lab.twin.policy import filter_redistributed


def _hop_key(nh: NextHop) -> tuple[str, str]:
    return (nh.ip or "", nh.interface)


def _path_of(candidate: tuple[tuple[int, ...], NextHop, bool]) -> tuple[tuple[int, ...], tuple[str, str]]:
    return candidate[0], _hop_key(candidate[1])



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
        originates or holds in its BGP table (RFC 4271 9.2.2.2). An aggregate contributes to no other one here."""
        def build() -> list[str]:
            st = self.states.get(dev)
            if not st or not st.bgp or not st.bgp.aggregates:
                return []
            known = [ipaddress.ip_network(p) for p in (*self._base_originated(dev), *self._base_table(dev))]
            out = []
            for agg in st.bgp.aggregates:
                net = ipaddress.ip_network(agg)
                if any(p.version == net.version and p.prefixlen > net.prefixlen and p.subnet_of(net)  # type: ignore[arg-type]
                       for p in known):
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

    def _receivers(self) -> tuple[dict[str, list[tuple[str, NextHop, bool]]], dict[str, int]]:
        """Who learns from whom: advertising device -> (receiver, the receiver's next hop, eBGP), and each BGP
        speaker's ASN; built once per change and shared by every origin's propagation."""
        def build() -> tuple[dict[str, list[tuple[str, NextHop, bool]]], dict[str, int]]:
            receivers: dict[str, list[tuple[str, NextHop, bool]]] = defaultdict(list)
            for s in self._sessions():
                receivers[s.peer].append((s.dev, NextHop(s.peer_ip, s.port), s.ebgp))
            return receivers, {d: st.bgp.asn for d, st in self.states.items() if st.bgp}
        return self._cached("receivers", build)

    def _max_paths(self) -> dict[str, int]:
        return self._cached("maxpaths", lambda: {d: st.bgp.maximum_paths if st.bgp else 1
                                                 for d, st in self.states.items()})

    def _propagation(self, origin: str, stops: frozenset[tuple[str, str]] = frozenset()
                     ) -> dict[str, tuple[tuple[int, ...], list[NextHop], bool]]:
        """Best paths toward `origin`'s prefixes that meet `stops` (_signature): dev -> (as_path, next hops,
        learned over iBGP)."""
        def build() -> dict[str, tuple[tuple[int, ...], list[NextHop], bool]]:
            receivers, asn = self._receivers()
            limits = self._max_paths()
            maps_in = self._filters()[1] if stops else {}
            best: dict[str, tuple[tuple[int, ...], list[NextHop], bool]] = {origin: ((), [], False)}
            frontier = [origin]
            while frontier:
                cand: dict[str, list[tuple[tuple[int, ...], NextHop, bool]]] = defaultdict(list)
                for v in frontier:
                    if ("sup", v) in stops:
                        continue
                    path_v, _, ibgp_learned = best[v]
                    ebgp_path = (asn[v],) + path_v
                    for u, nh, ebgp in receivers[v]:
                        if u in best or (not ebgp and ibgp_learned):
                            continue
                        rm = maps_in.get((u, nh.ip or ""))
                        if rm is not None and ("in", f"{u} {rm}") in stops:
                            continue
                        path = ebgp_path if ebgp else path_v
                        if asn[u] in path:
                            continue
                        cand[u].append((path, nh, not ebgp))
                frontier = []
                for u, lst in sorted(cand.items()):
                    if len(lst) == 1:
                        path, nh, ibgp = lst[0]
                        best[u] = (path, [nh], ibgp)
                    else:
                        shortest = min(len(c[0]) for c in lst)      # iBGP-learned paths do not grow
                        lst = [c for c in lst if len(c[0]) == shortest]
                        first = min(lst, key=_path_of)       # lowest AS path, then next hop
                        hops = sorted(dict.fromkeys(nh for _, nh, _ in lst), key=_hop_key)
                        best[u] = (first[0], hops[:max(1, limits[u])], first[2])
                    frontier.append(u)
            return best
        return self._cached(f"prop:{origin}:{sorted(stops)}", build)

    def _base_table(self, dev: str) -> dict[str, Route]:
        """`dev`'s BGP routes to what the devices originate before aggregation (an aggregate's contributors)."""
        return self._cached(f"base-bgp:{dev}", lambda: self._table(dev, self._base_originated))

    def bgp_table(self, dev: str) -> dict[str, Route]:
        """Best BGP routes of `dev` (prefixes it learned; own connected prefixes excluded)."""
        return self._cached(f"bgp:{dev}", lambda: self._table(dev, self.originated))

    def _table(self, dev: str, originated: Callable[[str], list[str]]) -> dict[str, Route]:
        """Best routes of `dev` toward the prefixes `originated(origin)` gives for each other device."""
        out: dict[str, Route] = {}
        if dev not in self.states or not self.states[dev].bgp:
            return out
        conn = self.connected(dev)
        for origin in sorted(self.states):
            if origin == dev:
                continue
            prefixes = originated(origin)
            if not prefixes:
                continue
            by_stops: dict[frozenset[tuple[str, str]], list[str]] = defaultdict(list)
            for pfx in prefixes:
                by_stops[self._signature(pfx)].append(pfx)
            for stops, group in by_stops.items():
                best = self._propagation(origin, stops).get(dev)
                if best is not None:
                    self._merge(dev, out, conn, best, group)
        return out

    def _merge(self, dev: str, out: dict[str, Route], conn: dict[str, str],
               best: tuple[tuple[int, ...], list[NextHop], bool], prefixes: list[str]) -> None:
        """Add one origin's best path toward `prefixes` to `dev`'s table `out` (equal AS-path lengths: ECMP)."""
        path, hops, _ = best
        for pfx in prefixes:
            if pfx in conn:
                continue
            cur = out.get(pfx)
            if cur is None or len(path) < len(cur.as_path):
                out[pfx] = Route(pfx, "bgp", list(hops), path, 200)
            elif len(path) == len(cur.as_path):
                limit = max(1, self.states[dev].bgp.maximum_paths)  # type: ignore[union-attr]
                merged = sorted(set(cur.next_hops) | set(hops), key=lambda n: (n.ip or "", n.interface))
                cur.next_hops = merged[:limit]

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
        def build() -> Counter[str | None]:
            return Counter(ip for r in self.bgp_table(dev).values() for ip in {nh.ip for nh in r.next_hops})
        return self._cached(f"via:{dev}", build)

    def bgp_sessions(self, dev: str) -> list[BgpSessionView]:
        st = self.states.get(dev)
        if not st or not st.bgp:
            return []
        self.track_sessions()
        out = []
        established = {(s.dev, s.peer_ip): s for s in self._sessions()}
        for ip, nb in sorted(st.bgp.neighbors.items(), key=lambda kv: ipaddress.ip_address(kv[0])):
            state, reason, pdev, local_ip, _ = self._session_check(dev, ip)
            pst = self.states.get(pdev) if pdev else None
            received = sent = 0
            if state == "Established" and (dev, ip) in established and pdev:
                received = self._routes_via(dev).get(ip, 0)
                peer_asn = pst.bgp.asn if pst and pst.bgp else None
                sent = self._routes_via(pdev).get(local_ip, 0)
                if peer_asn is None:
                    sent = 0
            out.append(BgpSessionView(
                peer_ip=ip, local_ip=local_ip, local_as=st.bgp.asn, remote_as=nb.remote_as,
                peer_as=pst.bgp.asn if pst and pst.bgp else None, state=state, idle_reason=reason,
                description=nb.description, router_id=st.bgp.router_id,
                peer_router_id=(pst.bgp.router_id or "0.0.0.0") if state == "Established" and pst and pst.bgp
                else "0.0.0.0",
                prefixes_received=received, prefixes_sent=sent, peer_device=pdev,
                since=self._session_since.get((dev, ip), (state, self._changed_at))[1]))
        return out

