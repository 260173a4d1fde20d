"""EOS show commands computed from the device config and the fabric model (JSON and text).

JSON keys follow the shapes the NAPALM eos driver and ANTA read (shared/reference eos.md §3,
nornir-napalm.md §1). UNVERIFIED shapes (no public fixture found), chosen to be plausible and
documented here: `show priority-flow-control` (interfaces.<if>.{pfcEnabled, priorities{<p>:{noDrop}},
watchdog{enabled, timeout, recoveryTime, pollingInterval, action, stormDetected{<p>: bool}}}), and
`show qos interfaces <if>` (intfQosDetails.<if>.{trustMode, dscpToTc, pfcEnabled, lossless, txQueues
{<q>:{priority, bandwidthPercent, ecn{minThresholdBytes, maxThresholdBytes, maxMarkProbability}}}}).
Verified against ANTA's unit-test data (tests/units/anta_tests/test_interfaces.py): `show priority-flow-control
counters` (interfaceCounters.<if>.{rxFrames, txFrames}) and `show qos interfaces ecn counters queue`
(intfQueueCounters.<if>.queueCounters.{<q>: "<count>"}).
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
import time
from typing import Any

from nr_run.lab.twin.eos.device import MODEL, CommandFailed, EosDevice
from nr_run.lab.twin.eos.device import system_mac as _mac
from nr_run.lab.twin.eos.show_routing import neighbor_details
from nr_run.lab.twin.fabric import pause_totals
from nr_run.lab.twin.model.bgp import message_counts


def _iface_names(dev: EosDevice) -> list[str]:
    names = {b.line.split()[1] for b in dev.running.root.blocks("interface ")}
    node = dev.fabric.topology.nodes.get(dev.name)
    names.update(node.ports if node else ())
    return sorted(names, key=lambda n: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", n)])


def _if_block_lines(dev: EosDevice, name: str) -> list[str]:
    blk = dev.running.root.child(f"interface {name}")
    return blk.lines() if blk else []


NATIVE_MBPS, NATIVE_LANES = 400_000, 8      # a cEOS-lab front-panel port without `speed`
# a speed's usual serdes lanes where `speed` names none ("100gfull"): 100G-4 NRZ, 400G-8 PAM4 ...
USUAL_LANES = {800_000: 8, 400_000: 8, 200_000: 4, 100_000: 4, 50_000: 2, 40_000: 4, 25_000: 1, 10_000: 1, 1_000: 1}


def _port_speed_mbps(dev: EosDevice, port: str) -> int:
    st = dev.state().interfaces.get(port)
    if st and st.speed_mbps:
        return st.speed_mbps
    return NATIVE_MBPS


def _media(mbps: int, lanes: int) -> str:
    """The copper media type EOS names for a port running `mbps` over `lanes` lanes (400GBASE-CR8, 100GBASE-CR)."""
    return f"{mbps // 1000}GBASE-CR{lanes if lanes > 1 else ''}"


def port_lanes(dev: EosDevice, port: str) -> int:
    """The lanes a port runs on: as its `speed` says ("800g-8", "100g-1"), else the speed's usual count."""
    st = dev.state().interfaces.get(port)
    if st and st.lanes:
        return st.lanes
    if st and st.speed_mbps:
        return USUAL_LANES.get(st.speed_mbps, 1)
    return NATIVE_LANES


def version(dev: EosDevice) -> dict:
    serial = hashlib.sha1(dev.name.encode()).hexdigest()[:12].upper()
    return {"mfgName": "Arista", "modelName": MODEL, "hardwareRevision": "", "serialNumber": serial,
            "systemMacAddress": _mac(dev.name), "hwMacAddress": "00:00:00:00:00:00",
            "configMacAddress": "00:00:00:00:00:00", "version": dev.version, "architecture": "x86_64",
            "internalVersion": f"{dev.version}-36932781.{dev.version.replace('.', '')}", "internalBuildId": "twin",
            "imageFormatVersion": "1.0", "imageOptimization": "None", "kernelVersion": "5.15.0",
            "bootupTimestamp": dev.boot_time, "uptime": dev.uptime(), "memTotal": 8_000_000,
            "memFree": 5_000_000, "isIntlVersion": False}


