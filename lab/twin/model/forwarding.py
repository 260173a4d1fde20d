"""Routing and forwarding: the RIB, policy routes, longest match, the hashed forwarding walk and ping."""

from __future__ import annotations

import ipaddress
import zlib
from dataclasses import dataclass, field

from nr_run.lab.twin.model.bgp import Bgp
from nr_run.lab.twin.model.core import Port
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
    def routes(self, dev: str) -> dict[str, Route]:
        """The RIB: connected, static (resolvable), BGP (ECMP), best distance per prefix."""
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
            for pfx, r in self.bgp_table(dev).items():
                rib.setdefault(pfx, r)
            return dict(sorted(rib.items(), key=lambda kv: ipaddress.ip_network(kv[0])))
        return self._cached(f"rib:{dev}", build)

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
        main = self.routes(dev)
        tables = [self.policy_routes(dev, src), main] if src else [main]
        for table in tables:
            best: Route | None = None
            best_len = -1
            if table is main:
                best, best_len = self._longest_match(dev, addr)
            for pfx, r in (table.items() if table is not main else ()):
                net = ipaddress.ip_network(pfx)
                if addr in net and net.prefixlen > best_len:
                    best, best_len = r, net.prefixlen
            if best is not None and table is not main:
                connected = self.lookup(dev, ip) if best_len < 32 else None
                if connected is not None and connected.protocol == "connected":
                    return connected
            if best is not None:
                return best
        return None

    def _longest_match(self, dev: str, addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> tuple[Route | None, int]:
        """(route, prefix length) of the main table's longest match: one dictionary probe per prefix length in
        the table, not a parse of every prefix (a switch of a big site holds thousands)."""
        def build() -> list[tuple[int, int, dict[int, Route]]]:
            by_len: dict[tuple[int, int], dict[int, Route]] = {}
            for pfx, r in self.routes(dev).items():
                net = ipaddress.ip_network(pfx)
                by_len.setdefault((net.prefixlen, net.version), {})[int(net.network_address)] = r
            return [(length, version, nets) for (length, version), nets in sorted(by_len.items(), reverse=True)]
        bits = addr.max_prefixlen
        for length, version, nets in self._cached(f"lpm:{dev}", build):
            if version != addr.version:
                continue
            route = nets.get(int(addr) >> (bits - length) << (bits - length))
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

