"""More of what an engineer types on a SONiC 202305 switch: `show` subcommands, FRR text, database tools.

Formats follow sonic-utilities (show/*.py, scripts/portstat, scripts/intfutil, scripts/mmuconfig,
scripts/watermarkstat) and FRR as published samples show them: ntc-templates' SONiC test data
(github.com/networktocode/ntc-templates, tests/sonic/: sonic_linux_portstat.raw for `show interfaces counters`,
sonic_linux_show_version*.raw, sonic_linux_show_lldp_table.raw, sonic_linux_show_ip_bgp_summary.raw for FRR's
`show ip bgp summary` text) and SONiC's command reference (sonic-utilities doc/Command-Reference.md).
UNVERIFIED (no sample found; laid out after the command reference): `show ip interfaces`, `show interfaces
description`, `show platform summary`, the watermark tables, `show lldp neighbors` (lldpctl's layout), `docker ps`.
"""

from __future__ import annotations

import json
import shlex
import time
import zlib
from typing import TYPE_CHECKING, Any

from nr_run.lab.twin.model.bgp import message_counts
from nr_run.lab.twin.sonic import gcu
from nr_run.lab.twin.sonic.release import version_string
from nr_run.lab.twin.sonic.show import _frr_running, _kv, _ports, table

if TYPE_CHECKING:
    from nr_run.lab.twin.sonic.device import SonicDevice

Result = tuple[int, str, str]
SONIC_VERSION = "SONiC.202305.twin"      # the release of a node whose image names none of its own
CONTAINERS = ("snmp", "pmon", "lldp", "radv", "syncd", "teamd", "bgp", "swss", "database")
IMAGES = {"bgp": "fpm-frr", "swss": "orchagent", "syncd": "syncd-vs", "pmon": "platform-monitor",
          "radv": "router-advertiser"}


def _oper(dev: SonicDevice, port: str) -> bool:
    return dev.fabric.link_up(dev.node.name, port)


def counters(dev: SonicDevice, errors_only: bool) -> Result:
    """portstat: `show interfaces counters` / `show interfaces counters errors`."""
    rows = []
    for p in _ports(dev):
        state = "U" if _oper(dev, p) else ("D" if dev.running["PORT"][p].get("admin_status") == "up" else "X")
        drops = sum(dev.fabric.queue_drops(dev.node.name, p).values())
        if errors_only:
            rows.append([p, state, "0", "0", "0", "0", f"{drops:,}", "0"])
        else:
            _, in_pkts, _, out_pkts = dev.fabric.traffic(dev.node.name, p)
            rows.append([p, state, f"{in_pkts:,}", "0.00 B/s", "0.00%", "0", "0", "0", f"{out_pkts:,}", "0.00 B/s",
                         "0.00%", "0", f"{drops:,}", "0"])
    head = (["IFACE", "STATE", "RX_ERR", "RX_DRP", "RX_OVR", "TX_ERR", "TX_DRP", "TX_OVR"] if errors_only else
            ["IFACE", "STATE", "RX_OK", "RX_BPS", "RX_UTIL", "RX_ERR", "RX_DRP", "RX_OVR", "TX_OK", "TX_BPS",
             "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR"])
    return 0, table(head, rows, align_left=0), ""


def description(dev: SonicDevice) -> Result:
    rows = []
    for p in _ports(dev):
        f = dev.running["PORT"][p]
        rows.append([p, "up" if _oper(dev, p) else "down", f.get("admin_status", "down"), f.get("alias", p),
                     f.get("description", "")])
    return 0, table(["Interface", "Oper", "Admin", "Alias", "Description"], rows, align_left=5), ""


def alias(dev: SonicDevice) -> Result:
    rows = [[p, dev.running["PORT"][p].get("alias", p)] for p in _ports(dev)]
    return 0, table(["Name", "Alias"], rows, align_left=2), ""


