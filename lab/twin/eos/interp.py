"""Interpret an EOS config tree into the platform-neutral DeviceState."""

from __future__ import annotations

import ipaddress
import re

from nr_run.lab.twin.eos.config import CfgNode, ConfigTree, routing_policy
from nr_run.lab.twin.state import (
    BgpConfig,
    BgpNeighborConfig,
    DeviceState,
    EcnQueue,
    IfState,
    StaticRoute,
    Watchdog,
)

_UNITS = {"bytes": 1, "kbytes": 1000, "mbytes": 1000_000, "segments": 208}


def _ms(text: str) -> int:
    try:
        return int(round(float(text) * 1000))
    except ValueError:
        return 0


def _apply_qos_lines(node: CfgNode, ifs: IfState, wd_default: Watchdog) -> None:
    """QoS lines shared by `qos profile` and `interface` (the interface overrides its profile)."""
    for line in node.lines():
        t = line.split()
        if line == "qos trust dscp":
            ifs.trust_dscp = True
        elif line in ("no qos trust", "qos trust cos"):
            ifs.trust_dscp = False
        elif line == "priority-flow-control on":
            ifs.pfc_enabled = True
        elif line == "no priority-flow-control":
            ifs.pfc_enabled = False
        elif t[:2] == ["priority-flow-control", "priority"] and len(t) == 4:
            (ifs.pfc_priorities.add if t[3] == "no-drop" else ifs.pfc_priorities.discard)(int(t[2]))
        elif line == "priority-flow-control pause watchdog":
            base = ifs.watchdog or wd_default
            ifs.watchdog = Watchdog(True, base.detection_ms, base.restoration_ms, base.poll_ms, base.action)
        elif t[:5] == ["priority-flow-control", "pause", "watchdog", "port", "action"] and len(t) > 5:
            ifs.watchdog = ifs.watchdog or Watchdog(False, wd_default.detection_ms, wd_default.restoration_ms,
                                                    wd_default.poll_ms, wd_default.action)
            ifs.watchdog.action = t[5]
        elif t[:5] == ["priority-flow-control", "pause", "watchdog", "port", "timer"]:
            ifs.watchdog = ifs.watchdog or Watchdog(False, wd_default.detection_ms, wd_default.restoration_ms,
                                                    wd_default.poll_ms, wd_default.action)
            for i, tok in enumerate(t[:-1]):
                if tok == "timeout":
                    ifs.watchdog.detection_ms = _ms(t[i + 1])
                elif tok == "recovery-time":
                    ifs.watchdog.restoration_ms = _ms(t[i + 1])
                elif tok == "polling-interval":
                    ifs.watchdog.poll_ms = _ms(t[i + 1])
    for q in node.children:
        if not q.line.startswith(("tx-queue", "uc-tx-queue")):
            continue
        queue = int(q.line.split()[1])
        for line in q.lines():
            t = line.split()
            if line == "priority strict":
                ifs.strict_queues.add(queue)
            elif line == "no priority":
                ifs.strict_queues.discard(queue)
            elif t[0] == "bandwidth" and t[-2:-1] == ["percent"]:
                ifs.queue_weights[queue] = int(t[-1])
            elif t[:3] == ["random-detect", "ecn", "minimum-threshold"] and len(t) >= 8:
                unit = _UNITS.get(t[4], 1)
                prob = int(t[9]) if len(t) > 9 and t[8] == "max-mark-probability" else 100
                ifs.ecn[queue] = EcnQueue(int(t[3]) * unit, int(t[6]) * _UNITS.get(t[7], 1), prob)


def interpret(tree: ConfigTree, default_hostname: str) -> DeviceState:
    root = tree.root
    st = DeviceState(hostname=default_hostname)
    st.ip_routing = root.has("ip routing")
    wd = st.qos.watchdog_default
    for line in root.lines():
        t = line.split()
        if t[0] == "hostname" and len(t) == 2:
            st.hostname = t[1]
        elif t[:3] == ["qos", "map", "dscp"] and "to" in t:
            j = t.index("to")
            for d in t[3:j]:
                st.qos.dscp_to_tc[int(d)] = int(t[j + 2])
        elif t[:3] == ["qos", "map", "traffic-class"] and "to" in t:
            j = t.index("to")
            for tc in t[3:j]:
                st.qos.tc_to_queue[int(tc)] = int(t[-1])
        elif t[:4] == ["priority-flow-control", "pause", "watchdog", "default"] and len(t) == 6:
            if t[4] == "timeout":
                wd.detection_ms = _ms(t[5])
            elif t[4] == "recovery-time":
                wd.restoration_ms = _ms(t[5])
            elif t[4] == "polling-interval":
                wd.poll_ms = _ms(t[5])
        elif t[:4] == ["priority-flow-control", "pause", "watchdog", "action"] and len(t) == 5:
            wd.action = t[4]
        elif t[:2] == ["ip", "route"] and len(t) >= 4 and t[2] != "vrf":   # another VRF's routes: not this table
            st.static_routes.append(StaticRoute(t[2], t[3]))
        elif t[:4] == ["qos", "random-detect", "ecn", "allow"]:
            st.qos.ecn_allow_non_ect = True
    profiles = {b.line.split()[2]: b for b in root.blocks("qos profile ")}
    for block in root.blocks("interface "):
        name = block.line.split()[1]
        lines = block.lines()
        ipv4 = next((ln.split()[2] for ln in lines if ln.startswith("ip address ") and "secondary" not in ln), None)
        if name.startswith("Loopback"):
            if ipv4 and "shutdown" not in lines:
                st.loopbacks[name] = ipv4
            continue
        if not name.startswith("Ethernet"):
            continue
        ifs = IfState(name=name, admin_up="shutdown" not in lines)
        ifs.mtu = next((int(ln.split()[1]) for ln in lines if ln.startswith("mtu ")), 1500)
        ifs.ipv4 = ipv4 if "no switchport" in lines else None   # a switchport ignores IP config
        ifs.description = next((ln.split(None, 1)[1] for ln in lines if ln.startswith("description ")), "")
        speed = next((ln.split(None, 1)[1] for ln in lines if ln.startswith("speed ")), "")
        ifs.speed_mbps, ifs.lanes = port_speed(speed)
        prof = next((ln.split()[1] for ln in lines if ln.startswith("service-profile ")), None)
        if prof:
            ifs.qos_profile = prof
            if prof in profiles:
                _apply_qos_lines(profiles[prof], ifs, wd)
        _apply_qos_lines(block, ifs, wd)
        st.interfaces[name] = ifs
    st.routing_policy = routing_policy(root)
    bgp_block = next(iter(root.blocks("router bgp ")), None)
    if bgp_block is not None:
        st.bgp = _bgp(bgp_block)
    return st


