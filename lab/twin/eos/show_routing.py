"""EOS routing show commands beyond the plain tables: summaries, one prefix, the BGP table, BFD, BGP neighbor
details (JSON), computed from the fabric model.

Shapes follow real EOS output as published in ANTA's unit-test data (github.com/aristanetworks/anta,
tests/units/anta_tests/routing/test_generic.py, routing/test_bgp.py, test_bfd.py) and NAPALM's EOS test data
(github.com/napalm-automation/napalm, test/eos/mocked_data/test_get_route_to: `show ip route vrf default
<prefix> detail`, `show ip bgp <prefix> vrf default`). Only the default VRF exists in the fabric.
UNVERIFIED: `totalRoutesWarnLimit` (0 unless `maximum-routes N warning-limit W` is configured) and the BFD
interval fields' units (microseconds, as `show bfd peers detail` prints them).
"""

from __future__ import annotations

import ipaddress
import re
import time
from collections import Counter
from typing import Any

from nr_run.lab.twin.eos.device import CommandFailed, EosDevice
from nr_run.lab.twin.fabric import NextHop, Route

DEFAULT_MAX_ROUTES = 12000          # EOS's default `neighbor ... maximum-routes`
BFD_INTERVAL_US = 300_000           # EOS default: 300 ms tx/rx, multiplier 3


def _proto_model(dev: EosDevice) -> str:
    lines = dev.running.root.lines()
    found = next((ln.split()[-1] for ln in lines if ln.startswith("service routing protocols model ")), None)
    return found or "multi-agent"


def _summary(dev: EosDevice) -> dict[str, Any]:
    routes = dev.fabric.routes(dev.name)
    kinds = Counter(r.protocol for r in routes.values())
    masks = Counter(str(ipaddress.ip_network(p).prefixlen) for p in routes)
    bgp = kinds.get("bgp", 0)
    return {"totalRoutes": len(routes), "connected": kinds.get("connected", 0), "static": kinds.get("static", 0),
            "staticPersistent": 0, "staticNonPersistent": kinds.get("static", 0), "vcs": 0,
            "staticNexthopGroup": 0, "internal": 0, "dynamicPolicy": 0, "aggregate": 0, "maskLen": dict(masks),
            "bgpCounts": {"bgpTotal": bgp, "bgpExternal": bgp, "bgpInternal": 0, "bgpLocal": 0},
            "ospfCounts": {"ospfTotal": 0, "ospfIntraArea": 0, "ospfInterArea": 0, "ospfExternal1": 0,
                           "ospfExternal2": 0, "nssaExternal1": 0, "nssaExternal2": 0, "ospfDefaultRoute": 0},
            "isisCounts": {"isisTotal": 0, "isisLevel1": 0, "isisLevel2": 0}}


def route_summary(dev: EosDevice) -> dict:
    model = _proto_model(dev)
    return {"vrfs": {"default": _summary(dev)},
            "protoModelStatus": {"configuredProtoModel": model, "operatingProtoModel": model}}


def route_summary_all(dev: EosDevice) -> dict:
    return {"vrfs": {"default": _summary(dev)}}


def route_entry(dev: EosDevice, pfx: str, r: Route) -> dict:
    rtype = {"connected": "connected", "static": "static", "bgp": "eBGP"}[r.protocol]
    vias = [{"interface": nh.interface} if nh.ip is None else {"nexthopAddr": nh.ip, "interface": nh.interface}
            for nh in r.next_hops]
    entry: dict[str, Any] = {"hardwareProgrammed": True, "routeType": rtype, "routeLeaked": False,
                             "kernelProgrammed": True, "routeAction": "forward" if vias or r.protocol != "static"
                             else "drop", "directlyConnected": r.protocol == "connected", "vias": vias}
    if r.protocol != "connected":
        entry["preference"] = r.distance
        entry["metric"] = 0
    return entry