def hostname(dev: EosDevice) -> dict:
    return {"hostname": dev.state().hostname, "fqdn": dev.state().hostname}


def _status(dev: EosDevice, name: str) -> tuple[str, str, bool]:
    """(interfaceStatus, lineProtocolStatus, routed) of any interface."""
    lines = _if_block_lines(dev, name)
    admin_up = "shutdown" not in lines
    if name.startswith(("Loopback", "Management")):
        up = admin_up
        return ("connected" if up else "disabled"), ("up" if up else "down"), True
    if not admin_up:
        return "disabled", "down", "no switchport" in lines
    up = dev.fabric.link_up(dev.name, name)
    return ("connected" if up else "notconnect"), ("up" if up else "down"), "no switchport" in lines


def interfaces(dev: EosDevice) -> dict:
    out = {}
    st = dev.state()
    for name in _iface_names(dev):
        if not name.startswith(("Ethernet", "Loopback", "Management")):
            continue
        lines = _if_block_lines(dev, name)
        istatus, proto, routed = _status(dev, name)
        addr = next((ln.split()[2] for ln in lines if ln.startswith("ip address ") and "secondary" not in ln), None)
        mtu = next((int(ln.split()[1]) for ln in lines if ln.startswith("mtu ")), 65535 if name.startswith(
            "Loopback") else 1500)
        hw = "ethernet" if not name.startswith("Loopback") else "loopback"
        entry: dict[str, Any] = {
            "name": name, "forwardingModel": "routed" if routed else "bridged",
            "lineProtocolStatus": proto, "interfaceStatus": istatus, "hardware": hw,
            "interfaceAddress": [], "description": next(
                (ln.split(None, 1)[1] for ln in lines if ln.startswith("description ")), ""),
            "mtu": mtu, "l3MtuConfigured": any(ln.startswith("mtu ") for ln in lines), "l2Mru": 0,
            "lastStatusChangeTimestamp": max([dev.boot_time] + [t or 0.0 for t in dev.fabric.link_times(dev.name, name)]),
            "bandwidth": 0,
            "interfaceMembership": "", "duplex": "duplexFull",
        }
        if routed and addr:
            ip = ipaddress.ip_interface(addr)
            entry["interfaceAddress"] = [{"primaryIp": {"address": str(ip.ip), "maskLen": ip.network.prefixlen},
                                          "secondaryIps": {}, "secondaryIpsOrderedList": [],
                                          "virtualIp": {"address": "0.0.0.0", "maskLen": 0},
                                          "broadcastAddress": "255.255.255.255", "dhcp": False}]
        if name.startswith("Ethernet"):
            entry["bandwidth"] = _port_speed_mbps(dev, name) * 1_000_000
            # forced speed on a cEOS front-panel port; lanes as `speed <rate>-<lanes>` configures them
            entry["autoNegotiate"] = "unknown"
            entry["lanes"] = port_lanes(dev, name)
            entry["physicalAddress"] = entry["burnedInAddress"] = _mac(dev.name, name)
            drops = sum(dev.fabric.queue_drops(dev.name, name).values())
            rx_pause, tx_pause = pause_totals(dev.fabric.pfc_counters(dev.name, name))
            in_octets, in_pkts, out_octets, out_pkts = dev.fabric.traffic(dev.name, name)
            entry["interfaceCounters"] = {
                "inOctets": in_octets, "inUcastPkts": in_pkts, "inMulticastPkts": 0, "inBroadcastPkts": 0,
                "inDiscards": 0, "inTotalPkts": in_pkts, "outOctets": out_octets, "outUcastPkts": out_pkts,
                "outMulticastPkts": 0, "outBroadcastPkts": 0,
                "outDiscards": drops, "totalInErrors": 0, "totalOutErrors": 0,
                "linkStatusChanges": dev.fabric.link_changes(dev.name, name),
                "counterRefreshTime": time.time(),
                "inputErrorsDetail": {"runtFrames": 0, "giantFrames": 0, "fcsErrors": 0, "alignmentErrors": 0,
                                      "symbolErrors": 0, "rxPause": rx_pause},
                "outputErrorsDetail": {"collisions": 0, "lateCollisions": 0, "deferredTransmissions": 0,
                                       "txPause": tx_pause},
            }
        elif name.startswith("Management"):
            entry["bandwidth"] = 1_000_000_000
            entry["physicalAddress"] = entry["burnedInAddress"] = _mac(dev.name, name)
            entry["interfaceCounters"] = {"inOctets": 0, "outOctets": 0, "inUcastPkts": 0, "outUcastPkts": 0,
                                          "inMulticastPkts": 0, "outMulticastPkts": 0, "inBroadcastPkts": 0,
                                          "outBroadcastPkts": 0, "inDiscards": 0, "outDiscards": 0,
                                          "totalInErrors": 0, "totalOutErrors": 0, "linkStatusChanges": 1,
                                          "counterRefreshTime": time.time(),
                                          "inputErrorsDetail": {"runtFrames": 0, "giantFrames": 0, "fcsErrors": 0,
                                                                "alignmentErrors": 0, "symbolErrors": 0,
                                                                "rxPause": 0},
                                          "outputErrorsDetail": {"collisions": 0, "lateCollisions": 0,
                                                                 "deferredTransmissions": 0, "txPause": 0}}
        _ = st
        out[name] = entry
    return {"interfaces": out}


