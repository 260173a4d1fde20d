"""EOS show commands about the system, management plane and interface counters (JSON and text).

Shapes follow real EOS output as published in ANTA's unit-test data (github.com/aristanetworks/anta,
tests/units/anta_tests/test_system.py, test_configuration.py, test_software.py, test_services.py,
test_security.py, test_interfaces.py), which ANTA's tests parse; NAPALM's eos driver
(napalm/eos/eos.py) reads `show users accounts`, `show snmp v2-mib *`, `show interfaces transceiver`,
`show mac address-table`, `show arp vrf all` and `show system environment *`, whose shapes follow
NAPALM's test data (test/eos/mocked_data). Values are what an idle cEOS in containerlab reports: no crashes,
no cores, ZTP disabled, no extensions, zero error counters.
UNVERIFIED (no public sample found): the `show processes top once` text the twin returns beyond its header,
and `show errdisable recovery` rows beyond the ones ANTA's sample shows.
"""

from __future__ import annotations

import difflib
import time
from typing import Any

from nr_run.lab.twin.eos.device import CommandFailed, EosDevice
from nr_run.lab.twin.topology import natural_key


def uptime(dev: EosDevice) -> dict:
    return {"upTime": round(dev.uptime(), 2), "loadAvg": [0.25, 0.2, 0.18], "users": 1, "currentTime": time.time()}


def reload_cause(dev: EosDevice) -> dict:
    """A containerlab node is (re)started by its user: that is the reset cause EOS records."""
    cause = {"description": "Reload requested by the user.", "timestamp": round(dev.boot_time, 2),
             "recommendedAction": "No action necessary.", "debugInfoIsDir": False}
    return {"kernelCrashData": [], "resetCauses": [cause], "full": False}


def coredump(dev: EosDevice) -> dict:
    return {"mode": "compressedDeferred", "coreFiles": []}


def processes_top(dev: EosDevice) -> dict:
    return {"timeInfo": {"time": time.strftime("%H:%M:%S"), "upTime": int(dev.uptime()), "users": 1,
                         "loadAvg": [0.25, 0.2, 0.18]},
            "cpuInfo": {"%Cpu(s)": {"user": 4.2, "system": 2.1, "nice": 0.0, "idle": 93.4, "ioWait": 0.0,
                                    "hwIrq": 0.0, "swIrq": 0.3, "stolen": 0.0}},
            "memInfo": {"physicalMem": {"total": 8_000_000, "free": 5_000_000, "used": 3_000_000, "buffCache": 0}},
            "processes": {}}


def processes_top_text(dev: EosDevice) -> str:
    up = int(dev.uptime())
    return (f"top - {time.strftime('%H:%M:%S')} up {up // 60} min,  1 user,  load average: 0.25, 0.20, 0.18\n"
            "Tasks: 212 total,   1 running, 211 sleeping,   0 stopped,   0 zombie\n"
            "%Cpu(s):  4.2 us,  2.1 sy,  0.0 ni, 93.4 id,  0.0 wa,  0.0 hi,  0.3 si,  0.0 st\n"
            "KiB Mem :  8000000 total,  5000000 free,  3000000 used,        0 buff/cache\n"
            "KiB Swap:        0 total,        0 free,        0 used.  5000000 avail Mem\n\n"
            "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU %MEM     TIME+ COMMAND\n"
            "    1 root      20   0  170000  12000   8000 S   0.0  0.2   0:02.00 systemd\n")


def maintenance(dev: EosDevice) -> dict:
    return {"units": {}, "interfaces": {}, "vrfs": {}, "warnings": ["Maintenance Mode is disabled."]}


def zerotouch(dev: EosDevice) -> dict:
    # containerlab disables ZTP on ceos nodes (it writes /mnt/flash/zerotouch-config)
    return {"mode": "disabled"}


def running_config_diffs(dev: EosDevice) -> str:
    """Unified diff from the startup config to the running config; empty when both agree."""
    old = dev.startup.splitlines()
    new = dev.render_running().splitlines()
    if [ln for ln in old if ln.strip() not in ("!", "end")] == [ln for ln in new if ln.strip() not in ("!", "end")]:
        return ""
    diff = difflib.unified_diff(old, new, "flash:/startup-config", "system:/running-config", lineterm="")
    return "\n".join(diff) + "\n"


def extensions(dev: EosDevice) -> dict:
    return {"extensions": {}, "extensionStoredDir": "flash:", "warnings": ["No extensions are available"]}


def boot_extensions(dev: EosDevice) -> dict:
    return {"extensions": []}