def routes_of(dev: EosDevice, protocol: str) -> dict:
    """`show ip route [vrf V] connected|static|bgp`: the RIB's routes of one protocol."""
    table = {p: r for p, r in dev.fabric.routes(dev.name).items() if r.protocol == protocol}
    return {"vrfs": {"default": {"routingDisabled": not dev.state().ip_routing, "allRoutesProgrammedHardware": True,
                                 "allRoutesProgrammedKernel": True, "defaultRouteState": "notSet",
                                 "routes": {p: route_entry(dev, p, r) for p, r in table.items()}}}}


def route_lookup(dev: EosDevice, vrf: str, target: str, longer: bool = False) -> dict:
    """`show ip route vrf V <address|prefix> [longer-prefixes] [detail]`: the longest match, or the prefix."""
    if vrf not in ("default", "all") and not dev.running.root.child(f"vrf instance {vrf}"):
        raise CommandFailed([f"% IP Routing table for VRF {vrf} does not exist."], 1000, "could not run command")
    try:
        net = ipaddress.ip_network(target, strict=False)
    except ValueError:
        raise CommandFailed([f"Invalid input (at token 5: '{target}')"]) from None
    if vrf not in ("default", "all"):
        return _vrf_lookup(dev, vrf, net, "/" in target, longer)
    found: dict[str, Route] = {}
    if longer:
        found = {p: r for p, r in dev.fabric.routes(dev.name).items()
                 if ipaddress.ip_network(p).subnet_of(net)}  # type: ignore[arg-type]
    elif "/" in target:
        exact = dev.fabric.route_for(dev.name, str(net))
        if exact is not None:
            found = {str(net): exact}
    else:
        route = dev.fabric.lookup(dev.name, target)
        if route is not None:
            found = {route.prefix: route}
    vrf_out = {"routingDisabled": not dev.state().ip_routing, "allRoutesProgrammedHardware": True,
               "allRoutesProgrammedKernel": True, "defaultRouteState": "notSet",
               "routes": {p: route_entry(dev, p, r) for p, r in found.items()}}
    return {"vrfs": {"default": vrf_out}}


def vrf_routes(dev: EosDevice, vrf: str) -> dict[str, Route]:
    """A non-default VRF's table (MGMT): its interfaces' connected subnets and its `ip route vrf` statics."""
    out: dict[str, Route] = {}
    for block in dev.running.root.blocks("interface "):
        lines = block.lines()
        addr = next((ln.split()[2] for ln in lines if ln.startswith("ip address ")), None)
        if f"vrf {vrf}" in lines and addr and "shutdown" not in lines:
            net = str(ipaddress.ip_interface(addr).network)
            out[net] = Route(net, "connected", [NextHop(None, block.line.split()[1])])
    for node in dev.running.root.blocks(f"ip route vrf {vrf} "):
        words = node.line.split()
        pfx = str(ipaddress.ip_network(words[4], strict=False))
        if len(words) > 5 and pfx not in out:
            hop = next((r.next_hops[0].interface for p, r in out.items() if r.protocol == "connected"
                        and ipaddress.ip_address(words[5]) in ipaddress.ip_network(p)), None)
            if hop:
                out[pfx] = Route(pfx, "static", [NextHop(words[5], hop)], (), 1)
    return out


def _vrf_lookup(dev: EosDevice, vrf: str, net: ipaddress.IPv4Network | ipaddress.IPv6Network, exact: bool,
                longer: bool) -> dict:
    table = vrf_routes(dev, vrf)
    nets = {p: ipaddress.ip_network(p) for p in table}
    if longer:
        found = [p for p, n in nets.items() if n.version == net.version and n.subnet_of(net)]  # type: ignore[arg-type]
    elif exact:
        found = [str(net)] if str(net) in table else []
    else:
        matching = [p for p, n in nets.items() if n.version == net.version and net.subnet_of(n)]  # type: ignore[arg-type]
        found = [max(matching, key=lambda p: nets[p].prefixlen)] if matching else []
    vrf_out = {"routingDisabled": not dev.running.root.has(f"ip routing vrf {vrf}"), "allRoutesProgrammedHardware":
               True, "allRoutesProgrammedKernel": True, "defaultRouteState": "notSet",
               "routes": {p: route_entry(dev, p, table[p]) for p in found}}
    return {"vrfs": {vrf: vrf_out}}


