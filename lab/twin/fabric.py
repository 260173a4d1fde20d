"""The fabric model: operational state computed from device states, cabling and faults.

Nothing here is canned: links, LLDP, BGP sessions, routes, ping and PFC/ECN counters all follow
from what the devices' configs say (DeviceState), the cables (Topology) and injected Faults.
Results are cached per (states version, faults version).
"""

from __future__ import annotations

import functools
import ipaddress
import time
import zlib
from collections import defaultdict
from dataclasses import dataclass, field

from nr_run.lab.twin.faults import (
    DROPS_PER_S,
    ECN_MARKS_PER_S,
    FULL_QUEUE_BYTES,
    PFC_STORM_FRAMES_PER_S,
    Fault,
    Faults,
)
from nr_run.lab.twin.policy import filter_redistributed
from nr_run.lab.twin.state import DeviceState, EcnQueue, IfState
from nr_run.lab.twin.topology import Topology

Port = tuple[str, str]


@functools.lru_cache(maxsize=65536)
def _iface(text: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    """Parsed interface addresses (the same few thousand strings are parsed again on every change)."""
    return ipaddress.ip_interface(text)


def _hop_key(nh: NextHop) -> tuple[str, str]:
    return (nh.ip or "", nh.interface)


def _path_of(candidate: tuple[tuple[int, ...], NextHop, bool]) -> tuple[tuple[int, ...], tuple[str, str]]:
    return candidate[0], _hop_key(candidate[1])


@functools.lru_cache(maxsize=65536)
def _addr_int(text: str) -> int:
    return int(ipaddress.ip_address(text))


@dataclass(frozen=True)
class LldpNeighbor:
    port: str               # local port
    device: str             # neighbor node name
    hostname: str           # neighbor's configured hostname (systemName)
    neighbor_port: str      # the port ID the neighbor sends (its interface name, or SONiC's PORT alias)
    neighbor_port_descr: str = ""
    port_id_subtype: str = "ifname"     # LLDP port ID subtype: ifname (interface name) | local (locally assigned)


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
class NextHop:
    ip: str | None          # None: directly connected
    interface: str


@dataclass
class Route:
    prefix: str
    protocol: str           # connected | static | bgp
    next_hops: list[NextHop]
    as_path: tuple[int, ...] = ()
    distance: int = 0


@dataclass
class PingResult:
    transmitted: int
    received: int
    error: str = ""
    source: str | None = None
    path: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Session:
    """A directed, Established adjacency: `dev` learns from `peer` via `peer_ip` on `port`."""

    dev: str
    peer: str
    peer_ip: str
    port: str
    ebgp: bool


class Fabric:
    def __init__(self, topology: Topology, faults: Faults | None = None) -> None:
        self.topology = topology
        self.faults = faults or Faults()
        self.states: dict[str, DeviceState] = {}
        self._version = 0
        self._cache_key: tuple[int, int] = (-1, -1)
        self._cache: dict = {}
        self._changed_at = time.time()
        # per session (device, peer ip): (state, since); sessions a change did not touch keep their uptime
        self._session_since: dict[tuple[str, str], tuple[str, float]] = {}
        self._tracked_key: tuple[int, int] = (-1, -1)
        # (device, watermark kind) -> when the device's watermarks of that kind were last cleared
        self._wm_cleared: dict[tuple[str, str], float] = {}

    # ---- inputs -------------------------------------------------------------------------------
    def set_state(self, device: str, state: DeviceState) -> None:
        """Install what a device's configuration now says (called by the platform interpreters)."""
        self.states[device] = state
        self._version += 1

    def state(self, device: str) -> DeviceState | None:
        return self.states.get(device)

    def _cached(self, key: str, build):
        now_key = (self._version, self.faults.version)
        if now_key != self._cache_key:
            self._cache = {}
            self._cache_key = now_key
            self._changed_at = time.time()
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    # ---- physical layer -----------------------------------------------------------------------
    def cabling(self) -> dict[Port, Port]:
        """(dev, port) -> far end, after cable-swap faults."""
        def build() -> dict[Port, Port]:
            far: dict[Port, Port] = {}
            for cable in self.topology.links:
                far[(cable.a_dev, cable.a_port)] = (cable.b_dev, cable.b_port)
                far[(cable.b_dev, cable.b_port)] = (cable.a_dev, cable.a_port)
            for f in self.faults.of("cable_swap"):
                a = (str(f.params["device_a"]), str(f.params["port_a"]))
                c = (str(f.params["device_b"]), str(f.params["port_b"]))
                if a in far and c in far:
                    b, d = far[a], far[c]
                    far[a], far[d] = d, a
                    far[c], far[b] = b, c
            return far
        return self._cached("cabling", build)

    def peer(self, dev: str, port: str) -> Port | None:
        return self.cabling().get((dev, port))

    def reachable(self, dev: str) -> bool:
        return not self.faults.is_unreachable(dev)

    def _port_admin_up(self, dev: str, port: str) -> bool:
        st = self.states.get(dev)
        ifs = st.interfaces.get(port) if st else None
        return bool(ifs and ifs.admin_up)

    def link_up(self, dev: str, port: str) -> bool:
        """Both ends admin up, cabled, no link-down fault on either end, both devices reachable."""
        far = self.peer(dev, port)
        if far is None:
            return False
        pdev, pport = far
        return (self._port_admin_up(dev, port) and self._port_admin_up(pdev, pport)
                and not self.faults.is_link_down(dev, port) and not self.faults.is_link_down(pdev, pport)
                and self.reachable(dev) and self.reachable(pdev))

    def lldp_neighbors(self, dev: str) -> list[LldpNeighbor]:
        out = []
        node = self.topology.nodes.get(dev)
        for port in node.ports if node else ():
            far = self.peer(dev, port)
            if far and self.link_up(dev, port):
                st = self.states.get(far[0])
                ifs = st.interfaces.get(far[1]) if st else None
                port_id = ifs.lldp_port_id if ifs and ifs.lldp_port_id else far[1]
                descr = ifs.description if ifs else ""
                subtype = "local" if ifs and ifs.lldp_port_id else "ifname"
                out.append(LldpNeighbor(port, far[0], st.hostname if st else far[0], port_id, descr, subtype))
        return out

    # ---- addressing ---------------------------------------------------------------------------
    def owners(self) -> dict[str, Port]:
        """IPv4 address -> (device, interface) for every configured interface and loopback."""
        def build() -> dict[str, Port]:
            own: dict[str, Port] = {}
            for dev, st in sorted(self.states.items()):
                for name, pfx in st.loopbacks.items():
                    own.setdefault(pfx.split("/")[0], (dev, name))
                for name, ifs in st.interfaces.items():
                    if ifs.ipv4:
                        own.setdefault(ifs.ipv4.split("/")[0], (dev, name))
            return own
        return self._cached("owners", build)

    def connected(self, dev: str) -> dict[str, str]:
        """Connected prefixes of an up interface or loopback: prefix -> interface (read-only, cached)."""
        def build() -> dict[str, str]:
            st = self.states.get(dev)
            out: dict[str, str] = {}
            if not st or not self.reachable(dev):
                return out
            for name, pfx in st.loopbacks.items():
                out.setdefault(str(_iface(pfx).network), name)
            for name, ifs in sorted(st.interfaces.items()):
                if ifs.ipv4 and self.link_up(dev, name):
                    out.setdefault(str(_iface(ifs.ipv4).network), name)
            return out
        return self._cached(f"conn:{dev}", build)

    def _up_subnets(self, dev: str) -> list[tuple[int, int, str]]:
        """(network, netmask, interface) of dev's up, addressed interfaces, in interface-name order."""
        def build() -> list[tuple[int, int, str]]:
            st = self.states.get(dev)
            out = []
            for name, ifs in sorted(st.interfaces.items()) if st else ():
                if ifs.ipv4 and self.link_up(dev, name):
                    net = _iface(ifs.ipv4).network
                    out.append((int(net.network_address), int(net.netmask), name))
            return out
        return self._cached(f"subnets:{dev}", build)

    def _local_if_for(self, dev: str, ip: str) -> str | None:
        """The up interface of `dev` whose connected subnet contains `ip`."""
        addr = _addr_int(ip)
        return next((name for net, mask, name in self._up_subnets(dev) if addr & mask == net), None)

    # ---- BGP ----------------------------------------------------------------------------------
    def _session_check(self, dev: str, peer_ip: str) -> tuple[str, str, str | None, str | None, str | None]:
        """(state, idle_reason, peer_device, local_ip, port) of dev's configured neighbor peer_ip."""
        st = self.states[dev]
        assert st.bgp is not None
        nb = st.bgp.neighbors[peer_ip]
        if nb.shutdown:
            return "Idle", "Administratively shut down", None, None, None
        port = self._local_if_for(dev, peer_ip)
        if port is None or not self.reachable(dev):
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
        """Prefixes `dev` injects into BGP: connected (if redistributed) and `network` statements (cached)."""
        return self._cached(f"orig:{dev}", lambda: self._originated(dev))

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

    def _propagation(self, origin: str) -> dict[str, tuple[tuple[int, ...], list[NextHop], bool]]:
        """Best paths toward `origin`'s prefixes: dev -> (as_path, next hops, learned over iBGP)."""
        def build():
            receivers, asn = self._receivers()
            limits = self._max_paths()
            best: dict[str, tuple[tuple[int, ...], list[NextHop], bool]] = {origin: ((), [], False)}
            frontier = [origin]
            while frontier:
                cand: dict[str, list[tuple[tuple[int, ...], NextHop, bool]]] = defaultdict(list)
                for v in frontier:
                    path_v, _, ibgp_learned = best[v]
                    ebgp_path = (asn[v],) + path_v
                    for u, nh, ebgp in receivers[v]:
                        if u in best or (not ebgp and ibgp_learned):
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
        return self._cached(f"prop:{origin}", build)

    def bgp_table(self, dev: str) -> dict[str, Route]:
        """Best BGP routes of `dev` (prefixes it learned; own connected prefixes excluded)."""
        def build() -> dict[str, Route]:
            out: dict[str, Route] = {}
            if dev not in self.states or not self.states[dev].bgp:
                return out
            conn = self.connected(dev)
            for origin in sorted(self.states):
                if origin == dev:
                    continue
                prefixes = self.originated(origin)
                if not prefixes:
                    continue
                best = self._propagation(origin).get(dev)
                if best is None:
                    continue
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
            return out
        return self._cached(f"bgp:{dev}", build)

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
                mine = self.bgp_table(dev)
                received = sum(1 for r in mine.values() if any(nh.ip == ip for nh in r.next_hops))
                peer_asn = pst.bgp.asn if pst and pst.bgp else None
                peer_rx = self.bgp_table(pdev)
                sent = sum(1 for r in peer_rx.values() if any(nh.ip == local_ip for nh in r.next_hops))
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

    # ---- routing and forwarding ---------------------------------------------------------------
    def routes(self, dev: str) -> dict[str, Route]:
        """The RIB: connected, static (resolvable), BGP (ECMP), best distance per prefix."""
        def build() -> dict[str, Route]:
            st = self.states.get(dev)
            if not st or not self.reachable(dev):
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
            for pfx, r in table.items():
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

    def _trace(self, dev: str, src: str, dst: str, size: int, df: bool) -> tuple[str, list[str]]:
        """Walk the forwarding path; returns ("", hops) on delivery or (reason, hops)."""
        owners = self.owners()
        packet = size + 28
        cur, hops = dev, [dev]
        for _ in range(64):
            owner = owners.get(dst)
            if owner and owner[0] == cur:
                return "", hops
            st = self.states.get(cur)
            if st is None or not self.reachable(cur):
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
        err, path = self._trace(dev, src, dst, size, df)
        if not err:
            back_err, back = self._trace(owners[dst][0], dst, src, size, df)
            if back_err:
                return PingResult(count, 0, "reply lost: " + back_err, src, path + back[1:])
            return PingResult(count, count, "", src, path)
        return PingResult(count, 0, err, src, path)

    # ---- PFC / ECN / queues -------------------------------------------------------------------
    def _ifstate(self, dev: str, port: str) -> IfState | None:
        st = self.states.get(dev)
        return st.interfaces.get(port) if st else None

    @staticmethod
    def _grown(f: Fault, rate: float, now: float) -> int:
        """What one fault added to a counter by `now`: rate x the seconds it was on, plus the first frame
        (none at a zero rate: an ECN queue below its minimum threshold marks nothing)."""
        return int(f.active_s(now) * rate) + 1 if rate > 0 else 0

    def pfc_counters(self, dev: str, port: str, now: float | None = None) -> dict[int, dict[str, int]]:
        """Per priority: rx (pause frames received), tx (sent), rx_us / tx_us (microseconds paused).

        A storm on (dev, port, prio) means the far end keeps sending pause frames: dev's rx and the far
        end's tx grow while the storm is on, and keep their counts once it ends or is cleared. A storm holds
        the priority paused the whole time it is on (the pause-duration counters). Frames are only counted
        where PFC is enabled on the port.
        """
        now = time.time() if now is None else now
        out = {p: {"rx": 0, "tx": 0, "rx_us": 0, "tx_us": 0} for p in range(8)}
        ifs = self._ifstate(dev, port)
        if not ifs or not ifs.pfc_enabled:
            return out
        for f in self.faults.counted("pfc_storm", device=dev, port=port):
            prio = out[int(f.params["priority"])]
            prio["rx"] += self._grown(f, PFC_STORM_FRAMES_PER_S, now)
            prio["rx_us"] += int(f.active_s(now) * 1_000_000)
        far = self.peer(dev, port)
        if far:
            for f in self.faults.counted("pfc_storm", device=far[0], port=far[1]):
                prio = out[int(f.params["priority"])]
                prio["tx"] += self._grown(f, PFC_STORM_FRAMES_PER_S, now)
                prio["tx_us"] += int(f.active_s(now) * 1_000_000)
        # PFC-only backpressure: a lossless queue congested without ECN on another port of a device makes it
        # pause its senders on every PFC port (this one sends; the port facing such a device receives)
        for side, owner, facing in [("tx", dev, port)] + ([("rx", far[0], far[1])] if far else []):
            for f in self.faults.counted("congestion", device=owner):
                q = int(f.params["queue"]) % 8
                if f.params.get("port") != facing and q in ifs.pfc_priorities and \
                        self.paced(owner, str(f.params.get("port")), q):
                    out[q][side] += self._grown(f, PFC_STORM_FRAMES_PER_S / 10, now)
                    out[q][f"{side}_us"] += int(f.active_s(now) * 500_000)
        return out

    def paced(self, dev: str, port: str, q: int) -> bool:
        """A congested lossless queue without ECN marking (a PFC-only design): the device holds it by pausing
        its senders instead of dropping, as long as every other cabled port pauses its far end on `q` (PFC on
        at both ends). A sender with PFC off ignores the pauses: the queue then drops."""
        ifs = self._ifstate(dev, port)
        if not ifs or q in ifs.ecn or q not in ifs.pfc_priorities:
            return False
        node = self.topology.nodes.get(dev)
        for p in node.ports if node else ():
            if p == port or not self.link_up(dev, p):
                continue
            mine, far = self._ifstate(dev, p), self.peer(dev, p)
            theirs = self._ifstate(*far) if far else None
            if not mine or not theirs or q not in mine.pfc_priorities or q not in theirs.pfc_priorities:
                return False
        return True

    def watchdog_status(self, dev: str, port: str, now: float | None = None) -> dict[int, dict[str, int | bool]]:
        """Per lossless priority: whether the watchdog holds the queue stormed now, storms detected and
        restored so far, and what it dropped while stormed (drop action).

        A timed storm is detected once it has lasted the configured detection time and restored once it has
        been over for the restoration time; an open-ended storm (no for/on/off) stands for one already under
        way when it was injected, so the watchdog has detected it from that moment.
        """
        now = time.time() if now is None else now
        ifs = self._ifstate(dev, port)
        out: dict[int, dict[str, int | bool]] = {}
        if not ifs or not ifs.pfc_enabled:
            return out
        wd = ifs.watchdog
        enabled = bool(wd and wd.enabled)
        for prio in sorted(ifs.pfc_priorities):
            detected = restored = drops = 0
            stormed = False
            for f in self.faults.counted("pfc_storm", device=dev, port=port, priority=prio) if enabled else []:
                assert wd is not None
                ev = f.watchdog(now, wd.detection_ms / 1000 if f.timed else 0.0, wd.restoration_ms / 1000)
                detected, restored = detected + ev.detected, restored + ev.restored
                stormed = stormed or ev.stormed
                if wd.action == "drop" and ev.detected:
                    drops += int(ev.stormed_s * DROPS_PER_S) + 1
            out[prio] = {"enabled": enabled, "stormDetected": stormed, "stormCount": detected,
                         "restoredCount": restored, "droppedPackets": drops}
        return out

    def queue_drops(self, dev: str, port: str, now: float | None = None) -> dict[int, int]:
        """Egress drops per queue: lossless-drop faults, congestion without ECN (unless PFC paces it: see
        paced), watchdog drops."""
        now = time.time() if now is None else now
        out = dict.fromkeys(range(8), 0)
        ifs = self._ifstate(dev, port)
        if not ifs:
            return out
        for f in self.faults.counted("lossless_drops", device=dev, port=port):
            out[int(f.params["queue"]) % 8] += self._grown(f, DROPS_PER_S, now)
        for f in self.faults.counted("congestion", device=dev, port=port):
            q = int(f.params["queue"]) % 8
            if q not in ifs.ecn and not self.paced(dev, port, q):
                out[q] += self._grown(f, DROPS_PER_S, now)
        for prio, wd in self.watchdog_status(dev, port, now).items():
            out[prio] += int(wd["droppedPackets"])
        return out

    def dropping_queues(self, dev: str, port: str, now: float | None = None) -> set[int]:
        """Queues that drop packets at `now` (their drop counters are growing, not only non-zero)."""
        now = time.time() if now is None else now
        ifs = self._ifstate(dev, port)
        if not ifs:
            return set()
        out = {int(f.params["queue"]) % 8 for f in self.faults.of("lossless_drops", device=dev, port=port)
               if f.active(now)}
        out |= {int(f.params["queue"]) % 8 for f in self.faults.of("congestion", device=dev, port=port)
                if f.active(now) and int(f.params["queue"]) % 8 not in ifs.ecn
                and not self.paced(dev, port, int(f.params["queue"]) % 8)}
        wd = ifs.watchdog
        if wd and wd.action == "drop":
            out |= {p for p, st in self.watchdog_status(dev, port, now).items() if st["stormDetected"]}
        return out

    def ecn_marks(self, dev: str, port: str, now: float | None = None) -> dict[int, int | None]:
        """ECN-marked packets per queue; None where ECN is not configured on the queue.

        Under congestion the queue stands at `depth` bytes (default: halfway between the thresholds) and
        packets are marked with the WRED/ECN probability the configured thresholds give at that depth.
        """
        now = time.time() if now is None else now
        ifs = self._ifstate(dev, port)
        out: dict[int, int | None] = dict.fromkeys(range(8))
        if not ifs:
            return out
        for q in ifs.ecn:
            out[q] = 0
        for f in self.faults.counted("congestion", device=dev, port=port):
            q = int(f.params["queue"]) % 8
            if q in ifs.ecn:
                rate = ECN_MARKS_PER_S * mark_probability(ifs.ecn[q], f.params.get("depth"))
                out[q] = (out[q] or 0) + self._grown(f, rate, now)
        return out

    def wred_counters(self, dev: str, port: str, now: float | None = None) -> dict[int, tuple[int, int]]:
        """Per queue where WRED/ECN runs (ECN configured on it): (packets dropped, packets ECN-marked)."""
        now = time.time() if now is None else now
        drops = self.queue_drops(dev, port, now)
        return {q: (drops[q], m) for q, m in self.ecn_marks(dev, port, now).items() if m is not None}

    def clear_watermarks(self, dev: str, kind: str = "user", now: float | None = None) -> None:
        """A watermark clear on the device (every port): later reads start from the occupancy since then.
        `kind` names the set cleared ("user", "persistent"): a device may keep several, cleared apart."""
        self._wm_cleared[(dev, kind)] = time.time() if now is None else now

    def queue_watermarks(self, dev: str, port: str, now: float | None = None, kind: str = "user") -> dict[int, int]:
        """Peak occupancy (bytes) per egress queue since the device's last clear of `kind`.

        A congestion fault holds its queue at `depth` (default halfway between the queue's ECN thresholds, a
        full queue without ECN); a PFC storm received on the port holds the paused priority's queue full, as do
        lossless drops. A condition counts when it was on at some time after the clear.
        """
        now = time.time() if now is None else now
        since = self._wm_cleared.get((dev, kind), 0.0)
        out = dict.fromkeys(range(8), 0)
        ifs = self._ifstate(dev, port)
        if not ifs:
            return out

        def on_since(f: Fault) -> bool:
            return f.active_s(now) > f.active_s(since)

        for f in self.faults.counted("congestion", device=dev, port=port):
            q = int(f.params["queue"]) % 8
            if on_since(f):
                out[q] = max(out[q], queue_depth(ifs.ecn.get(q), f.params.get("depth")))
        for f in self.faults.counted("lossless_drops", device=dev, port=port):
            q = int(f.params["queue"]) % 8
            if on_since(f):
                out[q] = max(out[q], FULL_QUEUE_BYTES)
        if ifs.pfc_enabled:
            for f in self.faults.counted("pfc_storm", device=dev, port=port):
                q = int(f.params["priority"]) % 8
                if on_since(f):
                    out[q] = max(out[q], FULL_QUEUE_BYTES)
        return out

    def congested_queues(self, dev: str, port: str, now: float | None = None) -> set[int]:
        """Queues standing above empty at `now`: a congestion, lossless drops or a received pause storm is on."""
        now = time.time() if now is None else now
        out = {int(f.params["queue"]) % 8 for kind in ("congestion", "lossless_drops")
               for f in self.faults.of(kind, device=dev, port=port) if f.active(now)}
        return out | {int(f.params["priority"]) % 8 for f in self.faults.of("pfc_storm", device=dev, port=port)
                      if f.active(now)}

    def pause_transitions(self, dev: str, port: str, now: float | None = None) -> dict[int, int]:
        """Per priority: pauses received that have ended (pause -> no pause transitions), where PFC is on."""
        now = time.time() if now is None else now
        out = dict.fromkeys(range(8), 0)
        ifs = self._ifstate(dev, port)
        if not ifs or not ifs.pfc_enabled:
            return out
        for f in self.faults.counted("pfc_storm", device=dev, port=port):
            full, last, _ = f.windows_until(now)
            out[int(f.params["priority"]) % 8] += full + (1 if last > 0 and not f.active(now) else 0)
        return out

    def link_times(self, dev: str, port: str) -> tuple[float | None, float | None]:
        """(last went down, last came back up) by link-down faults on either end; None where it never did."""
        far = self.peer(dev, port)
        faults = [f for d, p in [(dev, port)] + ([far] if far else [])
                  for f in self.faults.counted("link_down", device=d, port=p)]
        downs = [f.since for f in faults]
        ups = [f.until for f in faults if f.until is not None and f not in self.faults.items]
        return (max(downs) if downs else None), (max(ups) if ups else None)

    def link_changes(self, dev: str, port: str) -> int:
        """Link status changes of a port since boot: the first link up, then a down and an up for every
        link-down fault on either end that was cleared, a down for one still on."""
        far = self.peer(dev, port)
        ends = [(dev, port)] + ([far] if far else [])
        changes = 1
        for d, p in ends:
            changes += 2 * sum(1 for f in self.faults.ended if f.matches("link_down", device=d, port=p))
            changes += sum(1 for f in self.faults.of("link_down", device=d, port=p))
        return changes


def pause_totals(pfc: dict[int, dict[str, int]]) -> tuple[int, int]:
    """(received, sent) pause frames of a port over all priorities, from its Fabric.pfc_counters."""
    return sum(c["rx"] for c in pfc.values()), sum(c["tx"] for c in pfc.values())


def queue_depth(ecn: EcnQueue | None, depth: object = None) -> int:
    """The standing queue (bytes) of a congestion: its `depth`, else halfway between the ECN thresholds, else
    (no ECN on the queue: it overflows) a full queue."""
    if depth is not None:
        return int(float(str(depth)))
    if ecn is not None:
        return (ecn.min_bytes + ecn.max_bytes) // 2
    return FULL_QUEUE_BYTES


def mark_probability(ecn: EcnQueue, depth: object = None) -> float:
    """The RED/ECN marking probability at a standing queue of `depth` bytes (linear from the minimum to
    the maximum threshold up to max_mark_probability, every packet above the maximum)."""
    lo, hi = ecn.min_bytes or 0, ecn.max_bytes or 0
    q = float(str(depth)) if depth is not None else (lo + hi) / 2
    if q <= lo:
        return 0.0
    if q >= hi:
        return 1.0
    return (ecn.max_mark_probability / 100) * (q - lo) / (hi - lo)