def ip_interfaces(dev: SonicDevice) -> Result:
    st = dev.fabric.state(dev.node.name)
    rows = []
    peers = {s.local_ip: s for s in dev.fabric.bgp_sessions(dev.node.name)} if st else {}
    for name, ifs in sorted((st.interfaces if st else {}).items()):
        if not ifs.ipv4:
            continue
        s = peers.get(ifs.ipv4.split("/")[0])
        state = f"{'up' if ifs.admin_up else 'down'}/{'up' if _oper(dev, name) else 'down'}"
        rows.append([name, "", ifs.ipv4, state, s.description or s.peer_device or "N/A" if s else "N/A",
                     s.peer_ip if s else "N/A"])
    for name, pfx in sorted((st.loopbacks if st else {}).items()):
        rows.append([name, "", pfx, "up/up", "N/A", "N/A"])
    mgmt = next(iter(dev.running.get("MGMT_INTERFACE", {})), "eth0|")
    rows.append(["eth0", "", mgmt.split("|", 1)[1], "up/up", "N/A", "N/A"])
    rows.append(["lo", "", "127.0.0.1/16", "up/up", "N/A", "N/A"])
    return 0, table(["Interface", "Master", "IPv4 address/mask", "Admin/Oper", "BGP Neighbor", "Neighbor IP"],
                    rows, align_left=6), ""


def platform_summary(dev: SonicDevice) -> Result:
    meta = dev.running.get("DEVICE_METADATA", {}).get("localhost", {})
    return 0, (f"Platform: {meta.get('platform', 'x86_64-kvm_x86_64-r0')}\nHwSKU: {meta.get('hwsku', '')}\n"
               f"ASIC: vs\nASIC Count: 1\nSerial Number: TWIN{dev.node.name.upper()}\nModel Number: N/A\n"
               "Hardware Revision: N/A\n"), ""


def version(dev: SonicDevice) -> Result:
    up = int(time.time() - dev.boot_time)
    name = version_string(dev.node.image) if dev.node.image else SONIC_VERSION
    images = "".join(f"docker-{c:<26}{name[6:]:<22}{_image_id(c)}        300MB\n"
                     for c in ("database", "orchagent", "fpm-frr", "lldp", "syncd-vs", "teamd"))
    return 0, (f"\nSONiC Software Version: {name}\nSONiC OS Version: 11\nDistribution: Debian 11.7\n"
               "Kernel: 5.10.0-23-2-amd64\nBuild commit: twin\nBuild date: Tue Aug  1 00:00:00 UTC 2023\n"
               f"Built by: nr-run\n\n{platform_summary(dev)[1]}"
               f"Uptime: {time.strftime('%H:%M:%S', time.gmtime())} up "
               f"{up // 60} min,  1 user,  load average: 0.30, 0.25, 0.20\n"
               f"Date: {time.strftime('%a %d %b %Y %H:%M:%S', time.gmtime())}\n\nDocker images:\n"
               f"REPOSITORY                         TAG                   IMAGE ID            SIZE\n{images}"), ""


def _session_row(s: Any) -> tuple[bool, int, str]:
    """(established, seconds in its state, State/PfxRcd column) of one BGP session."""
    est = s.state == "Established"
    return est, int(time.time() - s.since), (str(s.prefixes_received) if est else
                                             ("Idle (Admin)" if s.idle_reason else s.state))


def bgp_summary_table(dev: SonicDevice) -> Result:
    """sonic-utilities' `show ip bgp summary` (its own table, not FRR's)."""
    st = dev.fabric.state(dev.node.name)
    if not st or not st.bgp:
        return 1, "", "Error: bgp summary from bgp container not in json format\n"
    rows = []
    sessions = dev.fabric.bgp_sessions(dev.node.name)
    for s in sessions:
        est, up, state = _session_row(s)
        received, sent = msgs(dev, s)
        rows.append([s.peer_ip, "4", str(s.remote_as or 0), str(received),
                     str(sent), "0", "0", "0", _uptime(up) if est else "never", state,
                     s.description or s.peer_device or "NotAvailable"])
    head = ["Neighbhor", "V", "AS", "MsgRcvd", "MsgSent", "TblVer", "InQ", "OutQ", "Up/Down", "State/PfxRcd",
            "NeighborName"]
    ribs = dev.fabric.bgp_route_count(dev.node.name)
    return 0, (f"\nIPv4 Unicast Summary:\nBGP router identifier {st.bgp.router_id}, local AS number {st.bgp.asn} "
               f"vrf-id 0\nBGP table version {ribs}\nRIB entries {ribs}, using {ribs * 192} bytes of memory\n"
               f"Peers {len(rows)}, using {len(rows) * 21} KiB of memory\nPeer groups 1, using 64 bytes of memory\n"
               "\n\n" + table(head, rows, align_left=1) + f"\nTotal number of neighbors {len(rows)}\n"), ""


