"""EOS text output (`| text`, eAPI "text", an SSH session) for the commands engineers and parsers read.

Each renderer prints its command's JSON model (show.py, show_ops.py, show_routing.py) in the layout EOS 4.2x
prints, so the text and JSON views of a device agree; layouts follow the published samples ntc-templates parses
(tests/arista_eos/<command>/*.raw) and the conformance corpus (tests/conformance/upstream) checks them.
"""

from __future__ import annotations

import ipaddress
import time
from typing import Any

from nr_run.lab.twin.eos import show, show_ops, show_routing
from nr_run.lab.twin.eos.device import EosDevice
from nr_run.lab.twin.topology import natural_key

_SHORT = (("Ethernet", "Et"), ("Management", "Ma"), ("Loopback", "Lo"), ("Port-Channel", "Po"), ("Vlan", "Vl"))


def short(name: str) -> str:
    """EOS' short interface name in tables: Ethernet1 -> Et1, Management0 -> Ma0."""
    for long, abbr in _SHORT:
        if name.startswith(long):
            return abbr + name[len(long):]
    return name


def dotted(mac: str) -> str:
    """00:1c:73:ab:cd:ef -> 001c.73ab.cdef, as EOS prints MAC addresses."""
    h = mac.replace(":", "").lower()
    return f"{h[0:4]}.{h[4:8]}.{h[8:12]}"


def _plural(n: int, unit: str) -> str:
    return f"{n} {unit}{'' if n == 1 else 's'}"


def duration(seconds: float) -> str:
    """EOS' spelled-out age: "14 minutes, 2 seconds", "1 hour, 3 minutes", "2 days, 4 hours"."""
    s = int(max(0, seconds))
    days, hours, minutes = s // 86400, s % 86400 // 3600, s % 3600 // 60
    if days:
        return f"{_plural(days, 'day')}, {_plural(hours, 'hour')}"
    if hours:
        return f"{_plural(hours, 'hour')}, {_plural(minutes, 'minute')}"
    return f"{_plural(minutes, 'minute')}, {_plural(s % 60, 'second')}"


