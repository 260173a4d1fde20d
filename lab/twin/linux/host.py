"""A twin GPU server: RoCE NICs as its HostSpec says (servers are not configured by nr-run), Linux tools' output."""

from __future__ import annotations

import json
import time
import zlib
from typing import Any

from nr_run.lab.twin.fabric import Fabric
from nr_run.lab.twin.linux.ping import ping
from nr_run.lab.twin.state import DeviceState, IfState, StaticRoute
from nr_run.lab.twin.topology import HostSpec

Result = tuple[int, str, str]
ROCE_MTU = 4096          # RDMA path MTU; the IP packet is ~4096 + 58 bytes of RoCEv2 headers


def host_state(spec: HostSpec) -> DeviceState:
    """Initial server state: NIC /31s, MTU, PFC on the lossless priority, DSCP trust, per-rail routes."""
    st = DeviceState(hostname=spec.name, ip_routing=False)
    for nic in spec.nics:
        st.interfaces[nic.name] = IfState(name=nic.name, mtu=nic.mtu, ipv4=nic.address, speed_mbps=nic.speed_mbps,
                                          pfc_enabled=bool(nic.lossless_priorities),
                                          pfc_priorities=set(nic.lossless_priorities), trust_dscp=nic.trust == "dscp")
        # like `ip rule from <nic> lookup rail<N>` + `ip route <pool> via <rail gateway> table rail<N>`:
        # traffic sourced from a NIC leaves through that NIC's own RTSW, whatever rail it targets
        for prefix in nic.routes:
            st.static_routes.append(StaticRoute(prefix, nic.gateway, source=nic.ip))
    st.qos.dscp_to_tc = dict(spec.dscp_to_prio)
    return st


class LinuxHost:
    user, password = "root", "root"

    def __init__(self, spec: HostSpec, fabric: Fabric, listeners: dict[str, float]) -> None:
        self.spec, self.fabric, self.listeners = spec, fabric, listeners
        self.name = spec.name
        self.files: dict[str, str] = {}
        self.state = host_state(spec)
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

    def nic_by_rdma(self, rdma: str) -> str | None:
        nics = [n.name for n in self.spec.nics]
        idx = rdma.removeprefix("mlx5_")
        return nics[int(idx)] if idx.isdigit() and int(idx) < len(nics) else None

    def run(self, argv: list[str], stdin: str | None) -> Result:
        name = argv[0].rsplit("/", 1)[-1]
        handler = {"ip": self._ip, "ping": self._ping, "dcb": self._dcb, "rdma": self._rdma,
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
        words = [a for a in args if a not in ("-j", "-json", "-p", "-d")]
        if "-j" not in args and "-json" not in args:
            return 1, "", "twin: only `ip -j` output is modelled\n"
        links = self._links()
        if words[:1] in (["link"], ["l"]):
            return 0, json.dumps(links) + "\n", ""
        if words[:1] in (["addr"], ["address"], ["a"]):
            addrs: dict[str, tuple[str | None, int]] = {"lo": ("127.0.0.1", 8), "eth0": (self.spec.mgmt_address, 24)}
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
        if obj == "app" and verb == "show":
            pairs = sorted(self.state.qos.dscp_to_tc.items()) if ifs.trust_dscp else []
            return 0, json.dumps({"dscp_prio": [[d, p] for d, p in pairs]}) + "\n", ""
        return 1, "", f"Error: unsupported dcb command {' '.join(words[:2])}\n"

    # ---------------------------------------------------------------- rdma / perftest
    def _rdma(self, args: list[str]) -> Result:
        if args[:2] != ["link", "show"] and args[:1] != ["link"]:
            return 1, "", "twin: only `rdma link show` is modelled\n"
        lines = []
        for i, nic in enumerate(self.spec.nics):
            up = self.fabric.link_up(self.name, nic.name)
            lines.append(f"link mlx5_{i}/1 state {'ACTIVE' if up else 'DOWN'} physical_state "
                         f"{'LINK_UP' if up else 'DISABLED'} netdev {nic.name}")
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
        out = (_banner(dev) + f" local address: LID 0000 QPN 0x{zlib.crc32(local_ip.encode()) & 0xffff:04x} PSN 0x1a2b3c\n"
               f" GID: {_gid(local_ip)}\n remote address: LID 0000 QPN 0x{zlib.crc32(dst.encode()) & 0xffff:04x} "
               f"PSN 0x4d5e6f\n GID: {_gid(dst)}\n" + "-" * 87 + "\n"
               " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
               f" 65536      5000             {gbps * 1.002:.2f}             {gbps:.2f} \t\t   {gbps * 1e3 / 8 / 65536:.6f}\n"
               + "-" * 87 + "\n")
        return 0, out, ""

    def _path_rate(self, path: list[str], nic: str, dst: str) -> float:
        """Near line rate, unless PFC disagrees on a hop or the lossless queue drops on the way."""
        speed = min([self.state.interfaces[nic].speed_mbps or 400000] + [400000]) / 1000
        prio = 3 if not self.spec.nics else (self.spec.nics[0].lossless_priorities or (3,))[0]
        hops = _path_ports(self.fabric, path, dst)
        mismatch = drops = False
        for a, pa, b, pb in hops:
            sa, sb = self.fabric.state(a), self.fabric.state(b)
            ia = sa.interfaces.get(pa) if sa else None
            ib = sb.interfaces.get(pb) if sb else None
            if not ia or not ib or prio not in ia.pfc_priorities or prio not in ib.pfc_priorities:
                mismatch = True
            if self.fabric.queue_drops(a, pa).get(prio) or self.fabric.queue_drops(b, pb).get(prio):
                drops = True
        factor = 0.975
        if mismatch:
            factor *= 0.31      # pause frames ignored: drops, go-back-N retransmissions
        if drops:
            factor *= 0.55
        return speed * factor


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