def errdisable_recovery_text(dev: EosDevice) -> str:
    rows = ["acl", "arp-inspection", "bpduguard", "dot1x", "hitless-reload-down", "lacp-rate-limit",
            "link-flap", "no-internal-vlan", "portchannelguard", "portsec", "speed-misconfigured", "uplink-failure-detection",
            "xcvr-misconfigured", "xcvr-overheat", "xcvr-power-unsupported", "xcvr-unsupported"]
    out = ["Errdisable Reason              Timer Status   Timer Interval",
           "------------------------------ ----------------- --------------"]
    out += [f"{r:<30} {'Disabled':<17} {300:>14}" for r in rows]
    return "\n".join(out) + "\n"


def _block(dev: EosDevice, header: str) -> list[str] | None:
    blk = dev.running.root.child(header)
    return blk.lines() if blk is not None else None


def management_ssh_text(dev: EosDevice) -> str:
    lines = _block(dev, "management ssh")
    enabled = lines is None or "shutdown" not in lines      # SSH is on by default on EOS
    return (f"SSHD status for Default VRF is {'enabled' if enabled else 'disabled'}\nSSH connection limit is 50\n"
            "SSH per host connection limit is 20\nFIPS status: disabled\n\n")


def management_api_http(dev: EosDevice) -> dict:
    from nr_run.lab.twin.eos.server import protocols

    enabled = protocols(dev)
    return {"enabled": bool(enabled), "httpServer": {"configured": "http" in enabled, "running": "http" in enabled,
                                                     "port": 80},
            "localHttpServer": {"configured": False, "running": False, "port": 8080},
            "httpsServer": {"configured": "https" in enabled, "running": "https" in enabled, "port": 443},
            "unixSocketServer": {"configured": False, "running": False}, "tlsProtocol": ["1.2", "1.3"],
            "urls": [f"Management0 : https://{_mgmt_ip(dev)}:443"] if "https" in enabled else []}


def _mgmt_ip(dev: EosDevice) -> str:
    lines = _block(dev, "interface Management0") or []
    addr = next((ln.split()[2] for ln in lines if ln.startswith("ip address ")), "0.0.0.0/0")
    return addr.split("/")[0]


def clock(dev: EosDevice) -> dict:
    now = time.time()
    t = time.gmtime(now)
    return {"utcTime": now, "timezone": "UTC", "clockSource": {"local": True},
            "localTime": {"year": t.tm_year, "month": t.tm_mon, "dayOfMonth": t.tm_mday, "hour": t.tm_hour,
                          "min": t.tm_min, "sec": t.tm_sec, "dayOfWeek": t.tm_wday, "dayOfYear": t.tm_yday,
                          "daylightSavingsAdjust": 0}}


# ---- interface counters ----------------------------------------------------------------------------
def _ethernet(dev: EosDevice) -> list[str]:
    from nr_run.lab.twin.eos.show import _intf_arg

    return _intf_arg(dev, None)


def counters_errors(dev: EosDevice) -> dict:
    zero = {"inErrors": 0, "frameTooLongs": 0, "outErrors": 0, "frameTooShorts": 0, "fcsErrors": 0,
            "alignmentErrors": 0, "symbolErrors": 0}
    return {"interfaceErrorCounters": {n: dict(zero) for n in _ethernet(dev)}}


def counters_discards(dev: EosDevice) -> dict:
    out = {n: {"outDiscards": sum(dev.fabric.queue_drops(dev.name, n).values()), "inDiscards": 0}
           for n in _ethernet(dev)}
    return {"inDiscardsTotal": 0, "interfaces": out,
            "outDiscardsTotal": sum(v["outDiscards"] for v in out.values())}


def counters_rates(dev: EosDevice) -> dict:
    from nr_run.lab.twin.eos.show import interfaces_status

    statuses = interfaces_status(dev)["interfaceStatuses"]
    now = time.time()
    return {"interfaces": {n: {"description": s["description"], "interval": 300, "inBpsRate": 0.0,
                               "inPktsRate": 0.0, "inPpsRate": 0.0, "outBpsRate": 0.0, "outPktsRate": 0.0,
                               "outPpsRate": 0.0, "lastUpdateTimestamp": now}
                           for n, s in statuses.items()}}


def errdisabled(dev: EosDevice) -> dict:
    return {"interfaceStatuses": {}}


def interfaces_description(dev: EosDevice) -> dict:
    from nr_run.lab.twin.eos.show import interfaces

    out = {}
    for name, i in interfaces(dev)["interfaces"].items():
        status = "up" if i["interfaceStatus"] == "connected" else (
            "adminDown" if i["interfaceStatus"] == "disabled" else "down")
        out[name] = {"interfaceStatus": status, "description": i["description"],
                     "lineProtocolStatus": i["lineProtocolStatus"]}
    return {"interfaceDescriptions": out}