def interfaces_status(dev: EosDevice) -> dict:
    out = {}
    for name in _iface_names(dev):
        if not name.startswith(("Ethernet", "Management")):
            continue
        istatus, proto, routed = _status(dev, name)
        lines = _if_block_lines(dev, name)
        speed = _port_speed_mbps(dev, name) if name.startswith("Ethernet") else 1000
        out[name] = {"linkStatus": istatus, "lineProtocolStatus": proto, "duplex": "duplexFull",
                     "bandwidth": speed * 1_000_000, "autoNegotiateActive": False,
                     "description": next((ln.split(None, 1)[1] for ln in lines if ln.startswith("description ")), ""),
                     "interfaceType": _media(speed, port_lanes(dev, name)) if name.startswith("Ethernet")
                     else "10/100/1000",
                     "vlanInformation": {"interfaceMode": "routed" if routed else "bridged",
                                         "interfaceForwardingModel": "routed" if routed else "bridged"}}
    return {"interfaceStatuses": out}


def lldp_neighbors(dev: EosDevice) -> dict:
    nbrs = dev.fabric.lldp_neighbors(dev.name)
    return {"tablesLastChangeTime": dev.boot_time, "tablesAgeOuts": 0, "tablesDrops": 0,
            "tablesInserts": len(nbrs), "tablesDeletes": 0,
            "lldpNeighbors": [{"port": n.port, "neighborDevice": n.hostname, "neighborPort": n.neighbor_port,
                               "ttl": 120} for n in nbrs]}


def lldp_neighbors_detail(dev: EosDevice) -> dict:
    out: dict = {}
    by_port = {n.port: n for n in dev.fabric.lldp_neighbors(dev.name)}
    for name in _iface_names(dev):
        if not name.startswith("Ethernet"):
            continue
        info = []
        n = by_port.get(name)
        if n:
            info.append({"chassisIdType": "macAddress", "chassisId": n.chassis_mac.replace(":", ""),
                         "systemName": n.hostname, "systemDescription": "", "ttl": 120,
                         "lastChangeTime": dev.boot_time, "lastContactTime": time.time(),
                         "neighborDiscoveryTime": dev.boot_time,
                         "neighborInterfaceInfo": {"interfaceIdType": "interfaceName" if n.port_id_subtype ==
                                                   "ifname" else "local",
                                                   "interfaceId": f'"{n.neighbor_port}"',
                                                   "interfaceId_v2": n.neighbor_port,
                                                   "interfaceDescription": n.neighbor_port_descr}})
        out[name] = {"lldpNeighborInfo": info}
    return {"lldpNeighbors": out}


