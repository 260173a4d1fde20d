"""A twin GPU server: the NICs containerlab cables to it, set up by the node's `exec` commands; Linux tools' output.

Servers are not configured by nr-run: whatever their topology `exec` lines do at boot (`ip addr add`, `ip link set
... mtu`, per-NIC routing tables with `ip route ... table T` + `ip rule add from SRC lookup T`, `dcb pfc set`,
`dcb app add`, `dcb apptrust set`) is their state, and the same commands typed over SSH change it.
"""

from __future__ import annotations

import ipaddress
import json
import time
import zlib
from typing import Any

from nr_run.lab.twin.fabric import Fabric
from nr_run.lab.twin.linux import shell
from nr_run.lab.twin.linux.ping import ping
from nr_run.lab.twin.state import DeviceState, IfState, StaticRoute
from nr_run.lab.twin.topology import Node

Result = tuple[int, str, str]
ROCE_MTU = 4096          # RDMA path MTU; the IP packet is ~4096 + 58 bytes of RoCEv2 headers
VETH_MTU = 9500          # containerlab creates its veth links with this MTU


class LinuxHost:
    user, password = "root", "root"

    def __init__(self, node: Node, fabric: Fabric, listeners: dict[str, float]) -> None:
        self.node, self.fabric, self.listeners = node, fabric, listeners
        self.name = node.name
        self.files: dict[str, str] = {}
        self.state = DeviceState(hostname=node.name, ip_routing=False, system_mac=_mac(node.name, 0))
        for port in node.ports:
            self.state.interfaces[port] = IfState(name=port, mtu=VETH_MTU)
        self.tables: dict[str, list[tuple[str, str]]] = {}     # routing table -> (prefix, gateway)
        self.rules: list[tuple[str, str]] = []                  # `ip rule from SRC lookup TABLE`
        self.boot_errors: list[str] = []
        for command in node.exec:
            rc, _, err = shell.execute(self, command)
            if rc:
                self.boot_errors.append(f"{command}: {err.strip()}")
        self.publish()

    def publish(self) -> None:
        self.fabric.set_state(self.name, self.state)

    def prompt(self) -> str:
        # bash's \$: `#` for root only. A `#` for another user reads as a sudo shell to clients such as
        # netmiko, which then send `exit` at logout and wait for a `$` prompt that never comes.
        return f"{self.user}@{self.name}:~{'#' if self.user == 'root' else '$'} "

    def accepts(self, username: str, password: str) -> bool:
        return (username, password) == (self.user, self.password)

    def reachable(self) -> bool:
        return self.fabric.reachable(self.name)

    def nics(self) -> list[str]:
        """RoCE NICs: the cabled data ports, in port order (mlx5_0 is the first)."""
        return list(self.node.ports)

    def nic_by_rdma(self, rdma: str) -> str | None:
        nics = self.nics()
        idx = rdma.removeprefix("mlx5_")
        return nics[int(idx)] if idx.isdigit() and int(idx) < len(nics) else None

    def run(self, argv: list[str], stdin: str | None) -> Result:
        name = argv[0].rsplit("/", 1)[-1]
        handler = {"ip": self._ip, "ethtool": self._ethtool, "ping": self._ping, "dcb": self._dcb, "rdma": self._rdma,
                   "ib_write_bw": self._ib_write_bw, "hostname": lambda a: (0, self.name + "\n", "")}.get(name)
        if handler is None:
            return 127, "", f"bash: {argv[0]}: command not found\n"
        return handler(argv[1:])

    # ---------------------------------------------------------------- ip
    def _links(self) -> list[dict[str, Any]]:
        out = [{"ifindex": 1, "ifname": "lo", "flags": ["LOOPBACK", "UP", "LOWER_UP"], "mtu": 65536,
                "operstate": "UNKNOWN", "link_type": "loopback", "address": "00:00:00:00:00:00"},
               {"ifindex": 2, "ifname": "eth0", "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "mtu": 1500,
                "operstate": "UP", "link_type": "ether", "address": _mac(self.name, 0)}]
        for i, (n, ifs) in enumerate(sorted(self.state.interfaces.items()), start=3):
            up = ifs.admin_up and self.fabric.link_up(self.name, n)
            flags = ["BROADCAST", "MULTICAST"] + (["UP"] if ifs.admin_up else []) + (["LOWER_UP"] if up else [])
            out.append({"ifindex": i, "ifname": n, "flags": flags, "mtu": ifs.mtu,
                        "operstate": "UP" if up else "DOWN", "link_type": "ether", "address": _mac(self.name, i)})
        return out

    def _ip(self, args: list[str]) -> Result:
        words = [a for a in args if a not in ("-j", "-json", "-p", "-d", "-4")]
        if words[:2] in (["link", "set"], ["l", "set"]):
            return self._ip_link_set(words[2:])
        if words[:1] in (["addr"], ["address"], ["a"]) and words[1:2] in (["add"], ["replace"]):
            return self._ip_addr_add(words[2:])
        if words[:1] in (["route"], ["r"]) and words[1:2] in (["add"], ["replace"]):
            return self._ip_route_add(words[2:])
        if words[:1] == ["rule"] and words[1:2] == ["add"]:
            opts = _pairs(words[2:])
            table = opts.get("lookup") or opts.get("table")
            if not opts.get("from") or not table:
                return 2, "", "Error: twin models `ip rule add from SRC lookup TABLE` only.\n"
            self.rules.append((opts["from"].split("/")[0], table))
            self._routes_changed()
            return 0, "", ""
        if "-j" not in args and "-json" not in args:
            return 1, "", "twin: only `ip -j` output is modelled\n"
        links = self._links()
        if words[:1] in (["link"], ["l"]):
            return 0, json.dumps(links) + "\n", ""
        if words[:1] in (["addr"], ["address"], ["a"]):
            mgmt_len = int(self.node.mgmt_prefix.partition("/")[2] or 24)
            addrs: dict[str, tuple[str | None, int]] = {"lo": ("127.0.0.1", 8),
                                                         "eth0": (self.node.mgmt_address, mgmt_len)}
            for n, ifs in self.state.interfaces.items():
                if ifs.ipv4:
                    nic_ip, _, nic_plen = ifs.ipv4.partition("/")
                    addrs[n] = (nic_ip, int(nic_plen))
            for link in links:
                ip, plen = addrs.get(link["ifname"], (None, 0))
                link["addr_info"] = [{"family": "inet", "local": ip, "prefixlen": plen, "scope": "global"
                                      if link["ifname"] != "lo" else "host", "label": link["ifname"]}] if ip else []
            return 0, json.dumps(links) + "\n", ""
        return 1, "", "Object \"" + (words[0] if words else "") + "\" is unknown, try \"ip help\".\n"

    def _ip_link_set(self, words: list[str]) -> Result:
        words = words[1:] if words[:1] == ["dev"] else words
        if not words or words[0] not in self.state.interfaces:
            return 1, "", f"Cannot find device \"{words[0] if words else ''}\"\n"
        ifs, rest = self.state.interfaces[words[0]], words[1:]
        for i, word in enumerate(rest):
            if word in ("up", "down"):
                ifs.admin_up = word == "up"
            elif word == "mtu" and i + 1 < len(rest) and rest[i + 1].isdigit():
                ifs.mtu = int(rest[i + 1])
        self.publish()
        return 0, "", ""

    def _ip_addr_add(self, words: list[str]) -> Result:
        opts = _pairs(words[1:])
        dev = opts.get("dev")
        if not words or dev not in self.state.interfaces:
            return 1, "", f"Cannot find device \"{dev or ''}\"\n"
        try:
            address = ipaddress.ip_interface(words[0])
        except ValueError:
            return 1, "", f"Error: inet prefix is expected rather than \"{words[0]}\".\n"
        if address.network.prefixlen == 32 and "/" not in words[0]:
            return 1, "", "Error: a prefix length is expected.\n"
        self.state.interfaces[dev].ipv4 = str(address)
        self.publish()
        return 0, "", ""

    def _ip_route_add(self, words: list[str]) -> Result:
        if not words:
            return 1, "", "Error: a destination is expected.\n"
        opts = _pairs(words[1:])
        if "via" not in opts:
            return 2, "", "Error: twin models `ip route add PREFIX via GATEWAY [dev IF] [table T]` only.\n"
        try:
            prefix = str(ipaddress.ip_network("0.0.0.0/0" if words[0] == "default" else words[0], strict=False))
            ipaddress.ip_address(opts["via"])
        except ValueError:
            return 1, "", f"Error: inet prefix is expected rather than \"{words[0]}\".\n"
        self.tables.setdefault(opts.get("table", "main"), []).append((prefix, opts["via"]))
        self._routes_changed()
        return 0, "", ""

    def _routes_changed(self) -> None:
        routes = [StaticRoute(p, gw) for p, gw in self.tables.get("main", [])]
        # `ip rule from <nic> lookup <rail table>`: traffic sourced from a NIC leaves through that NIC's own
        # RTSW, whatever rail it targets
        for src, table in self.rules:
            routes += [StaticRoute(p, gw, source=src) for p, gw in self.tables.get(table, [])]
        self.state.static_routes = routes
        self.publish()

    def _ethtool(self, args: list[str]) -> Result:
        if args[:1] == ["-s"] and len(args) > 1 and args[1] in self.state.interfaces:
            opts = _pairs(args[2:])
            if str(opts.get("speed", "")).isdigit():
                self.state.interfaces[args[1]].speed_mbps = int(opts["speed"])
                self.publish()
            return 0, "", ""
        return 1, "", "twin: only `ethtool -s DEV speed N` is modelled\n"

    # ---------------------------------------------------------------- ping
    def _ping(self, args: list[str]) -> Result:
        nic_addr = {n: ifs.ipv4.split("/")[0] for n, ifs in self.state.interfaces.items() if ifs.ipv4}
        return ping(self.fabric, self.name, args, nic_addr)

    # ---------------------------------------------------------------- dcb (iproute2)
    def _dcb(self, args: list[str]) -> Result:
        words = [a for a in args if a not in ("-j", "--json", "-p")]
        if len(words) < 4 or words[2] != "dev" or words[3] not in self.state.interfaces:
            return 1, "", "Error: device not found or bad arguments\n"
        obj, verb, ifs = words[0], words[1], self.state.interfaces[words[3]]
        if obj == "pfc" and verb == "show":
            doc = {"pfc_cap": 8, "macsec_bypass": False, "delay": 0,
                   "prio_pfc": [{"prio": p, "enabled": p in ifs.pfc_priorities} for p in range(8)]}
            return 0, json.dumps(doc) + "\n", ""
        if obj == "pfc" and verb == "set" and "prio-pfc" in words:
            for item in words[words.index("prio-pfc") + 1:]:
                prio, _, onoff = item.partition(":")
                if prio.isdigit():
                    (ifs.pfc_priorities.add if onoff == "on" else ifs.pfc_priorities.discard)(int(prio))
            ifs.pfc_enabled = bool(ifs.pfc_priorities)
            self.publish()
            return 0, "", ""
        if obj == "app" and verb in ("add", "replace") and "dscp-prio" in words:
            for item in words[words.index("dscp-prio") + 1:]:
                dscp, _, prio = item.partition(":")
                if dscp.isdigit() and prio.isdigit():
                    self.state.qos.dscp_to_tc[int(dscp)] = int(prio)
            self.publish()
            return 0, "", ""
        if obj == "apptrust" and verb == "set" and "order" in words:
            ifs.trust_dscp = "dscp" in words[words.index("order") + 1:]
            self.publish()
            return 0, "", ""
        if obj == "app" and verb == "show":
            pairs = sorted(self.state.qos.dscp_to_tc.items()) if ifs.trust_dscp else []
            return 0, json.dumps({"dscp_prio": [[d, p] for d, p in pairs]}) + "\n", ""
        return 1, "", f"Error: unsupported dcb command {' '.join(words[:2])}\n"

    # ---------------------------------------------------------------- rdma / perftest
    def _rdma(self, args: list[str]) -> Result:
        if args[:2] != ["link", "show"] and args[:1] != ["link"]:
            return 1, "", "twin: only `rdma link show` is modelled\n"
        lines = []
        for i, nic in enumerate(self.nics()):
            up = self.fabric.link_up(self.name, nic)
            lines.append(f"link mlx5_{i}/1 state {'ACTIVE' if up else 'DOWN'} physical_state "
                         f"{'LINK_UP' if up else 'DISABLED'} netdev {nic}")
        return 0, "\n".join(lines) + "\n", ""

    def _ib_write_bw(self, args: list[str]) -> Result:
        dev, dst, it = "mlx5_0", None, iter(args)
        for a in it:
            if a in ("-d", "--ib-dev"):
                dev = next(it, dev)
            elif a in ("-x", "--gid-index", "-s", "--size", "-n", "--iters", "-D", "--duration", "-q", "-p",
                       "--port", "-m", "--mtu", "-R") and a != "-R":
                next(it, None)
            elif not a.startswith("-"):
                dst = a
        nic = self.nic_by_rdma(dev)
        if nic is None:
            return 1, "", f" IB device {dev} not found\n Unable to find the Infiniband/RoCE device\n"
        ifs = self.state.interfaces[nic]
        local_ip = ifs.ipv4.split("/")[0] if ifs.ipv4 else ""
        if dst is None:      # server side: listen for one client (for 60 s)
            self.listeners[local_ip] = time.time() + 60
            return 0, _banner(dev) + "\n************************************\n* Waiting for client to connect... *\n" \
                "************************************\n", ""
        if self.listeners.get(dst, 0) < time.time():
            return 1, _banner(dev), f" Couldn't connect to {dst}:18515\nUnable to open file descriptor for socket connection Unable to init the socket connection\n"
        self.listeners.pop(dst, None)
        res = self.fabric.ping(self.name, dst, size=ROCE_MTU + 30, df=True, count=1, src_ip=local_ip, tos=104)
        if not res.received:
            return 1, _banner(dev), f"Failed to modify QP to RTR\n Unable to Connect the HCA's through the link ({res.error})\n"
        gbps = self._path_rate(res.path, nic, dst)
        # the test's 5000 x 64 KiB writes cross every cable of the path as RoCE frames (RoCEv2 headers + FCS: 58 B)
        hops = _path_ports(self.fabric, res.path, dst)
        self.fabric.record_traffic([((a, pa), (b, pb), ROCE_MTU + 58) for a, pa, b, pb in hops],
                                   5000 * 65536 // ROCE_MTU)
        out = (_banner(dev) + f" local address: LID 0000 QPN 0x{zlib.crc32(local_ip.encode()) & 0xffff:04x} PSN 0x1a2b3c\n"
               f" GID: {_gid(local_ip)}\n remote address: LID 0000 QPN 0x{zlib.crc32(dst.encode()) & 0xffff:04x} "
               f"PSN 0x4d5e6f\n GID: {_gid(dst)}\n" + "-" * 87 + "\n"
               " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
               f" 65536      5000             {gbps * 1.002:.2f}             {gbps:.2f} \t\t   {gbps * 1e3 / 8 / 65536:.6f}\n"
               + "-" * 87 + "\n")
        return 0, out, ""

    def _path_rate(self, path: list[str], nic: str, dst: str) -> float:
        """Near the slowest link's line rate on the path (the NIC links at its switch port's speed), unless PFC
        disagrees on a hop or the lossless queue drops on the way."""
        first = self.state.interfaces.get(nic)
        prio = min(first.pfc_priorities) if first and first.pfc_priorities else 3
        hops = _path_ports(self.fabric, path, dst)
        mismatch = drops = False
        rates = [first.speed_mbps] if first and first.speed_mbps else []
        for a, pa, b, pb in hops:
            sa, sb = self.fabric.state(a), self.fabric.state(b)
            ia = sa.interfaces.get(pa) if sa else None
            ib = sb.interfaces.get(pb) if sb else None
            rates += [i.speed_mbps for i in (ia, ib) if i and i.speed_mbps]
            if not ia or not ib or prio not in ia.pfc_priorities or prio not in ib.pfc_priorities:
                mismatch = True
            if prio in self.fabric.dropping_queues(a, pa) or prio in self.fabric.dropping_queues(b, pb):
                drops = True
        speed = min(rates or [DEFAULT_LINE_MBPS]) / 1000
        factor = 0.975
        if mismatch:
            factor *= 0.31      # pause frames ignored: drops, go-back-N retransmissions
        if drops:
            factor *= 0.55
        return speed * factor


DEFAULT_LINE_MBPS = 400_000     # a path whose ports all run at their native speed (none configured)


def _pairs(words: list[str]) -> dict[str, str]:
    """`dev eth1 table 101` -> {"dev": "eth1", "table": "101"}."""
    return {words[i]: words[i + 1] for i in range(0, len(words) - 1)}


def _path_ports(fabric: Fabric, path: list[str], dst: str) -> list[tuple[str, str, str, str]]:
    """(dev, port, next dev, its port) for each hop of a device path (one cable per device pair here)."""
    out = []
    for a, b in zip(path, path[1:], strict=False):
        node = fabric.topology.nodes[a]
        for port in node.ports:
            far = fabric.peer(a, port)
            if far and far[0] == b and fabric.link_up(a, port):
                out.append((a, port, far[0], far[1]))
                break
    return out


def _banner(dev: str) -> str:
    rule = "-" * 87 + "\n"
    return (rule + "                    RDMA_Write BW Test\n"
            f" Dual-port       : OFF\t\tDevice         : {dev}\n Number of qps   : 1\t\tTransport type : IB\n"
            " Connection type : RC\t\tUsing SRQ      : OFF\n PCIe relax order: ON\n TX depth        : 128\n"
            f" CQ Moderation   : 1\n Mtu             : {ROCE_MTU}[B]\n Link type       : Ethernet\n"
            " GID index       : 3\n Max inline data : 0[B]\n rdma_cm QPs\t : OFF\n Data ex. method : Ethernet\n" + rule)


def _gid(ip: str) -> str:
    return "00:00:00:00:00:00:00:00:00:00:255:255:" + ":".join(f"{int(o):02d}" for o in ip.split("."))


def _mac(name: str, idx: int) -> str:
    h = zlib.crc32(name.encode())
    return f"0c:42:a1:{h >> 8 & 0xff:02x}:{h & 0xff:02x}:{idx:02x}"