def ip_bgp(dev: EosDevice, target: str | None = None, longer: bool = False) -> dict:
    """`show ip bgp [<prefix>] [longer-prefixes] [vrf V]`: best paths of the BGP table (own prefixes local)."""
    st = dev.state()
    if not st.bgp:
        return {"vrfs": {}}
    entries: dict[str, Any] = {}
    table = dev.fabric.bgp_table(dev.name)
    own = {p: None for p in dev.fabric.originated(dev.name)}
    router_ids = {s.peer_ip: s.peer_router_id for s in dev.fabric.bgp_sessions(dev.name)}
    net = ipaddress.ip_network(target, strict=False) if target else None
    for pfx in sorted({*table, *own}, key=lambda p: ipaddress.ip_network(p)):
        p_net = ipaddress.ip_network(pfx)
        if net is not None and not (p_net.subnet_of(net) if longer else  # type: ignore[arg-type]
                                    (p_net == net or ("/" not in str(target) and net.network_address in p_net))):
            continue
        route = table.get(pfx)
        paths = []
        hops = route.next_hops if route else [None]
        for i, nh in enumerate(hops):
            as_path = " ".join(str(a) for a in route.as_path) if route else ""
            paths.append({
                "asPathEntry": {"asPathType": "External" if route else "Local",
                                "asPath": (as_path + " i").strip() if route else "i"},
                "med": 0, "localPreference": 100, "weight": 0 if route else 32768,
                "nextHop": nh.ip if nh is not None and nh.ip else "0.0.0.0",
                "routeType": {"atomicAggregator": False, "valid": True, "ecmpContributor": len(hops) > 1,
                              "active": True, "backup": False, "stale": False, "suppressed": False,
                              "ecmpHead": i == 0 and len(hops) > 1, "queued": False, "ecmp": len(hops) > 1,
                              "luRoute": False, "origin": "Igp", "sixPeRoute": False},
                "routeDetail": {"origin": "Igp", "peerEntry": {
                    "peerRouterId": router_ids.get(nh.ip, "0.0.0.0") if nh is not None and nh.ip else st.bgp.router_id
                    or "0.0.0.0", "peerAddr": nh.ip if nh is not None and nh.ip else ""},
                    "extCommunityList": [], "communityList": [], "recvdFromRRClient": False}})
        entries[pfx] = {"address": str(p_net.network_address), "maskLength": p_net.prefixlen,
                        "totalPaths": len(paths), "bgpAdvertisedPeerGroups": {}, "totalAdvertisedPeers": 0,
                        "bgpRoutePaths": paths}
    return {"vrfs": {"default": {"routerId": st.bgp.router_id or "0.0.0.0", "vrf": "default",
                                 "asn": st.bgp.asn, "bgpRouteEntries": entries}}}


def bfd_peers(dev: EosDevice) -> dict:
    """BFD sessions of BGP neighbors with `bfd` on both ends; up while both ends' link carries the session."""
    st = dev.state()
    neighbors: dict[str, Any] = {}
    if st.bgp:
        for s in dev.fabric.bgp_sessions(dev.name):
            mine = st.bgp.neighbors.get(s.peer_ip)
            if not mine or not mine.bfd:
                continue
            pst = dev.fabric.state(s.peer_device) if s.peer_device else None
            theirs = pst.bgp.neighbors.get(s.local_ip or "") if pst and pst.bgp else None
            up = s.state == "Established" and bool(theirs and theirs.bfd)
            port = dev.fabric._local_if_for(dev.name, s.peer_ip) or ""
            neighbors[s.peer_ip] = {"peerStats": {"": {
                "peerAddr": s.peer_ip, "status": "up" if up else "down", "authType": "None", "kernelIfIndex": 0,
                # a session up since boot never went down (0.0); else it last went down when its link did
                "lastDown": (dev.fabric.link_times(dev.name, port)[0] or 0.0) if up and port else s.since,
                "lastUp": s.since if up else 0.0, "lastDiag": "diagNone", "l3intf": port,
                "remoteDisc": _disc(s.peer_ip, s.local_ip or "") if up else 0,
                "localDisc": _disc(s.local_ip or "", s.peer_ip),
                "peerStatsDetail": {"operTxInterval": BFD_INTERVAL_US, "operRxInterval": BFD_INTERVAL_US,
                                    "detectMult": 3, "detectTime": 3 * BFD_INTERVAL_US, "apps": ["bgp"]}}}}
    return {"vrfs": {"default": {"ipv4Neighbors": neighbors, "ipv6Neighbors": {}}}}