def _vrf_summary(dev: EosDevice, v6: bool) -> dict:
    st = dev.state()
    if not st.bgp:
        return {"vrfs": {}}
    peers = {}
    if not v6:
        now = time.time()
        for s in dev.fabric.bgp_sessions(dev.name):
            received, sent = message_counts(s, now, dev.fabric.timers(dev.name, s)[0] or 60)
            entry = {"description": s.description, "version": 4, "msgReceived": received, "msgSent": sent,
                     "inMsgQueue": 0, "outMsgQueue": 0, "asn": str(s.remote_as or ""),
                     "prefixAccepted": s.prefixes_received, "prefixReceived": s.prefixes_received,
                     "upDownTime": s.since, "underMaintenance": False, "peerState": s.state}
            if s.state == "Idle":
                entry["peerStateIdleReason"] = s.idle_reason
            peers[s.peer_ip] = entry
    return {"vrfs": {"default": {"vrf": "default", "routerId": st.bgp.router_id or "0.0.0.0",
                                 "asn": str(st.bgp.asn), "peers": peers}}}


def ip_bgp_summary(dev: EosDevice) -> dict:
    return _vrf_summary(dev, v6=False)


def ipv6_bgp_summary(dev: EosDevice) -> dict:
    return _vrf_summary(dev, v6=True)


def ip_bgp_neighbors(dev: EosDevice) -> dict:
    st = dev.state()
    if not st.bgp:
        return {"vrfs": {}}
    plist = []
    for s in dev.fabric.bgp_sessions(dev.name):
        keepalive, hold = dev.fabric.timers(dev.name, s)
        entry = {"peerAddress": s.peer_ip, "localAsn": str(s.local_as), "asn": str(s.remote_as or ""),
                 "routerId": s.peer_router_id, "state": s.state, "prefixesReceived": s.prefixes_received,
                 "prefixesSent": s.prefixes_sent, "v6PrefixesReceived": 0, "v6PrefixesSent": 0,
                 "description": s.description, "vrf": "default", "localRouterId": st.bgp.router_id or "0.0.0.0",
                 "peerTcpInfo": {"outputQueueLength": 0, "inputQueueLength": 0, "state": "ESTABLISHED"
                                 if s.state == "Established" else "CLOSED"},
                 "updownTime": s.since, "holdTime": hold, "keepaliveTime": keepalive, "bfdState": "up"
                 if s.state == "Established" else "down"}
        if s.state == "Established":
            entry["establishedTime"] = int(time.time() - s.since)
        if s.state == "Idle":
            entry["idleReason"] = s.idle_reason
        nb = st.bgp.neighbors.get(s.peer_ip)
        entry.update(neighbor_details(dev, s.peer_ip, s.state == "Established", nb.peer_group if nb else None))
        plist.append(entry)
    return {"vrfs": {"default": {"peerList": plist}}}


def ipv6_bgp_peers(dev: EosDevice) -> dict:
    st = dev.state()
    return {"vrfs": {"default": {"peerList": []}}} if st.bgp else {"vrfs": {}}


def bgp_summary(dev: EosDevice) -> dict:
    st = dev.state()
    if not st.bgp:
        return {"vrfs": {}}
    peers = {}
    for s in dev.fabric.bgp_sessions(dev.name):
        af = {"afiSafiState": "negotiated" if s.state == "Established" else "advertised",
              "nlrisReceived": s.prefixes_received, "nlrisAccepted": s.prefixes_received}
        peers[s.peer_ip] = {"description": s.description, "peerState": s.state, "peerAsn": str(s.remote_as or ""),
                            "upDownTime": s.since, "ipv4Unicast": af}
    return {"vrfs": {"default": {"vrf": "default", "routerId": st.bgp.router_id or "0.0.0.0",
                                 "asn": str(st.bgp.asn), "peers": peers}}}


def ip_route(dev: EosDevice) -> dict:
    routes = {}
    for pfx, r in dev.fabric.routes(dev.name).items():
        rtype = {"connected": "connected", "static": "static", "bgp": "eBGP"}[r.protocol]
        vias = [{"interface": nh.interface} if nh.ip is None else {"nexthopAddr": nh.ip, "interface": nh.interface}
                for nh in r.next_hops]
        routes[pfx] = {"hardwareProgrammed": True, "routeType": rtype, "routeLeaked": False, "kernelProgrammed": True,
                       "routeAction": "forward", "directlyConnected": r.protocol == "connected", "vias": vias}
        if r.protocol != "connected":
            routes[pfx]["preference"] = r.distance
            routes[pfx]["metric"] = 0
    return {"vrfs": {"default": {"routingDisabled": not dev.state().ip_routing, "allRoutesProgrammedHardware": True,
                                 "allRoutesProgrammedKernel": True, "defaultRouteState": "notSet", "routes": routes}}}


