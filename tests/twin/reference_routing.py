"""The straightforward routing model the twin's per-prefix one must equal: every device's whole BGP table built
from every origin's propagation, the RIB sorted by parsed networks, a longest match that scans the whole RIB,
prefix counts read off the device's own table, aggregates judged against the whole contributor table, and
each origin's propagation expanded whole before it is read.

Only the fabric model's tables are replaced; sessions, propagation, policy and faults are the twin's own, so
a difference between the two twins is a difference in how the per-prefix model assembles them."""

from __future__ import annotations

import ipaddress
from collections import Counter, defaultdict
from collections.abc import Callable

from nr_run.lab.twin.fabric import Fabric, NextHop, Route


class ReferenceFabric(Fabric):
    def _whole(self, dev: str, originated: Callable[[str], list[str]],
               ibgp: dict[str, bool] | None = None) -> dict[str, Route]:
        """dev's whole BGP table; `ibgp` gets, per prefix, whether its kept path was learned over iBGP."""
        out: dict[str, Route] = {}
        ibgp = {} if ibgp is None else ibgp
        if dev not in self.states or not self.states[dev].bgp:
            return out
        conn = self.connected(dev)
        limit = max(1, self.states[dev].bgp.maximum_paths)  # type: ignore[union-attr]
        for origin in sorted(self.states):
            if origin == dev:
                continue
            groups: dict[frozenset[tuple[str, str]], list[str]] = defaultdict(list)
            for pfx in originated(origin):
                groups[self._signature(pfx)].append(pfx)
            for stops, group in groups.items():
                best = self._propagation(origin, stops).table().get(dev)
                if best is None:
                    continue
                path, hops, learned_ibgp = best
                for pfx in group:
                    if pfx in conn:
                        continue
                    cur = out.get(pfx)
                    if cur is None or len(path) < len(cur.as_path):
                        out[pfx] = Route(pfx, "bgp", list(hops), path, 200)
                        ibgp[pfx] = learned_ibgp
                    elif len(path) == len(cur.as_path):
                        cur.next_hops = sorted(set(cur.next_hops) | set(hops),
                                               key=lambda n: (n.ip or "", n.interface))[:limit]
        return out

    def active_aggregates(self, dev: str) -> list[str]:
        st = self.states.get(dev)
        if not st or not st.bgp or not st.bgp.aggregates:
            return []
        table = self._whole(dev, self._base_originated)
        known = [ipaddress.ip_network(p) for p in (*self._base_originated(dev), *table)]
        return sorted(agg for agg in st.bgp.aggregates
                      if any(p.version == ipaddress.ip_network(agg).version
                             and p.prefixlen > ipaddress.ip_network(agg).prefixlen
                             and p.subnet_of(ipaddress.ip_network(agg)) for p in known))  # type: ignore[arg-type]

    def bgp_table(self, dev: str) -> dict[str, Route]:
        return self._cached(f"ref-bgp:{dev}", lambda: self._whole(dev, self.originated))

    def bgp_route_count(self, dev: str) -> int:
        return len(self.bgp_table(dev))

    def _sent(self, dev: str, peer_asn: int) -> int:
        st = self.states[dev]
        assert st.bgp is not None
        ibgp: dict[str, bool] = {}
        table = self._whole(dev, self.originated, ibgp)
        own = [p for p in self.originated(dev) if ("sup", dev) not in self._signature(p)]
        told = [p for p in table if ("sup", dev) not in self._signature(p)
                and not (ibgp[p] if st.bgp.asn == peer_asn else peer_asn in table[p].as_path)]
        return len(own) + len(told)

    def _routes_via(self, dev: str) -> Counter[str | None]:
        return Counter(ip for r in self.bgp_table(dev).values() for ip in {nh.ip for nh in r.next_hops})

    def routes(self, dev: str) -> dict[str, Route]:
        def build() -> dict[str, Route]:
            st = self.states.get(dev)
            if not st:
                return {}
            rib: dict[str, Route] = {}
            for pfx, name in self.connected(dev).items():
                rib[pfx] = Route(pfx, "connected", [NextHop(None, name)])
            for sr in st.static_routes:
                if sr.source is not None:
                    continue
                pfx = str(ipaddress.ip_network(sr.prefix, strict=False))
                if sr.blackhole:
                    rib.setdefault(pfx, Route(pfx, "static", [], (), 1))
                    continue
                port = self._local_if_for(dev, sr.next_hop)
                if port and pfx not in rib:
                    rib.setdefault(pfx, Route(pfx, "static", [], (), 1)).next_hops.append(NextHop(sr.next_hop, port))
            for pfx, r in self.bgp_table(dev).items():
                rib.setdefault(pfx, r)
            return dict(sorted(rib.items(), key=lambda kv: ipaddress.ip_network(kv[0])))
        return self._cached(f"ref-rib:{dev}", build)

    def route_for(self, dev: str, prefix: str) -> Route | None:
        return self.routes(dev).get(prefix)

    def _longest_main(self, dev: str, addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> tuple[Route | None, int]:
        best: Route | None = None
        best_len = -1
        for pfx, r in self.routes(dev).items():
            net = ipaddress.ip_network(pfx)
            if addr in net and net.prefixlen > best_len:
                best, best_len = r, net.prefixlen
        return best, best_len