def frr_bgp_summary(dev: SonicDevice) -> Result:
    """FRR's own `show ip bgp summary` text, as vtysh prints it (ntc-templates sample layout)."""
    st = dev.fabric.state(dev.node.name)
    if not st or not st.bgp:
        return 0, "% No BGP neighbors found in VRF default\n", ""
    sessions = dev.fabric.bgp_sessions(dev.node.name)
    ribs = dev.fabric.bgp_route_count(dev.node.name)
    out = ["", "IPv4 Unicast Summary (VRF default):",
           f"BGP router identifier {st.bgp.router_id}, local AS number {st.bgp.asn} vrf-id 0",
           f"BGP table version {ribs}", f"RIB entries {ribs}, using {ribs * 192} bytes of memory",
           f"Peers {len(sessions)}, using {len(sessions) * 21} KiB of memory", "",
           "Neighbor        V         AS   MsgRcvd   MsgSent   TblVer  InQ OutQ  Up/Down State/PfxRcd   PfxSnt Desc"]
    for s in sessions:
        est, up, state = _session_row(s)
        received, sent = msgs(dev, s)
        out.append(f"{s.peer_ip:<15} 4 {s.remote_as or 0:>10} {received:>9} {sent:>9} {0:>8} {0:>4} {0:>4} "
                   f"{_uptime(up) if est else 'never':>8} {state:>12} {s.prefixes_sent if est else 0:>8} "
                   f"{s.description or 'N/A'}")
    out += ["", f"Total number of neighbors {len(sessions)}"]
    return 0, "\n".join(out) + "\n", ""


def msgs(dev: SonicDevice, s: Any) -> tuple[int, int]:
    """(received, sent) BGP messages of a session, from its negotiated keepalive (model.bgp.message_counts)."""
    return message_counts(s, time.time(), dev.fabric.timers(dev.node.name, s)[0] or 60)


def _uptime(secs: int) -> str:
    h, rem = divmod(secs, 3600)
    if h < 24:
        return f"{h:02d}:{rem // 60:02d}:{rem % 60:02d}"
    return f"{h // 24}d{h % 24:02d}h{rem // 60:02d}m"


def frr_ip_route(dev: SonicDevice) -> Result:
    out = ["Codes: K - kernel route, C - connected, S - static, R - RIP,",
           "       O - OSPF, I - IS-IS, B - BGP, E - EIGRP, N - NHRP,",
           "       T - Table, v - VNC, V - VNC-Direct, A - Babel, F - PBR,",
           "       f - OpenFabric,",
           "       > - selected route, * - FIB route, q - queued, r - rejected, b - backup",
           "       t - trapped, o - offload failure", ""]
    now = time.time()
    since = {s.peer_ip: s.since for s in dev.fabric.bgp_sessions(dev.node.name)}
    for pfx, r in dev.fabric.routes(dev.node.name).items():
        code = {"connected": "C", "static": "S", "bgp": "B"}[r.protocol]
        dist = {"connected": "", "static": " [1/0]", "bgp": " [20/0]"}[r.protocol]
        # a route's age: since the session it came from was established (a BGP route), else since the device booted
        # or its link last came back
        learned = max([dev.boot_time] + [since.get(nh.ip or "", 0.0) for nh in r.next_hops]
                      + [dev.fabric.link_times(dev.node.name, nh.interface)[1] or 0.0 for nh in r.next_hops])
        age = _uptime(int(now - learned))
        if not r.next_hops:
            out.append(f"{code}>* {pfx}{dist} unreachable (blackhole), {age}")
        for i, nh in enumerate(r.next_hops):
            lead = f"{code}>* {pfx}{dist}" if i == 0 else " " * (len(code) + 3 + len(pfx) + len(dist)) + "*"
            via = f"via {nh.ip}, {nh.interface}" if nh.ip else f"is directly connected, {nh.interface}"
            out.append(f"{lead} {via}, {age}")
    return 0, "\n".join(out) + "\n", ""