def _disc(a: str, b: str) -> int:
    import zlib

    return zlib.crc32(f"{a}>{b}".encode()) or 1


def _neighbor_lines(dev: EosDevice, ip: str) -> list[str]:
    blk = dev.running.root.child(next((b.line for b in dev.running.root.blocks("router bgp ")), "router bgp"))
    return [ln for ln in (blk.lines() if blk else []) if ln.startswith(f"neighbor {ip} ")]


def neighbor_details(dev: EosDevice, ip: str, established: bool, peer_group: str | None) -> dict[str, Any]:
    """The fields of one `show bgp neighbors` peer that ANTA's BGP tests read, beyond state and counters."""
    lines = _neighbor_lines(dev, ip) + ([ln.replace(f"neighbor {peer_group} ", f"neighbor {ip} ", 1)
                                         for ln in _neighbor_lines(dev, peer_group)] if peer_group else [])
    limit = next((ln for ln in lines if " maximum-routes " in ln), None)
    max_routes, warn = DEFAULT_MAX_ROUTES, 0
    if limit:
        m = re.search(r"maximum-routes (\d+)(?: warning-limit (\d+))?", limit)
        if m:
            max_routes, warn = int(m.group(1)), int(m.group(2) or 0)
    cap = {"advertised": True, "received": established, "enabled": established}
    out: dict[str, Any] = {
        "neighborCapabilities": {"multiprotocolCaps": {"ipv4Unicast": dict(cap)}, "fourOctetAsnCap": dict(cap),
                                 "routeRefreshCap": dict(cap), "enhancedRouteRefreshCap": dict(cap)},
        "maxTotalRoutes": max_routes, "totalRoutesWarnLimit": warn,
        "dropStats": dict.fromkeys(("inDropAsloop", "inDropClusterIdLoop", "inDropMalformedMpbgp", "inDropOrigId",
                                    "inDropNhLocal", "inDropNhAfV6", "prefixDroppedMartianV4",
                                    "prefixDroppedMaxRouteLimitViolatedV4", "prefixDroppedMartianV6",
                                    "prefixDroppedMaxRouteLimitViolatedV6", "prefixLuDroppedV4",
                                    "prefixLuDroppedMartianV4", "prefixLuDroppedMaxRouteLimitViolatedV4",
                                    "prefixLuDroppedV6", "prefixLuDroppedMartianV6",
                                    "prefixLuDroppedMaxRouteLimitViolatedV6", "prefixEvpnDroppedUnsupportedRouteType",
                                    "prefixBgpLsDroppedReceptionUnsupported", "outDropV4LocalAddr",
                                    "outDropV6LocalAddr", "prefixVpnIpv4DroppedImportMatchFailure",
                                    "prefixVpnIpv4DroppedMaxRouteLimitViolated", "prefixVpnIpv6DroppedImportMatchFailure",
                                    "prefixVpnIpv6DroppedMaxRouteLimitViolated", "prefixEvpnDroppedImportMatchFailure",
                                    "prefixEvpnDroppedMaxRouteLimitViolated", "prefixRtMembershipDroppedLocalAsReject",
                                    "prefixRtMembershipDroppedMaxRouteLimitViolated"), 0),
        "peerInUpdateErrors": {"inUpdErrWithdraw": 0, "inUpdErrIgnore": 0, "inUpdErrDisableAfiSafi": 0,
                               "disabledAfiSafi": "None", "lastUpdErrTime": 0},
        "statsTimestamp": time.time(),
    }
    if peer_group:
        out["peerGroupName"] = peer_group
    return out