def lacp_counters(dev: EosDevice) -> dict:
    return {"portChannels": {}, "orphanPorts": {}}


def _routed_addresses(dev: EosDevice) -> dict[str, dict[str, Any]]:
    from nr_run.lab.twin.eos.show import interfaces

    return {n: i for n, i in interfaces(dev)["interfaces"].items() if i["forwardingModel"] == "routed"}


def ip_interface_brief(dev: EosDevice) -> dict:
    out = {}
    for name, i in _routed_addresses(dev).items():
        primary = i["interfaceAddress"][0]["primaryIp"] if i["interfaceAddress"] else {"address": "0.0.0.0",
                                                                                       "maskLen": 0}
        out[name] = {"name": name, "interfaceStatus": i["interfaceStatus"], "lineProtocolStatus":
                     i["lineProtocolStatus"], "mtu": i["mtu"], "ipv4Routable240": False, "ipv4Routable0": False,
                     "interfaceAddress": {"ipAddr": {"address": primary["address"], "maskLen": primary["maskLen"]}},
                     "nonRoutableClassEIntf": False}
    return {"interfaces": out}


def ip_interface(dev: EosDevice, arg: str | None = None) -> dict:
    out = {}
    for name, i in _routed_addresses(dev).items():
        addr: dict[str, Any] = i["interfaceAddress"][0] if i["interfaceAddress"] else {
            "primaryIp": {"address": "0.0.0.0", "maskLen": 0}, "secondaryIps": {}, "secondaryIpsOrderedList": [],
            "virtualIp": {"address": "0.0.0.0", "maskLen": 0}, "broadcastAddress": "255.255.255.255", "dhcp": False}
        out[name] = {"name": name, "lineProtocolStatus": i["lineProtocolStatus"],
                     "interfaceStatus": i["interfaceStatus"], "mtu": i["mtu"], "interfaceAddressBrief": {
                         "ipAddr": dict(addr["primaryIp"])}, "ipv4Routable240": False, "ipv4Routable0": False,
                     "enabled": True, "description": i["description"], "interfaceAddress": addr,
                     "proxyArp": False, "proxyArpAllowDefault": False, "localProxyArp": False,
                     "gratuitousArp": False, "routedAddr": "", "isVrrpBackup": None, "urpf": "disable",
                     "addresslessForwarding": "isInvalid", "directedBroadcastEnabled": False,
                     "maxMssIngress": 0, "maxMssEgress": 0}
    if arg:
        from nr_run.lab.twin.eos.config import _canon_ifname

        name = _canon_ifname(arg)
        if name not in out:
            raise CommandFailed([f"Interface does not exist (at token 3: '{arg}')"])
        out = {name: out[name]}
    return {"interfaces": out}


# ---- what NAPALM's getters read ----------------------------------------------------------------------
def users_accounts(dev: EosDevice) -> dict:
    users = {}
    for line in dev.running.root.lines():
        words = line.split()
        if words[:1] == ["username"] and len(words) >= 2:
            priv = int(words[words.index("privilege") + 1]) if "privilege" in words else 1
            users[words[1]] = {"username": words[1], "privLevel": priv, "sshAuthorizedKey": ""}
    return {"users": users}


def vrfs(dev: EosDevice) -> dict:
    """`show vrf`: the default VRF and every `vrf instance` (MGMT ...), each with its routed interfaces and
    whether it routes (`[no] ip routing [vrf NAME]`), as in NAPALM's test data show_vrf.json."""
    from nr_run.lab.twin.eos.show import interfaces

    root = dev.running.root
    member = {b.line.split()[1]: next((ln.split()[1] for ln in b.lines() if ln.startswith("vrf ")), "default")
              for b in root.blocks("interface ")}
    routed = sorted((n for n, i in interfaces(dev)["interfaces"].items() if i["forwardingModel"] == "routed"),
                    key=natural_key)
    names = ["default"] + sorted(b.line.split()[2] for b in root.blocks("vrf instance "))
    out = {}
    for vrf in names:
        routing = dev.state().ip_routing if vrf == "default" else root.has(f"ip routing vrf {vrf}")
        protocols = {"ipv4": {"supported": True, "protocolState": "up", "routingState": "up" if routing else "down"},
                     "ipv6": {"supported": True, "protocolState": "up", "routingState": "down"}}
        mine = [n for n in routed if member.get(n, "default") == vrf]
        out[vrf] = {"routeDistinguisher": "", "protocols": protocols, "vrfState": "up",
                    "interfacesV4": mine, "interfacesV6": [], "interfaces": mine}
    return {"vrfs": out}


