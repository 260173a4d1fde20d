"""SONiC show-command output (sonic-utilities / FRR formats) computed from CONFIG_DB and the fabric."""

from __future__ import annotations

import ipaddress
import json
import time
from typing import TYPE_CHECKING, Any

from nr_run.lab.twin.sonic import port_history, watermarks, wred
from nr_run.lab.twin.sonic.tables import row_format

if TYPE_CHECKING:
    from nr_run.lab.twin.fabric import Route
    from nr_run.lab.twin.sonic.device import SonicDevice

Result = tuple[int, str, str]


def table(headers: list[str], rows: list[list[str]], align_left: int = 1) -> str:
    """tabulate 'simple' layout: first `align_left` columns left-aligned, the rest right-aligned."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    line = row_format(widths, set(range(len(widths))) - set(range(align_left)))
    return "\n".join([line(headers), "  ".join("-" * w for w in widths)] + [line(r) for r in rows]) + "\n"


def _ports(dev: SonicDevice) -> list[str]:
    return sorted(dev.running.get("PORT", {}), key=lambda p: int("".join(c for c in p if c.isdigit()) or 0))


def _speed(mbps: str) -> str:
    return f"{int(mbps) // 1000}G" if str(mbps).isdigit() else "N/A"


def show(dev: SonicDevice, args: list[str]) -> Result:
    words = [a for a in args if a not in ("-j", "--json")]
    cmd = " ".join(words)
    db = dev.running
    if cmd in ("runningconfiguration all", "runningconfiguration"):
        doc = dict(db)
        doc["bgpraw"] = _frr_running(dev)
        return 0, json.dumps(doc, indent=4, sort_keys=True) + "\n", ""
    more = _more(dev, words)
    if more is not None:
        return more
    if cmd == "interfaces status":
        rows = []
        for p in _ports(dev):
            f = db["PORT"][p]
            oper = "up" if dev.fabric.link_up(dev.node.name, p) else "down"
            vlan = "routed" if any(k.split("|")[0] == p for k in db.get("INTERFACE", {})) else "trunk"
            rows.append([p, f.get("lanes", "N/A"), _speed(f.get("speed", "")), f.get("mtu", "9100"),
                         f.get("fec", "N/A"), f.get("alias", p), vlan, oper, f.get("admin_status", "down"),
                         "N/A", f.get("pfc_asym", "off")])
        return 0, table(["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type",
                         "Asym PFC"], rows, align_left=0), ""
    if cmd == "lldp table":
        nbs = dev.fabric.lldp_neighbors(dev.node.name)
        rows = [[n.port, n.hostname, n.neighbor_port, "R", n.neighbor_port_descr or n.neighbor_port] for n in nbs]
        return 0, ("Capability codes: (R) Router, (B) Bridge, (O) Other\n"
                   + table(["LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr"], rows, 5)
                   + "-" * 50 + f"\nTotal entries displayed:  {len(rows)}\n"), ""
    if cmd == "pfc priority":
        qm = db.get("PORT_QOS_MAP", {})
        rows = [[p, qm.get(p, {}).get("pfc_enable", "N/A") or "N/A"] for p in _ports(dev)]
        return 0, "\n" + table(["Interface", "Lossless priorities"], rows, 2), ""
    if cmd == "pfc asymmetric":
        rows = [[p, db["PORT"][p].get("pfc_asym", "off")] for p in _ports(dev)]
        return 0, "\n" + table(["Interface", "Asymmetric"], rows, 2), ""
    if cmd == "pfc counters --history":
        return port_history.pfc_history(dev, _ports(dev))
    if words[:2] == ["interfaces", "flap"] and len(words) <= 3:
        return port_history.flap(dev, _ports(dev), words[2] if len(words) == 3 else None)
    if words[:1] == ["queue"] and len(words) == 3 and words[1] in watermarks.KINDS:
        return watermarks.show_queue(dev, _ports(dev), words[1], words[2], table)
    if cmd == "pfc counters":
        rx, tx = [], []
        for p in _ports(dev):
            c = dev.fabric.pfc_counters(dev.node.name, p)
            rx.append([p] + [f"{c[i]['rx']:,}" for i in range(8)])
            tx.append([p] + [f"{c[i]['tx']:,}" for i in range(8)])
        pfc = [f"PFC{i}" for i in range(8)]
        return 0, table(["  Port Rx"] + pfc, rx, 0) + "\n" + table(["  Port Tx"] + pfc, tx, 0), ""
    if cmd.startswith("queue wredcounters"):
        return wred.wredcounters(dev, _ports(dev), words[2] if len(words) > 2 else None, table)
    if cmd.startswith("queue counters"):
        only = words[2:3]
        rows = []
        for p in _ports(dev):
            if only and p != only[0]:
                continue
            drops = dev.fabric.queue_drops(dev.node.name, p)
            for q in range(8):
                rows.append([p, f"UC{q}", "0", "0", f"{drops[q]:,}", f"{drops[q] * wred.FRAME_BYTES:,}"])
        return 0, "For namespace :\n" + table(["Port", "TxQ", "Counter/pkts", "Counter/bytes", "Drop/pkts",
                                                "Drop/bytes"], rows, 0), ""
    if cmd == "buffer configuration":
        out = []
        for name, f in sorted(db.get("BUFFER_POOL", {}).items()):
            out.append(f"Pool: {name}\n" + _kv(f))
        for name, f in sorted(db.get("BUFFER_PROFILE", {}).items()):
            out.append(f"Profile: {name}\n" + _kv(f))
        return 0, "\n".join(out), ""
    if words[:2] == ["ip", "bgp"] or words[:1] == ["bgp"]:
        if "summary" not in cmd:
            return 2, "", f"Error: No such command \"{words[-1]}\".\n"
        # `show ip bgp summary` prints sonic-utilities' table; `-j`/`--json` gives FRR's JSON
        if "-j" in args or "--json" in args:
            return vtysh(dev, "show " + cmd + " json")
        from nr_run.lab.twin.sonic import show_ops
        return show_ops.bgp_summary_table(dev)
    if words[:1] == ["pfcwd"]:
        return pfcwd(dev, ["show"] + words[1:])
    if cmd == "ecn":                    # sonic-utilities: `show ecn` runs `ecnconfig -l`
        return ecnconfig(dev, ["-l"])
    if cmd == "buffer_pool":            # a click group: without a subcommand it prints its help
        return 0, BUFFER_POOL_HELP, ""
    return 2, "", f"Error: No such command \"{' '.join(words[:1])}\".\n"


BUFFER_POOL_HELP = """Usage: show buffer_pool [OPTIONS] COMMAND [ARGS]...

  Show details of the buffer pools