def _hms(seconds: float) -> str:
    s = int(max(0, seconds))
    if s >= 86400:
        return f"{s // 86400}d{s % 86400 // 3600:02d}h"
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def bgp_neighbors_text(dev: EosDevice, neighbor: str | None = None) -> str:
    """`show ip bgp neighbors [A.B.C.D] vrf all` as EOS prints it (the layout of NAPALM's test data
    test/eos/mocked_data/test_get_bgp_neighbors_detail/normal/show_ip_bgp_neighbors_vrf_all.text, which the
    eos driver's bgp_detail TextFSM templates parse); one block per peer, blank-line separated."""
    st = dev.state()
    if not st.bgp:
        return ""
    blocks = []
    for s in dev.fabric.bgp_sessions(dev.name):
        if neighbor and s.peer_ip != neighbor:
            continue
        nb = st.bgp.neighbors.get(s.peer_ip)
        # configured: the neighbor's or its peer group's `timers` (EOS' 60/180 otherwise); in force: negotiated
        keep_cfg, hold_cfg = (nb.keepalive_s, nb.hold_s) if nb else (60, 180)
        keep, hold = dev.fabric.timers(dev.name, s)
        est = s.state == "Established"
        link = "internal" if s.remote_as == s.local_as else "external"
        lines = [f"BGP neighbor is {s.peer_ip}, remote AS {s.remote_as or 0}, {link} link"]
        if s.description:
            lines.append(f"  Description: {s.description}")
        lines.append(f"  BGP version 4, remote router ID {s.peer_router_id}, VRF default")
        if nb and nb.peer_group:
            lines.append(f"  Inherits configuration from and member of peer-group {nb.peer_group}")
        lines += ["  Negotiated BGP version 4" if est else "  Negotiated BGP version 0",
                  "  Last read 00:00:01, last write 00:00:01",
                  f"  Hold time is {hold if est else 0}, keepalive interval is {keep if est else 0} seconds",
                  f"  Configured hold time is {hold_cfg}, keepalive interval is {keep_cfg} seconds",
                  "  Connect timer is inactive", "  Idle-restart timer is inactive",
                  f"  BGP state is {s.state}, up for {_hms(time.time() - s.since)}" if est else
                  f"  BGP state is {s.state}",
                  f"  Number of transitions to established: {1 if est else 0}",
                  f"  Last state was {'OpenConfirm' if est else 'Idle'}",
                  f"  Last event was {'RecvKeepAlive' if est else 'Stop'}"]
        if est:
            lines += ["  Neighbor Capabilities:", "    Multiprotocol IPv4 Unicast: advertised and received and negotiated",
                      "    Four Octet ASN: advertised and received",
                      "    Route Refresh: advertised and received and negotiated",
                      "    Send End-of-RIB messages: advertised and received and negotiated"]
        lines += ["  Restart timer is inactive", "  End of rib timer is inactive", "  Message statistics:",
                  "    InQ depth is 0", "    OutQ depth is 0",
                  "                         Sent      Rcvd",
                  f"    Opens:               {1 if est else 0:>4}      {1 if est else 0:>4}",
                  "    Notifications:          0         0",
                  f"    Updates:             {s.prefixes_sent:>4}      {s.prefixes_received:>4}",
                  "    Keepalives:            10        10", "    Route-Refresh:          0         0",
                  f"    Total messages:      {s.prefixes_sent + 11:>4}      {s.prefixes_received + 11:>4}",
                  "  Prefix statistics:", "                         Sent      Rcvd",
                  f"    IPv4 Unicast:        {s.prefixes_sent:>4}      {s.prefixes_received:>4}",
                  "    IPv6 Unicast:           0         0",
                  f"Local AS is {s.local_as}, local router ID {st.bgp.router_id or '0.0.0.0'}", "TTL is 1"]
        if est and s.local_ip:
            lines += [f"Local TCP address is {s.local_ip}, local port is 179",
                      f"Remote TCP address is {s.peer_ip}, remote port is {30000 + _disc(s.peer_ip, '') % 30000}",
                      "Auto-Local-Addr is disabled", "TCP Socket Information:", "  TCP state is ESTABLISHED",
                      "  Recv-Q: 0/32768", "  Send-Q: 0/32768"]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks) + ("\n" if blocks else "")