def vlans(dev: EosDevice) -> dict:
    """`show vlan`: VLAN 1 with the switched (non-routed) ports (NAPALM test data show_vlan.json)."""
    from nr_run.lab.twin.eos.show import interfaces

    bridged = {n: {"privatePromoted": False} for n, i in interfaces(dev)["interfaces"].items()
               if i["forwardingModel"] == "bridged" and n.startswith("Ethernet")}
    return {"sourceDetail": "", "vlans": {"1": {"status": "active", "name": "default", "interfaces": bridged,
                                                "dynamic": False}}}


def snmp_chassis(dev: EosDevice) -> dict:
    from nr_run.lab.twin.eos.show import version

    return {"chassisId": version(dev)["serialNumber"]}


def snmp_location(dev: EosDevice) -> dict:
    return {"location": _snmp_value(dev, "location")}


def snmp_contact(dev: EosDevice) -> dict:
    return {"contact": _snmp_value(dev, "contact")}


def _snmp_value(dev: EosDevice, key: str) -> str:
    for line in dev.running.root.lines():
        if line.startswith(f"snmp-server {key} "):
            return line.split(None, 2)[2]
    return ""


def transceivers(dev: EosDevice) -> dict:
    """cEOS has no optics: EOS lists no transceiver data for its virtual ports."""
    return {"interfaces": {}}


def mac_address_table(dev: EosDevice) -> dict:
    """Routed ports learn no MACs; the table is empty."""
    return {"unicastTable": {"tableEntries": []}, "multicastTable": {"tableEntries": []}, "disabledMacLearningVlans": []}


def arp(dev: EosDevice) -> dict:
    """ARP entries: one per routed neighbour whose address answers on the port's /31 (as traffic resolves them)."""
    from nr_run.lab.twin.eos.show import _mac

    entries = []
    owners = dev.fabric.owners()
    for name, ifs in sorted(dev.state().interfaces.items()):
        if not ifs.ipv4 or not dev.fabric.link_up(dev.name, name):
            continue
        far = dev.fabric.peer(dev.name, name)
        for ip, owner in owners.items():
            if owner == far and _same_subnet(ifs.ipv4, ip):
                entries.append({"address": ip, "hwAddress": _mac(far[0], far[1]), "interface": name,
                                "age": 0, "ageRefreshTime": "0:00:10"})
    return {"vrfs": {"default": {"ipV4Neighbors": entries, "dynamicEntries": len(entries), "staticEntries": 0,
                                 "notLearnedEntries": 0, "totalEntries": len(entries)}}}


def _same_subnet(prefix: str, ip: str) -> bool:
    import ipaddress

    return ipaddress.ip_address(ip) in ipaddress.ip_interface(prefix).network


def environment_cooling(dev: EosDevice) -> dict:
    return {"systemStatus": "coolingOk", "ambientTemperature": 25.0, "airflowDirection": "frontToBackAirflow",
            "shutdownOnInsufficientFans": True, "overrideFanSpeed": 0, "minFanSpeed": 0, "currentZones": 1,
            "configuredZones": 0, "defaultZones": False, "numCoolingZones": [], "fanTraySlots": [], "powerSupplySlots": []}


def environment_temperature(dev: EosDevice) -> dict:
    return {"systemStatus": "temperatureOk", "shutdownOnOverheat": "True", "powerSupplySlots": [],
            "tempSensors": [], "cardSlots": [], "ambientThreshold": 45, "currentZones": 1, "configuredZones": 0}


def environment_power(dev: EosDevice) -> dict:
    return {"powerSupplies": {}}


def inventory(dev: EosDevice) -> dict:
    """`show inventory` of a cEOS-lab node: the chassis (serial as show version), no power supplies or fans, one
    transceiver slot per front-panel port, none of them populated (a container has no optics)."""
    from nr_run.lab.twin.eos.show import version

    v = version(dev)
    node = dev.fabric.topology.nodes.get(dev.name)
    ports = sorted({int(p[len("Ethernet"):].split("/")[0]) for p in (node.ports if node else ())
                    if p.startswith("Ethernet")})
    return {"systemInformation": {"name": v["modelName"], "description": v["modelName"], "mfgDate": "",
                                  "hardwareRev": v["hardwareRevision"], "serialNum": v["serialNumber"]},
            "powerSupplySlots": {}, "fanTraySlots": {}, "portCount": len(ports) + 1, "switchedPortCount": len(ports),
            "internalPortCount": 0, "managementPortCount": 1, "xcvrSlots": {
                str(p): {"mfgName": "Not Present", "modelName": "", "serialNum": "", "hardwareRev": ""}
                for p in ports}, "cardSlots": {}, "storageDevices": {}}