Options:
  -h, -?, --help  Show this message and exit.

Commands:
  persistent-watermark  Show persistent WM for buffer pools
  watermark             Show user WM for buffer pools
"""


def _more(dev: SonicDevice, words: list[str]) -> Result | None:
    """The show subcommands of show_ops (None: not one of them)."""
    from nr_run.lab.twin.sonic import show_ops as ops

    cmd = " ".join(words)
    simple = {"version": ops.version, "interfaces counters": lambda d: ops.counters(d, False),
              "interfaces counters errors": lambda d: ops.counters(d, True),
              "interfaces description": ops.description, "interfaces alias": ops.alias,
              "ip interfaces": ops.ip_interfaces, "ip interface": ops.ip_interfaces,
              "ip route": ops.frr_ip_route, "runningconfiguration bgp": ops.running_bgp,
              "lldp neighbors": ops.lldp_neighbors, "platform summary": ops.platform_summary,
              "buffer_pool watermark": lambda d: ops.buffer_pool_watermark(d, False),
              "buffer_pool persistent-watermark": lambda d: ops.buffer_pool_watermark(d, True)}
    if cmd in simple:
        return simple[cmd](dev)
    if words[:2] in (["priority-group", "watermark"], ["priority-group", "persistent-watermark"]) and len(words) == 3:
        return ops.pg_watermark(dev, words[2], words[1] == "persistent-watermark")
    return None


def _kv(fields: dict[str, str]) -> str:
    width = max((len(k) for k in fields), default=4)
    rule = f"{'-' * width}  {'-' * max((len(v) for v in fields.values()), default=4)}"
    return rule + "\n" + "".join(f"{k.ljust(width)}  {v}\n" for k, v in sorted(fields.items())) + rule + "\n"


def _frr_running(dev: SonicDevice) -> str:
    st = dev.fabric.state(dev.node.name)
    if not st or not st.bgp:
        return "!\nend\n"
    lines = [f"router bgp {st.bgp.asn}", f" bgp router-id {st.bgp.router_id}"]
    for ip, nb in sorted(st.bgp.neighbors.items()):
        lines += [f" neighbor {ip} remote-as {nb.remote_as}", f" neighbor {ip} description {nb.description}"]
        if nb.shutdown:
            lines.append(f" neighbor {ip} shutdown")
    return "\n".join(lines + ["!", "end"]) + "\n"


def vtysh(dev: SonicDevice, command: str) -> Result:
    words = command.split()
    name = dev.node.name
    if words[:1] == ["show"] and "summary" in words and "json" in words:
        st = dev.fabric.state(name)
        if not st or not st.bgp:
            return 0, "{}\n", ""
        peers: dict[str, Any] = {}
        from nr_run.lab.twin.sonic.show_ops import msgs

        for s in dev.fabric.bgp_sessions(name):
            est = s.state == "Established"
            up = int(time.time() - s.since)
            peers[s.peer_ip] = {
                "hostname": s.peer_device or "", "remoteAs": s.remote_as or 0, "localAs": s.local_as, "version": 4,
                "msgRcvd": msgs(dev, s)[0], "msgSent": msgs(dev, s)[1], "tableVersion": 0,
                "outq": 0, "inq": 0, "peerUptime": _frr_uptime(up) if est else "never",
                "peerUptimeMsec": up * 1000 if est else 0, "pfxRcd": s.prefixes_received, "pfxSnt": s.prefixes_sent,
                "state": s.state if s.state != "Idle" or not s.idle_reason else "Idle (Admin)",
                "connectionsEstablished": 1 if est else 0, "connectionsDropped": 0,
                "desc": s.description, "remoteRouterId": s.peer_router_id, "idType": "ipv4"}
        summary = {"routerId": st.bgp.router_id, "as": st.bgp.asn, "vrfId": 0, "vrfName": "default",
                   "tableVersion": 1, "ribCount": dev.fabric.bgp_route_count(name), "peerCount": len(peers),
                   "peers": peers, "failedPeers": sum(1 for p in peers.values() if p["state"] != "Established"),
                   "totalPeers": len(peers), "dynamicPeers": 0, "bestPath": {"multiPathRelax": "true"}}
        return 0, json.dumps({"ipv4Unicast": summary}, indent=2) + "\n", ""
    if words[:3] == ["show", "ip", "route"] and "json" in words:
        out: dict[str, list] = {}
        if len(words) == 5:       # `show ip route <prefix|address> json`: that prefix, or the longest match
            found = _route_lookup(dev, words[3])
            if found is None:
                return 0, "{}\n", ""
            table = {found.prefix: found}
        else:
            table = dev.fabric.routes(name)
        for pfx, r in table.items():
            proto = {"connected": "connected", "static": "static", "bgp": "bgp"}[r.protocol]
            out[pfx] = [{"prefix": pfx, "protocol": proto, "selected": True, "installed": True,
                         "distance": {"bgp": 20, "static": 1}.get(proto, 0), "metric": 0,
                         "nexthops": [{"fib": True, "ip": nh.ip, "afi": "ipv4", "interfaceName": nh.interface,
                                       "active": True} if nh.ip else
                                      {"fib": True, "directlyConnected": True, "interfaceName": nh.interface,
                                       "active": True} for nh in r.next_hops]}]
        return 0, json.dumps(out, indent=2) + "\n", ""
    from nr_run.lab.twin.sonic import show_ops

    text = show_ops.vtysh_text(dev, command)
    if text is not None:
        return text
    return 1, "", f"% Unknown command: {command}\n"


def _route_lookup(dev: SonicDevice, target: str) -> Route | None:
    """The route FRR shows for `show ip route <target>`: the prefix itself, or an address' longest match."""
    try:
        net = ipaddress.ip_network(target, strict=False)
    except ValueError:
        return None
    if "/" in target:
        return dev.fabric.route_for(dev.node.name, str(net))
    return dev.fabric.lookup(dev.node.name, target)