def _intf_arg(dev: EosDevice, arg: str | None) -> list[str]:
    names = [n for n in _iface_names(dev) if n.startswith("Ethernet")]
    if not arg:
        return names
    from nr_run.lab.twin.eos.config import _canon_ifname
    want = _canon_ifname(arg)
    if want not in names:
        raise CommandFailed([f"Interface does not exist (at token 2: '{arg}')"], 1002)
    return [want]


def pfc(dev: EosDevice, arg: str | None = None) -> dict:
    """UNVERIFIED shape (see module docstring)."""
    st = dev.state()
    out = {}
    for name in _intf_arg(dev, arg):
        ifs = st.interfaces.get(name)
        if not ifs:
            continue
        wd = ifs.watchdog
        status = dev.fabric.watchdog_status(dev.name, name)
        out[name] = {"pfcEnabled": ifs.pfc_enabled,
                     "priorities": {str(p): {"noDrop": p in ifs.pfc_priorities} for p in range(8)},
                     "watchdog": {"enabled": bool(wd and wd.enabled), "timeout": (wd.detection_ms if wd else 0) / 1000,
                                  "recoveryTime": (wd.restoration_ms if wd else 0) / 1000,
                                  "pollingInterval": (wd.poll_ms if wd else 0) / 1000,
                                  "action": wd.action if wd else "", "stormDetected": {
                                      str(p): bool(v["stormDetected"]) for p, v in status.items()}}}
    return {"globalPfcEnabled": any(i.pfc_enabled for i in st.interfaces.values()), "interfaces": out}


def pfc_counters(dev: EosDevice) -> dict:
    out = {}
    for name in _intf_arg(dev, None):
        c = dev.fabric.pfc_counters(dev.name, name)
        rx, tx = pause_totals(c)
        out[name] = {"rxFrames": rx, "txFrames": tx,
                     "priorities": {str(p): {"rxFrames": v["rx"], "txFrames": v["tx"]} for p, v in c.items()}}
    return {"interfaceCounters": out}


def qos_interfaces(dev: EosDevice, arg: str | None) -> dict:
    """UNVERIFIED shape (see module docstring)."""
    st = dev.state()
    out = {}
    for name in _intf_arg(dev, arg):
        ifs = st.interfaces.get(name)
        if not ifs:
            continue
        queues = {}
        for q in range(8):
            e = ifs.ecn.get(q)
            queues[str(q)] = {"priority": "strict" if q in ifs.strict_queues else "roundRobin",
                              "bandwidthPercent": ifs.queue_weights.get(q, 0),
                              "ecn": {"minThresholdBytes": e.min_bytes, "maxThresholdBytes": e.max_bytes,
                                      "maxMarkProbability": e.max_mark_probability} if e else None}
        out[name] = {"trustMode": "dscp" if ifs.trust_dscp else "cos", "qosProfile": ifs.qos_profile or "",
                     "dscpToTc": {str(k): v for k, v in sorted(st.qos.dscp_to_tc.items())},
                     "pfcEnabled": ifs.pfc_enabled, "lossless": sorted(ifs.pfc_priorities), "txQueues": queues}
    return {"intfQosDetails": out}


def ecn_counters(dev: EosDevice) -> dict:
    out = {}
    for name in _intf_arg(dev, None):
        marks = dev.fabric.ecn_marks(dev.name, name)
        out[name] = {"queueCounters": {str(q): ("-" if v is None else str(v)) for q, v in marks.items()}}
    return {"intfQueueCounters": out}


def queue_counters(dev: EosDevice) -> dict:
    out = {}
    for name in _intf_arg(dev, None):
        drops = dev.fabric.queue_drops(dev.name, name)
        tcs = {f"TC{q}": {"dropPrecedences": {"DP0": {"droppedPackets": d, "droppedBytes": d * 1000,
                                                      "enqueuedPackets": 0, "enqueuedBytes": 0}}}
               for q, d in drops.items()}
        out[name] = {"ucastQueues": {"trafficClasses": tcs}, "mcastQueues": {"trafficClasses": {
            f"TC{q}": {"dropPrecedences": {"DP0": {"droppedPackets": 0, "droppedBytes": 0}}} for q in range(8)}}}
    return {"egressQueueCounters": {"interfaces": out}}