def _bgp(block: CfgNode) -> BgpConfig:
    bgp = BgpConfig(asn=int(block.line.split()[2]))
    default_activate = "no bgp default ipv4-unicast" not in block.lines()
    groups: dict[str, dict[str, str]] = {}
    per: dict[str, list[list[str]]] = {}
    lines = [ln.split() for ln in block.lines()]
    af = next((c for c in block.children if c.line.startswith("address-family ipv4")), None)
    af_lines = [ln.split() for ln in af.lines()] if af else []
    for t in lines + af_lines:
        if t[0] == "router-id":
            bgp.router_id = t[1]
        elif t[0] == "maximum-paths":
            bgp.maximum_paths = int(t[1])
            bgp.ecmp = int(t[3]) if len(t) > 3 else None
        elif t[:2] == ["redistribute", "connected"]:
            bgp.redistribute_connected = True
            bgp.redistribute_connected_route_map = t[3] if t[2:3] == ["route-map"] and len(t) > 3 else None
        elif t[0] == "network":
            bgp.networks.append(t[1])
        elif t[0] == "aggregate-address":
            bgp.aggregates[str(ipaddress.IPv4Network(t[1]))] = "summary-only" in t[2:]
        elif t[0] == "neighbor" and len(t) >= 3:
            if t[2:4] == ["peer", "group"] and len(t) == 4:
                groups.setdefault(t[1], {})
            else:
                per.setdefault(t[1], []).append(t)
    activated: dict[str, bool] = {}
    for t in af_lines:
        if t[0] == "neighbor" and len(t) == 3 and t[2] == "activate":
            activated[t[1]] = True
        elif t[:1] == ["no"] and len(t) == 4 and t[3] == "activate":
            activated[t[2]] = False

    def settings(lines_: list[list[str]]) -> dict[str, str]:
        out: dict[str, str] = {}
        for t in lines_:
            if t[2] == "remote-as":
                out["remote_as"] = t[3]
            elif t[2] == "description":
                out["description"] = " ".join(t[3:])
            elif t[2] == "shutdown":
                out["shutdown"] = "1"
            elif t[2] == "bfd":
                out["bfd"] = "1"
            elif t[2] == "timers" and len(t) >= 5 and t[3].isdigit() and t[4].isdigit():
                out["keepalive"], out["hold"] = t[3], t[4]
            elif t[2:4] == ["peer", "group"] and len(t) == 5:
                out["group"] = t[4]
            elif t[2] == "peer-group":
                out["group"] = t[3]
            elif t[2] == "route-map" and len(t) == 5 and t[4] == "in":
                out["route_map_in"] = t[3]
        return out

    for name in list(per):
        try:
            ipaddress.IPv4Address(name)
        except ValueError:
            groups[name] = settings(per.pop(name))
    for ip, lines_ in sorted(per.items()):
        own = settings(lines_)
        grp = groups.get(own.get("group", ""), {})
        merged = {**grp, **own}
        act = activated.get(ip, activated.get(own.get("group", ""), default_activate))
        bgp.neighbors[ip] = BgpNeighborConfig(
            remote_as=int(merged["remote_as"]) if merged.get("remote_as", "").isdigit() else None,
            description=merged.get("description", ""), shutdown=bool(merged.get("shutdown")),
            bfd=bool(merged.get("bfd")), peer_group=own.get("group"), activated=act,
            keepalive_s=int(merged.get("keepalive", 60)), hold_s=int(merged.get("hold", 180)),
            route_map_in=merged.get("route_map_in"))
    return bgp


_SPEED = re.compile(r"(?:forced )?(\d+)([gm])(?:-(\d+))?(?:full)?$", re.IGNORECASE)


def port_speed(text: str) -> tuple[int | None, int | None]:
    """(Mb/s, lanes) of a port's `speed` setting: "800g-8" -> (800000, 8), "100g-1" -> (100000, 1), "100gfull" ->
    (100000, None: the speed's usual lanes); auto or nothing -> (None, None): the port's native speed."""
    m = _SPEED.match(text.strip())
    if not m:
        return None, None
    mbps = int(m.group(1)) * (1000 if m.group(2).lower() == "g" else 1)
    return mbps, int(m.group(3)) if m.group(3) else None