def running_bgp(dev: SonicDevice) -> Result:
    return 0, "Building configuration...\n\nCurrent configuration:\n!\n" + _frr_running(dev), ""


def lldp_neighbors(dev: SonicDevice) -> Result:
    rule = "-" * 79
    out = [rule, "LLDP neighbors:", rule]
    now = time.time()
    for rid, n in enumerate(dev.fabric.lldp_neighbors(dev.node.name), 1):
        seen = int(now - max(dev.boot_time, dev.fabric.link_times(dev.node.name, n.port)[1] or 0.0))
        out += [f"Interface:    {n.port}, via: LLDP, RID: {rid}, Time: {seen // 86400} day, "
                f"{seen % 86400 // 3600:02d}:{seen % 3600 // 60:02d}:{seen % 60:02d}", "  Chassis:",
                f"    ChassisID:    mac {n.chassis_mac}", f"    SysName:      {n.hostname}",
                "    Capability:   Router, on", "  Port:", f"    PortID:       {n.port_id_subtype} {n.neighbor_port}",
                f"    PortDescr:    {n.neighbor_port_descr or n.neighbor_port}", "    TTL:          120", rule]
    return 0, "\n".join(out) + "\n", ""


def buffer_pool_watermark(dev: SonicDevice, persistent: bool) -> Result:
    rows = [[name, "0"] for name in sorted(dev.running.get("BUFFER_POOL", {}))]
    kind = "Shared pool maximum occupancy:" if not persistent else "Shared pool maximum occupancy (persistent):"
    return 0, kind + "\n" + table(["Pool", "Bytes"], rows, align_left=1), ""


def pg_watermark(dev: SonicDevice, which: str, persistent: bool) -> Result:
    title = {"shared": "Ingress shared pool occupancy per PG:",
             "headroom": "Ingress headroom per PG:"}.get(which)
    if title is None:
        return 2, "", f"Error: No such command \"{which}\".\n"
    rows = [[p] + ["0"] * 8 for p in _ports(dev)]
    return 0, title + "\n" + table(["Port"] + [f"PG{i}" for i in range(8)], rows, align_left=1), ""


def mmuconfig(dev: SonicDevice, args: list[str]) -> Result:
    if "-l" not in args:
        return 2, "", "Usage: mmuconfig [-l] [-p PROFILE] [-a ALPHA] [-s STATIC_TH]\n"
    out = []
    for name, f in sorted(dev.running.get("BUFFER_POOL", {}).items()):
        out.append(f"Pool: {name}\n" + _kv(f))
    for name, f in sorted(dev.running.get("BUFFER_PROFILE", {}).items()):
        out.append(f"Profile: {name}\n" + _kv(f))
    return 0, "Lossless traffic pattern:\n" + _kv({"default_dynamic_th": "0"}) + "\n" + "\n".join(out), ""


# ---- databases and containers ---------------------------------------------------------------------------
DB_NUMBERS = {"CONFIG_DB": 4, "APPL_DB": 0, "COUNTERS_DB": 2, "STATE_DB": 6, "ASIC_DB": 1}


def _config_keys(dev: SonicDevice) -> dict[str, dict[str, Any]]:
    return {f"{table_name}|{key}": fields for table_name, entries in dev.running.items()
            if isinstance(entries, dict) for key, fields in entries.items() if isinstance(fields, dict)}


def _appl_keys(dev: SonicDevice) -> dict[str, dict[str, Any]]:
    """APPL_DB as the daemons wrote it: the CONFIG_DB tables they copy, PORT_TABLE with the port's oper_status."""
    keys: dict[str, dict[str, Any]] = gcu.appl_db(dev)
    for key, fields in keys.items():
        if key.startswith("PORT_TABLE:"):
            port = key.split(":", 1)[1]
            fields["oper_status"] = "up" if dev.fabric.link_up(dev.node.name, port) else "down"
    return keys


