"""Routing and forwarding: the RIB, policy routes, longest match, the hashed forwarding walk and ping."""

from __future__ import annotations

import ipaddress
import zlib
from dataclasses import dataclass, field

from nr_run.lab.twin.model.bgp import Bgp
from nr_run.lab.twin.model.core import Port
from nr_run.lab.twin.model.prefixes import by_length, matches, sort_key
from nr_run.lab.twin.model.route import NextHop, Route


@dataclass
class PingResult:
    transmitted: int
    received: int
    error: str = ""
    source: str | None = None
    path: list[str] = field(default_factory=list)



ETHERNET_OVERHEAD = 18      # Ethernet header and FCS on top of the IP packet


class Forwarding(Bgp):
    def _local_routes(self, dev: str) -> dict[str, Route]:
        """The RIB's own part: connected, then static routes (resolvable; a prefix's first static wins)."""
        def build() -> dict[str, Route]:
            st = self.states.get(dev)
            if not st:
                return {}
            rib: dict[str, Route] = {}
            for pfx, name in self.connected(dev).items():
                rib[pfx] = Route(pfx, "connected", [NextHop(None, name)])
            for sr in st.static_routes:
                if sr.source is not None:       # policy routes live in their own tables
                    continue
                pfx = str(ipaddress.ip_network(sr.prefix, strict=False))
                if sr.blackhole:
                    rib.setdefault(pfx, Route(pfx, "static", [], (), 1))
                    continue
                port = self._local_if_for(dev, sr.next_hop)
                if port and pfx not in rib:
                    rib.setdefault(pfx, Route(pfx, "static", [], (), 1)).next_hops.append(NextHop(sr.next_hop, port))
            return rib
        return self._cached(f"local-rib:{dev}", build)

    def routes(self, dev: str) -> dict[str, Route]:
        """The RIB: connected, static (resolvable), BGP (ECMP), best distance per prefix; the whole table, in
        prefix order (what `show ip route` without a prefix costs)."""
        def build() -> dict[str, Route]:
            rib = dict(self._local_routes(dev))
            for pfx, r in self.bgp_table(dev).items():
                rib.setdefault(pfx, r)
            return dict(sorted(rib.items(), key=lambda kv: sort_key(kv[0])))
        return self._cached(f"rib:{dev}", build)

    def route_for(self, dev: str, prefix: str) -> Route | None:
        """The RIB's route to exactly `prefix` (canonical form), computed for that prefix alone."""
        local = self._local_routes(dev).get(prefix)
        return local if local is not None else self.bgp_route(dev, prefix)

    def policy_routes(self, dev: str, src: str) -> dict[str, Route]:
        """Routes that apply only to packets sourced from `src` (resolvable next hops only)."""
        st = self.states.get(dev)
        out: dict[str, Route] = {}
        for sr in (st.static_routes if st else []):
            if sr.source != src:
                continue
            port = self._local_if_for(dev, sr.next_hop)
            if port:
                pfx = str(ipaddress.ip_network(sr.prefix, strict=False))
                out.setdefault(pfx, Route(pfx, "static", [], (), 1)).next_hops.append(NextHop(sr.next_hop, port))
        return out

    def lookup(self, dev: str, ip: str, src: str | None = None) -> Route | None:
        """Longest match; a source's policy table first, then the main table (like Linux ip rules).

        A connected destination always wins (its /31 is in every table on a real host).
        """
        addr = ipaddress.ip_address(ip)
        tables: list[dict[str, Route] | None] = [self.policy_routes(dev, src), None] if src else [None]
        for table in tables:        # None: the main table
            best: Route | None = None
            best_len = -1
            if table is None:
                best, best_len = self._longest_main(dev, addr)
            else:                   # a policy table: a few routes of one source
                for pfx, r in table.items():
                    net = ipaddress.ip_network(pfx)
                    if addr in net and net.prefixlen > best_len:
                        best, best_len = r, net.prefixlen
            if best is not None and table is not None:
                connected = self.lookup(dev, ip) if best_len < 32 else None
                if connected is not None and connected.protocol == "connected":
                    return connected
            if best is not None:
                return best
        return None

    def _longest_main(self, dev: str, addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> tuple[Route | None, int]:
        """Longest match in the main table, per prefix length present (the device's own routes, then every
        prefix some device originates), longest first: only the matching prefixes' routes are computed."""
        local = self._cached(f"lpm-local:{dev}", lambda: by_length(self._local_routes(dev)))
        learned = self._cached("lpm-bgp", lambda: by_length(self._origins()))
        version, bits, value = addr.version, addr.max_prefixlen, int(addr)
        mine = dict(matches(local, version, bits, value))
        theirs = dict(matches(learned, version, bits, value))
        for length in sorted({*mine, *theirs}, reverse=True):
            if length in mine:
                return self._local_routes(dev)[mine[length]], length
            route = self.bgp_route(dev, theirs[length])
            if route is not None:
                return route, length
        return None, -1

    def _trace(self, dev: str, src: str, dst: str, size: int, df: bool,
               links: list[tuple[Port, Port, int]] | None = None) -> tuple[str, list[str]]:
        """Walk the forwarding path; returns ("", hops) on delivery or (reason, hops). links, when given, gets each
        cable the packet crossed: (egress port, ingress port, bytes on the wire)."""
        owners = self.owners()
        packet = size + 28
        cur, hops = dev, [dev]
        for _ in range(64):
            owner = owners.get(dst)
            if owner and owner[0] == cur:
                return "", hops
            st = self.states.get(cur)
            if st is None:
                return f"{cur} unreachable", hops
            if cur != dev and not st.ip_routing:
                return f"{cur} does not forward", hops
            route = self.lookup(cur, dst, src if cur == dev else None)
            if route is not None and route.protocol == "static" and not route.next_hops:
                return f"{dst} blackholed by {route.prefix} on {cur}", hops
            if route is None or not route.next_hops:
                return f"no route to {dst} on {cur}", hops
            pick = zlib.crc32(f"{src}>{dst}".encode()) % len(route.next_hops)
            nh = route.next_hops[pick]
            if not self.link_up(cur, nh.interface):
                return f"link {cur}:{nh.interface} down", hops
            mtu = st.interfaces[nh.interface].mtu
            if packet > mtu:
                if df:
                    return f"{cur}:{nh.interface} MTU {mtu} < {packet} with DF", hops
                packet = mtu                    # fragmented to the egress MTU
            far = self.peer(cur, nh.interface)
            target = nh.ip or dst
            tgt_owner = owners.get(target)
            if far is None:
                return f"{cur}:{nh.interface} not cabled", hops
            if nh.ip is not None and tgt_owner != far:
                return f"next hop {target} does not answer on {cur}:{nh.interface}", hops
            if nh.ip is None and tgt_owner is not None and tgt_owner != far:
                return f"{target} does not answer on {cur}:{nh.interface}", hops
            pst = self.states.get(far[0])
            pif = pst.interfaces.get(far[1]) if pst else None
            if pif is None:
                return f"{far[0]}:{far[1]} not configured", hops
            if packet > pif.mtu:
                return f"{far[0]}:{far[1]} MTU {pif.mtu} drops {packet}-byte packets", hops
            if nh.ip is None and tgt_owner is None:
                return f"{target} does not answer on {cur}:{nh.interface}", hops
            if links is not None:
                links.append(((cur, nh.interface), far, packet + ETHERNET_OVERHEAD))
            cur = far[0]
            hops.append(cur)
        return "TTL exceeded", hops

    def source_for(self, dev: str, dst: str) -> str | None:
        """The address a device sources a packet to dst from: its egress interface address."""
        owners = self.owners()
        if dst in owners and owners[dst][0] == dev:
            return dst
        route = self.lookup(dev, dst)
        if route is None or not route.next_hops:
            return None
        st = self.states[dev]
        ifs = st.interfaces.get(route.next_hops[0].interface)
        if ifs and ifs.ipv4:
            return ifs.ipv4.split("/")[0]
        lo = st.loopbacks.get(route.next_hops[0].interface)
        return lo.split("/")[0] if lo else None

    def ping(self, dev: str, dst: str, size: int = 72, df: bool = False, count: int = 5,
             src_ip: str | None = None, tos: int = 0) -> PingResult:
        """ICMP echo from dev to dst and back; every packet takes the same (hashed) path."""
        try:
            ipaddress.ip_address(dst)
        except ValueError:
            return PingResult(count, 0, f"unknown host {dst}")
        owners = self.owners()
        if src_ip is not None and owners.get(src_ip, ("",))[0] != dev:
            return PingResult(count, 0, f"source {src_ip} is not an address of {dev}")
        src = src_ip or self.source_for(dev, dst)
        if src is None:
            return PingResult(count, 0, "Network is unreachable")
        there: list[tuple[Port, Port, int]] = []
        err, path = self._trace(dev, src, dst, size, df, there)
        if not err:
            back: list[tuple[Port, Port, int]] = []
            back_err, back_path = self._trace(owners[dst][0], dst, src, size, df, back)
            self.record_traffic(there, count)       # the echo requests crossed these cables
            if back_err:
                return PingResult(count, 0, "reply lost: " + back_err, src, path + back_path[1:])
            self.record_traffic(back, count)
            return PingResult(count, count, "", src, path)
        return PingResult(count, 0, err, src, path)