def _frr_uptime(secs: int) -> str:
    h, rem = divmod(secs, 3600)
    return f"{h:02d}:{rem // 60:02d}:{rem % 60:02d}" if h < 24 else f"{h // 24}d{h % 24:02d}h{rem // 60:02d}m"


def pfcwd(dev: SonicDevice, args: list[str]) -> Result:
    words = [a for a in args if not a.startswith("-")]
    db = dev.running
    qm = db.get("PORT_QOS_MAP", {})
    wd = db.get("PFC_WD", {})
    if words[:2] == ["show", "config"]:
        poll = wd.get("GLOBAL", {}).get("POLL_INTERVAL")
        head = f"Changed polling interval to {poll}ms\n" if poll else ""
        rows, skipped = [], []
        for p in _ports(dev):
            if not qm.get(p, {}).get("pfc_enable"):
                skipped.append(f"SKIPPED: PFC is not enabled on port: {p}\n")
            elif p in wd:
                f = wd[p]
                rows.append([p, f.get("action", "drop"), f.get("detection_time", ""), f.get("restoration_time", ""),
                             f.get("pfc_stat_history", "disable")])
        return 0, head + table(["PORT", "ACTION", "DETECTION TIME", "RESTORATION TIME", "HISTORY"], rows, 0) \
            + "".join(skipped), ""
    if words[:2] == ["show", "stats"]:
        rows, storm = [], False
        for p in _ports(dev):
            for prio, s in dev.fabric.watchdog_status(dev.node.name, p).items():
                if not s["enabled"]:
                    continue
                storm = storm or bool(s["stormDetected"])
                drops = int(s["droppedPackets"])
                rows.append([f"{p}:{prio}", "stormed" if s["stormDetected"] else "operational",
                             f"{s['stormCount']}/{s['restoredCount']}", f"0/{drops}", f"0/{drops}", f"0/{drops}", f"0/{drops}"])
        out = table(["QUEUE", "STATUS", "STORM DETECTED/RESTORED", "TX OK/DROP", "RX OK/DROP", "TX LAST OK/DROP",
                     "RX LAST OK/DROP"], rows, 0)
        return (1 if storm and "--check-storm" in args else 0), out, ""
    return 2, "", "Usage: pfcwd [OPTIONS] COMMAND [ARGS]...\n"


def ecnconfig(dev: SonicDevice, args: list[str]) -> Result:
    if "-l" in args:
        out = []
        for name, f in sorted(dev.running.get("WRED_PROFILE", {}).items()):
            out.append(f"Profile: {name}\n" + _kv(f))
        return 0, "".join(out), ""
    if "-q" in args:
        i = args.index("-q")
        q = args[i + 1] if i + 1 < len(args) else ""
        on = any(k.endswith(f"|{q}") and "wred_profile" in f for k, f in dev.running.get("QUEUE", {}).items())
        return 0, f"ECN status:\nqueue {q}: {'on' if on else 'off'}\n", ""
    return 2, "", "Usage: ecnconfig [-l] [-q QUEUE]\n"