def _redis(dev: SonicDevice, db: int, words: list[str], as_dict: bool = False) -> Result:
    """The read commands engineers use on CONFIG_DB and APPL_DB (others: empty). as_dict: HGETALL prints a Python
    dict literal, as sonic-db-cli does (redis-cli prints field and value lines)."""
    keys = _config_keys(dev) if db == 4 else _appl_keys(dev) if db == 0 else {}
    if not words:
        return 1, "", "(error) ERR wrong number of arguments\n"
    verb = words[0].upper()
    if verb == "KEYS" and len(words) == 2:
        import fnmatch

        found = sorted(k for k in keys if fnmatch.fnmatchcase(k, words[1]))
        return 0, "".join(f"{k}\n" for k in found), ""
    if verb == "HGETALL" and len(words) == 2:
        fields = keys.get(words[1], {})
        if as_dict:
            return 0, repr({str(k): str(v) for k, v in sorted(fields.items())}) + "\n", ""
        return 0, "".join(f"{k}\n{v}\n" for k, v in sorted(fields.items())), ""
    if verb == "HGET" and len(words) == 3:
        value = keys.get(words[1], {}).get(words[2])
        return 0, f"{value}\n" if value is not None else "\n", ""
    if verb == "EXISTS" and len(words) == 2:
        return 0, f"{int(words[1] in keys)}\n", ""
    if verb == "PING":
        return 0, "PONG\n", ""
    return 1, "", f"(error) ERR the twin serves read commands only (KEYS, HGETALL, HGET, EXISTS), not {verb}\n"


def redis_cli(dev: SonicDevice, args: list[str]) -> Result:
    db, rest, i = 0, [], 0
    while i < len(args):
        if args[i] == "-n" and i + 1 < len(args):
            db = int(args[i + 1]) if args[i + 1].isdigit() else 0
            i += 2
            continue
        rest.append(args[i])
        i += 1
    return _redis(dev, db, rest)


def sonic_db_cli(dev: SonicDevice, args: list[str]) -> Result:
    if not args or args[0] not in DB_NUMBERS:
        return 1, "", f"Invalid database name input : '{args[0] if args else ''}'\n"
    return _redis(dev, DB_NUMBERS[args[0]], args[1:], as_dict=True)


def sonic_cfggen(dev: SonicDevice, args: list[str]) -> Result:
    if "-d" not in args:
        return 1, "", "twin: only `sonic-cfggen -d` (the running CONFIG_DB) is modelled\n"
    if "--print-data" in args:
        return 0, json.dumps(dev.running, indent=4, sort_keys=True) + "\n", ""
    if "-v" in args and args.index("-v") + 1 < len(args):
        value: Any = dev.running
        for part in args[args.index("-v") + 1].split("."):
            value = value.get(part, "") if isinstance(value, dict) else ""
        return 0, (json.dumps(value) if isinstance(value, dict) else str(value)) + "\n", ""
    return 1, "", "Usage: sonic-cfggen -d [--print-data | -v VAR]\n"


def docker(dev: SonicDevice, args: list[str]) -> Result:
    if args[:1] != ["ps"]:
        return 1, "", f"docker: '{args[0] if args else ''}' is not modelled by the twin (docker ps only)\n"
    up = int(time.time() - dev.boot_time) // 60
    rows = ["CONTAINER ID   IMAGE                                COMMAND                  CREATED          STATUS"
            "          PORTS     NAMES"]
    for c in CONTAINERS:
        image = f"docker-{IMAGES.get(c, c)}:latest"
        rows.append(f"{_image_id(c)}   {image:<36} \"/usr/local/bin/supe…\"   {up} minutes ago    "
                    f"Up {up} minutes              {c}")
    return 0, "\n".join(rows) + "\n", ""


def _image_id(name: str) -> str:
    return f"{zlib.crc32(name.encode()):08x}a1b2"


def vtysh_text(dev: SonicDevice, command: str) -> Result | None:
    """FRR text output for the vtysh commands engineers type; None: not one of these."""
    words = shlex.split(command)
    if words in (["show", "ip", "bgp", "summary"], ["show", "bgp", "summary"], ["show", "bgp", "ipv4", "summary"],
                 ["show", "bgp", "ipv4", "unicast", "summary"]):
        return frr_bgp_summary(dev)
    if words == ["show", "ip", "route"]:
        return frr_ip_route(dev)
    if words in (["show", "running-config"], ["show", "running-config", "bgpd"]):
        return running_bgp(dev)
    return None