def clock(seconds: float) -> str:
    """H:MM:SS, as EOS prints "ago" times in LLDP tables."""
    s = int(max(0, seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


# ---- interfaces -----------------------------------------------------------------------------------------
def _state_words(entry: dict) -> str:
    status = entry["interfaceStatus"]
    link = "administratively down" if status == "disabled" else ("up" if status == "connected" else "down")
    return f"{entry['name']} is {link}, line protocol is {entry['lineProtocolStatus']} ({status})"


def _interface_block(entry: dict, now: float) -> list[str]:
    out = [_state_words(entry)]
    if entry["hardware"] == "loopback":
        out.append("  Hardware is Loopback")
    else:
        mac = dotted(entry.get("physicalAddress", "00:00:00:00:00:00"))
        out.append(f"  Hardware is Ethernet, address is {mac} (bia {mac})")
    if entry["description"]:
        out.append(f"  Description: {entry['description']}")
    if entry["interfaceAddress"]:
        ip = entry["interfaceAddress"][0]["primaryIp"]
        out += [f"  Internet address is {ip['address']}/{ip['maskLen']}", "  Broadcast address is 255.255.255.255",
                "  Address determined by manual configuration"]
    elif entry["forwardingModel"] == "routed":
        out.append("  No Internet protocol address assigned")
    layer = "IP" if entry["forwardingModel"] == "routed" else "Ethernet"
    bw = entry.get("bandwidth", 0) // 1000
    out.append(f"  {layer} MTU {entry['mtu']} bytes" + (f", BW {bw} kbit" if bw else ""))
    if entry["hardware"] != "loopback":
        gbps = entry.get("bandwidth", 0) // 1_000_000_000
        out.append(f"  Full-duplex, {gbps}Gb/s, auto negotiation: off, uni-link: n/a")
    state = "Up" if entry["lineProtocolStatus"] == "up" else "Down"
    out.append(f"  {state} {duration(now - entry['lastStatusChangeTimestamp'])}")
    c = entry.get("interfaceCounters")
    if c:
        out += [f"  {c['linkStatusChanges']} link status changes since last clear",
                "  Last clearing of \"show interface\" counters never",
                "  5 minutes input rate 0 bps (0.0% with framing overhead), 0 packets/sec",
                "  5 minutes output rate 0 bps (0.0% with framing overhead), 0 packets/sec",
                f"     {c['inUcastPkts']} packets input, {c['inOctets']} bytes",
                f"     Received {c['inBroadcastPkts']} broadcasts, {c['inMulticastPkts']} multicast",
                "     0 runts, 0 giants",
                f"     {c['totalInErrors']} input errors, 0 CRC, 0 alignment, 0 symbol, {c['inDiscards']} input discards",
                f"     {c['inputErrorsDetail']['rxPause']} PAUSE input",
                f"     {c['outUcastPkts']} packets output, {c['outOctets']} bytes",
                f"     Sent {c['outBroadcastPkts']} broadcasts, {c['outMulticastPkts']} multicast",
                f"     {c['totalOutErrors']} output errors, 0 collisions",
                f"     0 late collision, 0 deferred, {c['outDiscards']} output discards",
                f"     {c['outputErrorsDetail']['txPause']} PAUSE output"]
    return out


def interfaces(dev: EosDevice, only: str | None = None) -> str:
    data = show.interfaces(dev)["interfaces"]
    now = time.time()
    names = [only] if only else sorted(data, key=natural_key)
    return "".join("\n".join(_interface_block(data[n], now)) + "\n" for n in names if n in data)


def interfaces_status(dev: EosDevice) -> str:
    rows = show.interfaces_status(dev)["interfaceStatuses"]
    out = ["Port       Name        Status       Vlan     Duplex Speed  Type            Flags Encapsulation"]
    for name in sorted(rows, key=natural_key):
        r = rows[name]
        vlan = "routed" if r["vlanInformation"]["interfaceMode"] == "routed" else "1"
        speed = f"{r['bandwidth'] // 1_000_000_000}G" if r["bandwidth"] >= 1_000_000_000 else \
            f"{r['bandwidth'] // 1_000_000}M"
        out.append(f"{short(name):<10} {r['description'][:11]:<11} {r['linkStatus']:<12} {vlan:<8} full   "
                   f"{speed:<6} {r['interfaceType']:<15}")
    return "\n".join(out) + "\n"


def ip_interface_brief(dev: EosDevice) -> str:
    rows = show_ops.ip_interface_brief(dev)["interfaces"]
    out = ["                                                                              Address",
           "Interface         IP Address            Status       Protocol          MTU    Owner  ",
           "----------------- --------------------- ------------ -------------- --------- -------"]
    for name in sorted(rows, key=natural_key):
        r = rows[name]
        ip = r["interfaceAddress"]["ipAddr"]
        addr = f"{ip['address']}/{ip['maskLen']}" if ip["maskLen"] else "unassigned"
        status = {"connected": "up", "disabled": "admin down"}.get(r["interfaceStatus"], "down")
        proto = "up" if r["lineProtocolStatus"] == "up" else ("down" if status == "admin down" else
                                                                "lowerlayerdown")
        status = status.replace(" ", "")      # a single token, as the parsers expect (EOS: "adminDown")
        out.append(f"{name:<17} {addr:<21} {status:<12} {proto:<14} {r['mtu']:>9}        ")
    return "\n".join(out) + "\n"


# ---- LLDP -------------------------------------------------------------------------------------------------
def _lldp_changed(dev: EosDevice, now: float) -> float:
    """When the LLDP table last changed: boot, or the last time one of its links came back or went down."""
    node = dev.fabric.topology.nodes.get(dev.name)
    times = [dev.boot_time] + [t or 0.0 for p in (node.ports if node else ()) for t in dev.fabric.link_times(dev.name, p)]
    return min(now, max(times))


def lldp_neighbors(dev: EosDevice) -> str:
    rows = show.lldp_neighbors(dev)["lldpNeighbors"]
    now = time.time()
    out = [f"Last table change time   : {clock(now - _lldp_changed(dev, now))} ago",
           f"Number of table inserts  : {len(rows)}", "Number of table deletes  : 0",
           "Number of table drops    : 0", "Number of table age-outs : 0", "",
           f"{'Port':<10} {'Neighbor Device ID':<30} {'Neighbor Port ID':<26} TTL",
           f"{'-' * 10} {'-' * 30} {'-' * 26} ---"]
    out += [f"{short(r['port']):<10} {r['neighborDevice']:<30} {r['neighborPort']:<26} {r['ttl']}" for r in rows]
    return "\n".join(out) + "\n"


def lldp_neighbors_detail(dev: EosDevice) -> str:
    data = show.lldp_neighbors_detail(dev)["lldpNeighbors"]
    now = time.time()
    out: list[str] = []
    for port in sorted(data, key=natural_key):
        infos = data[port]["lldpNeighborInfo"]
        out += [f"Interface {port} detected {len(infos)} LLDP neighbors:", ""]
        for i in infos:
            chassis = dotted(i["chassisId"]) if len(i["chassisId"]) == 12 else i["chassisId"]
            iface = i["neighborInterfaceInfo"]
            kind = "Interface name (5)" if iface["interfaceIdType"] == "interfaceName" else "Locally assigned (7)"
            seen = int(now - i["lastContactTime"]) % 30
            out += [f"  Neighbor {chassis}/{iface['interfaceId']}, age {seen} seconds",
                    f"  Discovered {clock(now - i['neighborDiscoveryTime'])} ago; Last changed "
                    f"{clock(now - i['lastChangeTime'])} ago",
                    "  - Chassis ID type: MAC address (4)", f"    Chassis ID     : {chassis}",
                    f"  - Port ID type: {kind}", f"    Port ID     : {iface['interfaceId']}",
                    f"  - Port Description: \"{iface['interfaceDescription']}\"",
                    f"  - Time To Live: {i['ttl']} seconds",
                    f"  - System Name: \"{i['systemName']}\"",
                    f"  - System Description: \"{i['systemDescription']}\"",
                    "  - System Capabilities : Bridge, Router", "    Enabled Capabilities: Router",
                    "  - IEEE802.3 Maximum Frame Size: 9236 bytes", ""]
    return "\n".join(out) + ("\n" if out else "")


# ---- BGP and routes ---------------------------------------------------------------------------------------
def ip_bgp_summary(dev: EosDevice) -> str:
    data = show.ip_bgp_summary(dev)["vrfs"].get("default")
    if not data:
        return ""
    now = time.time()
    out = ["BGP summary information for VRF default",
           f"Router identifier {data['routerId']}, local AS number {data['asn']}",
           "Neighbor Status Codes: m - Under maintenance",
           f"  {'Description':<24} {'Neighbor':<18} V  AS           MsgRcvd   MsgSent     InQ    OutQ  Up/Down "
           "State   PfxRcd PfxAcc"]
    for ip in sorted(data["peers"], key=ipaddress.ip_address):
        p = data["peers"][ip]
        est = p["peerState"] == "Established"
        state = "Estab" if est else p["peerState"]
        pfx = f"{p['prefixReceived']:<6} {p['prefixAccepted']}" if est else ""
        out.append(f"  {p['description'][:24] or '':<24} {ip:<18} 4  {p['asn']:<12} {p['msgReceived']:>7} "
                   f"{p['msgSent']:>9} {p['inMsgQueue']:>7} {p['outMsgQueue']:>7} "
                   f"{show_routing._hms(now - p['upDownTime']):>8} {state:<7} {pfx}".rstrip())
    return "\n".join(out) + "\n"


_CODES = ["Codes: C - connected, S - static, K - kernel,",
          "       O - OSPF, IA - OSPF inter area, E1 - OSPF external type 1,",
          "       E2 - OSPF external type 2, N1 - OSPF NSSA external type 1,",
          "       N2 - OSPF NSSA external type2, B - Other BGP Routes,",
          "       B I - iBGP, B E - eBGP, R - RIP, I L1 - IS-IS level 1,",
          "       I L2 - IS-IS level 2, O3 - OSPFv3, A B - BGP Aggregate,",
          "       A O - OSPF Summary, NG - Nexthop Group Static Route,",
          "       V - VXLAN Control Service, M - Martian,",
          "       DH - DHCP client installed default route,",
          "       DP - Dynamic Policy Route, L - VRF Leaked,",
          "       G  - gRIBI, RC - Route Cache Route"]


def ip_route(dev: EosDevice) -> str:
    data = show.ip_route(dev)["vrfs"]["default"]
    out = ["", "VRF: default"] + _CODES + ["", "Gateway of last resort is not set", ""]
    if data["routingDisabled"] and not data["routes"]:
        return "! IP routing not enabled\n"
    for pfx, r in data["routes"].items():
        code = {"connected": "C", "static": "S", "eBGP": "B E"}[r["routeType"]]
        lead = f" {code:<6} {pfx}"
        if not r["vias"]:
            out.append(f"{lead} [{r.get('preference', 1)}/0] is directly connected, Null0")
            continue
        for i, via in enumerate(r["vias"]):
            if "nexthopAddr" not in via:
                out.append(f"{lead} is directly connected, {via['interface']}")
            elif i == 0:
                out.append(f"{lead} [{r.get('preference', 0)}/{r.get('metric', 0)}] via {via['nexthopAddr']}, "
                           f"{via['interface']}")
            else:               # an ECMP path: only `via`, under the first one's
                indent = len(lead) + len(f" [{r.get('preference', 0)}/{r.get('metric', 0)}] ")
                out.append(f"{' ' * indent}via {via['nexthopAddr']}, {via['interface']}")
    return "\n".join(out) + "\n\n"


def vrf(dev: EosDevice) -> str:
    data = show_ops.vrfs(dev)["vrfs"]
    out = ["Maximum number of VRFs allowed: 1023",
           "   VRF             Protocols       State         Interfaces                             ",
           "--------------- --------------- ---------------- ---------------------------------------"]
    for name in sorted(data, key=lambda n: (n != "default", n)):
        v = data[name]
        for proto, key in (("IPv4", "ipv4"), ("IPv6", "ipv6")):
            routing = "routing" if v["protocols"][key]["routingState"] == "up" else "no routing"
            names = ", ".join(short(i) for i in v["interfaces"]) if key == "ipv4" else ""
            out.append(f"   {name:<15} {proto:<15} {routing:<13} {names}".rstrip() + " ")
    return "\n".join(out) + "\n"


# ---- system -----------------------------------------------------------------------------------------------
def version(dev: EosDevice) -> str:
    v = show.version(dev)
    return (f"Arista {v['modelName']}\nHardware version: {v['hardwareRevision']}\n"
            f"Serial number: {v['serialNumber']}\nHardware MAC address: {dotted(v['systemMacAddress'])}\n"
            f"System MAC address: {dotted(v['systemMacAddress'])}\n\n"
            f"Software image version: {v['version']} (engineering build)\nArchitecture: {v['architecture']}\n"
            f"Internal build version: {v['internalVersion']}\nInternal build ID: {v['internalBuildId']}\n"
            f"Image format version: {v['imageFormatVersion']}\nImage optimization: {v['imageOptimization']}\n\n"
            f"cEOS tools version: (unknown)\nKernel version: {v['kernelVersion']}\n\n"
            f"Uptime: {duration(v['uptime'])}\nTotal memory: {v['memTotal']} kB\nFree memory: {v['memFree']} kB\n\n")


def inventory(dev: EosDevice) -> str:
    inv = show_ops.inventory(dev)
    sysinfo = inv["systemInformation"]
    ports = inv["xcvrSlots"]
    out = ["System information", "  Model                    Description",
           "  ------------------------ ----------------------------------------------------",
           f"  {sysinfo['name']:<24} {sysinfo['description']}", "",
           "  HW Version  Serial Number  Mfg Date    Epoch",
           "  ----------- -------------- ----------- --------",
           f"  {sysinfo['hardwareRev'] or '-':<11} {sysinfo['serialNum']:<14} {sysinfo['mfgDate']:<11} 01.00", "",
           "System has 0 power supply slots", "", "System has 0 fan modules", "",
           f"System has {len(ports) + 1} ports", "  Type             Count", "  ---------------- ----",
           "  Management       1", f"  Switched         {len(ports)}", "",
           f"System has {len(ports)} switched transceiver slots",
           "  Port Manufacturer     Model            Serial Number    Rev",
           "  ---- ---------------- ---------------- ---------------- ----"]
    for slot in sorted(ports, key=int):
        x = ports[slot]
        if x["mfgName"] == "Not Present":
            out.append(f"  {slot:<4} Not Present")
        else:
            out.append(f"  {slot:<4} {x['mfgName']:<16} {x['modelName']:<16} {x['serialNum']:<16} {x['hardwareRev']}")
    out += ["", "System has 0 storage devices"]
    return "\n".join(out) + "\n"


def pfc(dev: EosDevice, only: str | None = None) -> str:
    """`show priority-flow-control [interfaces INTF]`: PFC and its watchdog per port (E/D enabled, W watchdog)."""
    data: dict[str, Any] = show.pfc(dev, only)
    out = ["The hardware supports PFC on priorities 0 1 2 3 4 5 6 7",
           f"Global PFC : {'Enabled' if data['globalPfcEnabled'] else 'Disabled'}", "",
           "E: PFC Enabled, D: PFC Disabled, A: PFC Active, W: PFC Watchdog Enabled",
           "Port    Status Priorities Action      Timeout  Recovery    Polling    Note",
           "                                               Interval/Mode Config/Oper",
           "-" * 79]
    for name in sorted(data["interfaces"], key=natural_key):
        p = data["interfaces"][name]
        wd = p["watchdog"]
        prios = ",".join(k for k, v in sorted(p["priorities"].items()) if v["noDrop"]) or "-"
        status = ("E A" if p["pfcEnabled"] else "D  ") + (" W" if wd["enabled"] else "  ")
        out.append(f"{short(name):<7} {status:<6} {prios:<10} {wd['action'] or '-':<11} {wd['timeout']:<8} "
                   f"{wd['recoveryTime']:<11} {wd['pollingInterval']:<10} DCBX disabled")
    return "\n".join(out) + "\n"


def qos_interfaces(dev: EosDevice, only: str | None = None) -> str:
    """`show qos interfaces [INTF]`: trust mode and the tx-queue scheduling and ECN of each port."""
    data = show.qos_interfaces(dev, only)["intfQosDetails"]
    out: list[str] = []
    for name in sorted(data, key=natural_key):
        q = data[name]
        out += [f"{name}:", f"   Trust Mode: {q['trustMode'].upper()}", "   Default COS: 0", "   Default DSCP: 0",
                f"   Service profile: {q['qosProfile'] or 'none'}", "", "   Port shaping rate: disabled", "",
                "   Tx    Bandwidth     Shape Rate    Priority   ECN/WRED",
                "   Queue Guaranteed    (units)                           ",
                "   ----- ------------- ------------- ---------- ---------"]
        for tq in sorted(q["txQueues"], key=lambda k: -int(k)):
            t = q["txQueues"][tq]
            prio = "SP" if t["priority"] == "strict" else "RR"
            bw = f"{t['bandwidthPercent']}%" if t["bandwidthPercent"] else "-"
            out.append(f"   {tq:<5} {bw:<13} {'- / -':<13} {prio:<10} {'ECN' if t['ecn'] else 'Disabled'}")
        out.append("")
    return "\n".join(out) + "\n"


def clock_text(dev: EosDevice) -> str:
    c = show_ops.clock(dev)
    return time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(c["utcTime"])) + f"\nTimezone: {c['timezone']}\n" \
        "Clock source: local\n"


def interfaces_description(dev: EosDevice) -> str:
    rows = show_ops.interfaces_description(dev)["interfaceDescriptions"]
    out = [f"{'Interface':<30} {'Status':<14} {'Protocol':<18} Description"]
    for name in sorted(rows, key=natural_key):
        r = rows[name]
        status = {"adminDown": "admin down"}.get(r["interfaceStatus"], r["interfaceStatus"])
        out.append(f"{short(name):<30} {status:<14} {r['lineProtocolStatus']:<18} {r['description']}".rstrip())
    return "\n".join(out) + "\n"


def arp(dev: EosDevice) -> str:
    entries = show_ops.arp(dev)["vrfs"]["default"]["ipV4Neighbors"]
    out = ["Address         Age (sec)  Hardware Addr   Interface"]
    out += [f"{e['address']:<15} {clock(e['age']):>9}  {dotted(e['hwAddress'])}  {e['interface']}" for e in entries]
    return "\n".join(out) + "\n"


def vlans(dev: EosDevice) -> str:
    data = show_ops.vlans(dev)["vlans"]
    out = ["VLAN  Name                             Status    Ports", "----- -------------------------------- --------- "
           "-------------------------------"]
    for vid in sorted(data, key=int):
        v = data[vid]
        ports = ", ".join(short(p) for p in sorted(v["interfaces"], key=natural_key))
        out.append(f"{vid:<5} {v['name']:<32} {v['status']:<9} {ports}".rstrip())
    return "\n".join(out) + "\n"


def reload_cause(dev: EosDevice) -> str:
    cause = show_ops.reload_cause(dev)["resetCauses"][0]
    when = time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(cause["timestamp"]))
    return (f"Reload Cause 1:\n-------------------\n{cause['description']}\n\nReload Time:\n------------\n"
            f"Reload occurred at {when} UTC.\n\nRecommended Action:\n-------------------\n"
            f"{cause['recommendedAction']}\n\nDebugging Information:\n----------------------\nNone available.\n")