# LANZ's watermark set: cleared by `clear queue-monitor length statistics`, read by the CLI and over gNMI
LANZ = "lanz"


def queue_monitor_length(dev: EosDevice) -> dict:
    """`show queue-monitor length` (LANZ). Field names from aristanetworks/goeapi module/queue.go
    (ShowQueueMonitor: lanzEnabled, platformName, bytesPerTxmpSegment, globalHitCount, reportTime, entryList
    [{interface, trafficClass, queueLength, entryType, entryTime, duration, ...}]). UNVERIFIED: which entries
    a switch keeps. The twin reports one entry per congested queue since the last clear: its peak length in
    bytes, entryType "U" (update) while the congestion lasts, "E" (end) after it."""
    now = time.time()
    entries: list[dict[str, object]] = []
    for name in _intf_arg(dev, None):
        marks = dev.fabric.queue_watermarks(dev.name, name, now, kind=LANZ)
        on = dev.fabric.congested_queues(dev.name, name, now)
        for tc, length in sorted(marks.items()):
            if length:
                entries.append({"entryType": "U" if tc in on else "E", "interface": name, "trafficClass": tc,
                                "queueLength": length, "entryTime": now, "entryTimeUsecs": int(now * 1e6),
                                "duration": 0, "durationUsecs": 0, "globalProtectionModeEnabled": False,
                                "ingressPortSet": []})
    return {"lanzEnabled": True, "platformName": "cEOSLab", "bytesPerTxmpSegment": 0, "reportTime": now,
            "globalHitCount": len(entries), "warnings": [], "entryList": entries}


def ping_text(dev: EosDevice, args: list[str]) -> str:
    """`ping [vrf V] DST [source S] [size N] [df-bit] [repeat N] [tos N]` -> Linux-ping-like text."""
    dst, src, size, df, count, tos = None, None, 72, False, 5, 0
    i = 0
    while i < len(args):
        a = args[i]
        if a == "vrf":
            i += 2
            continue
        if a in ("source", "size", "repeat", "tos", "interval", "timeout") and i + 1 < len(args):
            val = args[i + 1]
            if a == "source":
                src = val
            elif a == "size":
                size = int(val)
            elif a == "repeat":
                count = int(val)
            elif a == "tos":
                tos = int(val)
            i += 2
            continue
        if a == "df-bit":
            df = True
        elif dst is None:
            dst = a
        else:
            raise CommandFailed([f"Invalid input (at token {i + 1}: '{a}')"])
        i += 1
    if dst is None:
        raise CommandFailed(["Incomplete command"])
    src_ip = None
    if src:
        from nr_run.lab.twin.eos.config import _canon_ifname
        st = dev.state()
        name = _canon_ifname(src)
        if name in st.loopbacks:
            src_ip = st.loopbacks[name].split("/")[0]
        elif name in st.interfaces and st.interfaces[name].ipv4:
            src_ip = st.interfaces[name].ipv4.split("/")[0]  # type: ignore[union-attr]
        else:
            src_ip = src
    res = dev.fabric.ping(dev.name, dst, size=size, df=df, count=count, src_ip=src_ip, tos=tos)
    lines = [f"PING {dst} ({dst}) from {res.source or '0.0.0.0'} : {size}({size + 28}) bytes of data."]
    for seq in range(1, count + 1):
        if res.received:
            lines.append(f"{size + 8} bytes from {dst}: icmp_seq={seq} ttl={64 - len(res.path) + 1} time=0.1 ms")
        elif "MTU" in res.error and "DF" in res.error:
            mtu = re.search(r"MTU (\d+)", res.error)
            lines.append(f"From {res.source} icmp_seq={seq} Frag needed and DF set (mtu = {mtu.group(1) if mtu else 0})")
    loss = 0 if res.received == count else 100
    lines += ["", f"--- {dst} ping statistics ---",
              f"{count} packets transmitted, {res.received} received, {loss}% packet loss, time {count - 1}ms"]
    if res.received:
        lines.append("rtt min/avg/max/mdev = 0.100/0.100/0.100/0.000 ms, ipg/ewma 0.1/0.1 ms")
    return "\n".join(lines) + "\n"
