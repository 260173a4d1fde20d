"""A twin GPU server: the NICs containerlab cables to it, provisioned by the node's `exec` commands; Linux tools.

At boot each cabled port is a RoCE NIC with the vendor's defaults (lab.twin.linux.nic: MTU 1500, trust PCP, PFC
off, DCQCN on every priority, ToS 0); the topology's `exec` lines (`ip addr add`, per-NIC routing tables with
`ip route ... table T` + `ip rule add from SRC lookup T`, or any NIC tool) run next, then the boot units
enabled on the server's disk (`systemctl enable`), as systemd runs them. Over SSH the same tools change the
NICs: iproute2 `ip`/`dcb`, sysfs and configfs writes (`echo V > /sys/...`, `mkdir` under rdma_cm), `sh`
scripts, `systemd-run --on-active` timers (fired by the service's clock) and `systemctl`.
Disk (/etc, /var) survives a reboot; /run and every NIC knob do not.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import json
import time
import zlib
from dataclasses import asdict
from typing import Any

from nr_run.lab.twin.fabric import Fabric
from nr_run.lab.twin.linux import shell
from nr_run.lab.twin.linux.nic import MAX_MTU, MIN_MTU, Nic
from nr_run.lab.twin.linux.ping import ping
from nr_run.lab.twin.state import DeviceState, IfState, StaticRoute
from nr_run.lab.twin.topology import Node

Result = tuple[int, str, str]
ROCE_MTU = 4096          # RDMA path MTU; the IP packet is ~4096 + 58 bytes of RoCEv2 headers
BOOT_MTU = 1500          # a ConnectX port's MTU at boot (containerlab's veth would carry 9500)
PERSISTENT = ("/etc/", "/var/", "/home/", "/root/")     # on disk: kept across a reboot
UNIT_DIR = "/etc/systemd/system/"
WANTS = UNIT_DIR + "multi-user.target.wants/"
RDMA_CM = "/sys/kernel/config/rdma_cm"


class LinuxHost:
    user, password = "root", "root"

    def __init__(self, node: Node, fabric: Fabric, listeners: dict[str, float],
                 disk: dict[str, str] | None = None, clock=time.time) -> None:
        self.node, self.fabric, self.listeners = node, fabric, listeners
        self.name = node.name
        self.clock = clock
        self.files: dict[str, str] = {p: t for p, t in (disk or {}).items() if p.startswith(PERSISTENT)}
        self.dirs: set[str] = set()
        self.timers: dict[str, tuple[float, str]] = {}          # transient timer unit -> (due, command line)
        self.state = DeviceState(hostname=node.name, ip_routing=False, system_mac=_mac(node.name, 0))
        driver = node.label("nic-driver", "mlx5")
        # "mlnx_qos": an older kernel without the DCB APP trust knob, MLNX_OFED's mlnx_qos installed instead
        self.legacy_trust = node.label("nic-tools") == "mlnx_qos"
        self.nic_state: dict[str, Nic] = {}
        for i, port in enumerate(node.ports):
            self.state.interfaces[port] = IfState(name=port, mtu=BOOT_MTU)
            self.nic_state[port] = Nic(port, f"mlx5_{i}", driver=driver)
        self.tables: dict[str, list[tuple[str, str]]] = {}     # routing table -> (prefix, gateway)
        self.rules: list[tuple[str, str]] = []                  # `ip rule from SRC lookup TABLE`
        self.boot_errors: list[str] = []
        for command in node.exec:
            rc, _, err = shell.execute(self, command)
            if rc:
                self.boot_errors.append(f"{command}: {err.strip()}")
        for unit in sorted(p for p in self.files if p.startswith(WANTS)):
            self._boot_unit(unit.removeprefix(WANTS))
        self._nics_changed()

    def snapshot(self) -> dict[str, Any]:
        """What the lab saves of a running server (a baseline): its files and every NIC knob."""
        return {"files": dict(sorted(self.files.items())), "dirs": sorted(self.dirs),
                "mtu": {n: ifs.mtu for n, ifs in sorted(self.state.interfaces.items())},
                "nics": {n: {**asdict(nic), "pfc": sorted(nic.pfc), "app": sorted(nic.app.items())}
                         for n, nic in sorted(self.nic_state.items())}}

    def restore(self, saved: dict[str, Any]) -> None:
        self.files = dict(saved.get("files", {}))
        self.dirs = set(saved.get("dirs", []))
        for name, mtu in saved.get("mtu", {}).items():
            if name in self.state.interfaces:
                self.state.interfaces[name].mtu = int(mtu)
        for name, doc in saved.get("nics", {}).items():
            if name in self.nic_state:
                self.nic_state[name] = Nic(**{**doc, "pfc": set(doc["pfc"]), "app": {int(d): int(p) for d, p in doc["app"]}})
        self._nics_changed()

    def _boot_unit(self, unit: str) -> None:
        """Run an enabled oneshot unit's ExecStart lines, as systemd does at boot."""
        text = self.files.get(UNIT_DIR + unit, "")
        for line in text.splitlines():
            if line.startswith("ExecStart="):
                rc, _, err = shell.execute(self, line.removeprefix("ExecStart="))
                if rc:
                    self.boot_errors.append(f"{unit}: {err.strip()}")

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
        self.fire_timers()
        name = argv[0].rsplit("/", 1)[-1]
        handler = {"ip": self._ip, "ethtool": self._ethtool, "ping": self._ping, "dcb": self._dcb, "rdma": self._rdma,
                   "ib_write_bw": self._ib_write_bw, "hostname": lambda a: (0, self.name + "\n", ""),
                   "sh": self._sh, "mkdir": self._mkdir, "cp": self._cp, "ls": self._ls, "test": self._test,
                   "grep": self._grep, "systemd-run": self._systemd_run, "systemctl": self._systemctl,
                   **({"mlnx_qos": self._mlnx_qos} if self.legacy_trust else {})}.get(name)
        if handler is None:
            return 127, "", f"bash: {argv[0]}: command not found\n"
        return handler(argv[1:])

    # ---------------------------------------------------------------- files: sysfs, configfs, disk
    def special_files(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for nic in self.nic_state.values():
            out.update(nic.files())
            out.update(self._hw_counters(nic))
        return out

    def _hw_counters(self, nic: Nic) -> dict[str, str]:
        """The RDMA device's congestion counters (mlx5 hw_counters): packets that arrived ECN-marked by the
        switch port facing the NIC, and the CNPs the NIC's notification point answered them with (none on a
        priority whose NP is off). A NIC of another driver has no such counters."""
        if nic.driver != "mlx5":
            return {}
        far = self.fabric.peer(self.name, nic.name)
        marks = {q: m for q, m in self.fabric.ecn_marks(*far).items() if m} if far else {}
        base = f"/sys/class/infiniband/{nic.rdma}/ports/{nic.port}/hw_counters"
        return {f"{base}/np_ecn_marked_roce_packets": f"{sum(marks.values())}\n",
                f"{base}/np_cnp_sent": f"{sum(m for q, m in marks.items() if nic.np_enable[q])}\n"}

    def special_write(self, path: str, text: str) -> tuple[int, str] | None:
        """A redirect into /sys: the NIC's knob takes it (or refuses); None for an ordinary file."""
        if not path.startswith("/sys/"):
            return None
        for nic in self.nic_state.values():
            done = nic.write(path, text)
            if done is not None:
                self._nics_changed()
                return done
        return 1, f"bash: {path}: No such file or directory\n"

    def _known_dirs(self) -> set[str]:
        paths = list(self.files) + list(self.special_files())
        out = set(self.dirs) | {RDMA_CM}
        for p in paths:
            parts = p.split("/")
            out |= {"/".join(parts[:i]) for i in range(2, len(parts))}
        return out

    def _sh(self, args: list[str]) -> Result:
        errexit = "-e" in args
        files = [a for a in args if not a.startswith("-")]
        if not files or files[0] not in self.files:
            return 127, "", f"sh: 0: cannot open {files[0] if files else ''}: No such file\n"
        rc, out, err = 0, [], []
        for line in self.files[files[0]].splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            rc, o, e = shell.execute(self, line)
            out.append(o)
            err.append(e)
            if rc and errexit:
                break
        return rc, "".join(out), "".join(err)

    def _mkdir(self, args: list[str]) -> Result:
        for path in (a.rstrip("/") for a in args if not a.startswith("-")):
            if path.startswith(RDMA_CM + "/"):
                dev = path[len(RDMA_CM) + 1:].split("/")[0]
                nic = next((n for n in self.nic_state.values() if n.rdma == dev), None)
                if nic is None or "/" in path[len(RDMA_CM) + 1:]:
                    return 1, "", f"mkdir: cannot create directory '{path}': No such device\n"
                nic.tos_group = True
            elif path.startswith("/sys/"):
                if path not in self._known_dirs():
                    return 1, "", f"mkdir: cannot create directory '{path}': Operation not permitted\n"
            else:
                self.dirs.add(path)
        return 0, "", ""

    def _cp(self, args: list[str]) -> Result:
        paths = [a for a in args if not a.startswith("-")]
        if len(paths) != 2 or paths[0] not in self.files:
            return 1, "", f"cp: cannot stat '{paths[0] if paths else ''}': No such file or directory\n"
        self.files[paths[1]] = self.files[paths[0]]
        return 0, "", ""

    def _ls(self, args: list[str]) -> Result:
        folder = next((a for a in args if not a.startswith("-")), "").rstrip("/")
        names = sorted({p[len(folder) + 1:].split("/")[0] for p in list(self.files) + list(self.special_files())
                        if p.startswith(folder + "/")})
        if not names and folder not in self._known_dirs():
            return 2, "", f"ls: cannot access '{folder}': No such file or directory\n"
        return 0, "".join(n + "\n" for n in names), ""

    def _test(self, args: list[str]) -> Result:
        if len(args) == 2 and args[0] == "-d":
            return (0 if args[1].rstrip("/") in self._known_dirs() else 1), "", ""
        if len(args) == 2 and args[0] in ("-f", "-e"):
            return (0 if args[1] in self.files or args[1] in self.special_files() else 1), "", ""
        return 2, "", "test: twin models -d/-f/-e PATH only\n"

    def _grep(self, args: list[str]) -> Result:
        words = [a for a in args if not a.startswith("-")]
        if "-r" not in args or len(words) != 2 or words[0] != ".":
            return 2, "", "grep: twin models `grep -r . DIR` only\n"
        folder = words[1].rstrip("/") + "/"
        found = sorted((p, t) for p, t in {**self.files, **self.special_files()}.items() if p.startswith(folder))
        if not found:
            return 2, "", f"grep: {words[1]}: No such file or directory\n"
        return 0, "".join(f"{p}:{line}\n" for p, t in found for line in t.splitlines() if line), ""

    # ---------------------------------------------------------------- systemd
    def _systemd_run(self, args: list[str]) -> Result:
        unit, delay, rest = None, None, list(args)
        while rest and rest[0].startswith("-"):
            opt = rest.pop(0)
            if opt.startswith("--unit="):
                unit = opt.split("=", 1)[1]
            elif opt.startswith("--on-active="):
                delay = _seconds(opt.split("=", 1)[1])
        if not rest:
            return 1, "", "systemd-run: Command line to execute required.\n"
        if delay is None:
            return 1, "", "systemd-run: twin models transient timers (--on-active=) only\n"
        unit = unit or f"run-u{len(self.timers) + 1}"
        if unit in self.timers:
            return 1, "", f"Failed to start transient timer unit: Unit {unit}.timer was already loaded.\n"
        self.timers[unit] = (self.clock() + delay, " ".join(rest))
        return 0, "", f"Running timer as unit: {unit}.timer\nWill run service as unit: {unit}.service\n"

    def fire_timers(self) -> None:
        now = self.clock()
        for unit, (due, command) in sorted(self.timers.items(), key=lambda kv: kv[1][0]):
            if due <= now:
                del self.timers[unit]
                shell.execute(self, command)

    def _systemctl(self, args: list[str]) -> Result:
        words = [a for a in args if not a.startswith("-")]
        verb, units = (words[0], words[1:]) if words else ("", [])
        if verb == "list-timers":
            patterns = [u.strip("'\"") for u in units]
            now = self.clock()
            rows = [f"{time.strftime('%a %Y-%m-%d %H:%M:%S UTC', time.gmtime(due))} {max(0, due - now):.0f}s left "
                    f"- - {u}.timer {u}.service\n" for u, (due, _) in sorted(self.timers.items())
                    if not patterns or any(fnmatch.fnmatch(u + ".timer", p) or fnmatch.fnmatch(u, p) for p in patterns)]
            return 0, "".join(rows), ""
        if verb == "stop":
            for u in units:
                self.timers.pop(u.removesuffix(".timer").removesuffix(".service"), None)
            return 0, "", ""
        if verb == "daemon-reload":
            return 0, "", ""
        if verb in ("enable", "disable", "is-enabled"):
            if not units:
                return 1, "", "Too few arguments.\n"
            unit = units[0]
            if UNIT_DIR + unit not in self.files:
                return 1, "", f"Failed to {verb} unit: Unit file {unit} does not exist.\n"
            if verb == "enable":
                self.files[WANTS + unit] = self.files[UNIT_DIR + unit]
                return 0, "", f"Created symlink {WANTS}{unit} -> {UNIT_DIR}{unit}.\n"
            if verb == "disable":
                self.files.pop(WANTS + unit, None)
                return 0, "", ""
            on = WANTS + unit in self.files
            return (0 if on else 1), ("enabled\n" if on else "disabled\n"), ""
        return 1, "", f"systemctl: twin does not model `{verb}`\n"

    def _nics_changed(self) -> None:
        """Mirror the NIC knobs into the interface state the fabric's traffic models read."""
        dscp: dict[int, int] = {}
        for name, nic in self.nic_state.items():
            ifs = self.state.interfaces[name]
            ifs.pfc_priorities = set(nic.pfc)
            ifs.pfc_enabled = bool(nic.pfc)
            ifs.trust_dscp = bool(nic.trust) and nic.trust[0] == "dscp"
            ifs.dcqcn = nic.dcqcn if nic.driver == "mlx5" else set()
            if ifs.trust_dscp:
                dscp.update(nic.app)
        self.state.qos.dscp_to_tc = dict(sorted(dscp.items()))
        self.publish()

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
            rest = [w for w in words[1:] if w not in ("show", "dev")]
            if rest:
                links = [link for link in links if link["ifname"] == rest[0]]
                if not links:
                    return 1, "", f"Device \"{rest[0]}\" does not exist.\n"
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
            elif word == "mtu":
                value = rest[i + 1] if i + 1 < len(rest) else ""
                if not value.isdigit():
                    return 1, "", f"Error: argument \"{value}\" is wrong: Invalid \"mtu\" value\n"
                if not MIN_MTU <= int(value) <= MAX_MTU:
                    return 2, "", f"Error: mtu {'greater than device maximum' if int(value) > MAX_MTU else 'less than device minimum'}.\n"
                ifs.mtu = int(value)
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
        if args[:1] == ["-S"] and len(args) > 1 and args[1] in self.state.interfaces:
            # mlx5 per-priority pause counters: frames this NIC received (it paused) and sent (it asked to pause)
            pfc = self.fabric.pfc_counters(self.name, args[1])
            lines = [f"     {d}_prio{p}_pause: {pfc[p][d]}\n" for p in range(8) for d in ("rx", "tx")]
            return 0, "NIC statistics:\n" + "".join(lines), ""
        if args[:1] == ["-s"] and len(args) > 1 and args[1] in self.state.interfaces:
            opts = _pairs(args[2:])
            if str(opts.get("speed", "")).isdigit():
                self.state.interfaces[args[1]].speed_mbps = int(opts["speed"])
                self.publish()
            return 0, "", ""
        return 1, "", "twin: only `ethtool -s DEV speed N` and `ethtool -S DEV` are modelled\n"

    # ---------------------------------------------------------------- ping
    def _ping(self, args: list[str]) -> Result:
        nic_addr = {n: ifs.ipv4.split("/")[0] for n, ifs in self.state.interfaces.items() if ifs.ipv4}
        return ping(self.fabric, self.name, args, nic_addr)

    # ---------------------------------------------------------------- dcb (iproute2)
    def _dcb(self, args: list[str]) -> Result:
        as_json = any(a in ("-j", "--json") for a in args)
        words = [a for a in args if a not in ("-j", "--json", "-p", "--pretty")]
        if len(words) < 4 or words[2] != "dev":
            return 1, "", "Usage: dcb [ OPTIONS ] OBJECT { COMMAND | help }\n"
        obj, verb, dev = words[0], words[1], words[3]
        nic = self.nic_state.get(dev)
        if nic is None:
            return 1, "", f"Error: Device \"{dev}\" does not exist.\n"
        rest = words[4:]
        if obj == "pfc" and verb == "show":
            doc = {"pfc_cap": 8, "macsec_bypass": False, "delay": 0,
                   "prio_pfc": [{"prio": p, "enabled": p in nic.pfc} for p in range(8)]}
            text = "pfc-cap 8 macsec-bypass off delay 0\nprio-pfc " + " ".join(
                f"{p}:{'on' if p in nic.pfc else 'off'}" for p in range(8)) + "\n"
            return 0, (json.dumps(doc) + "\n") if as_json else text, ""
        if obj == "pfc" and verb == "set":
            if rest[:1] != ["prio-pfc"]:
                return 1, "", "Error: twin models `dcb pfc set dev X prio-pfc P:on|off ...` only.\n"
            rc, err = nic.set_pfc(rest[1:])
            return self._changed(rc, err)
        if obj == "apptrust" and self.legacy_trust:
            return 255, "", 'Object "apptrust" is unknown, try "dcb help".\n'
        if obj == "apptrust" and verb == "show":
            return 0, (json.dumps({"order": nic.trust}) + "\n") if as_json else f"order {' '.join(nic.trust)}\n", ""
        if obj == "apptrust" and verb == "set":
            if rest[:1] != ["order"]:
                return 1, "", "Error: Expected \"order\".\n"
            rc, err = nic.set_trust(rest[1:])
            return self._changed(rc, err)
        if obj == "app" and verb == "show":
            pairs = [[d, p] for d, p in sorted(nic.app.items())]
            text = ("dscp-prio " + " ".join(f"{d}:{p}" for d, p in pairs) + "\n") if pairs else ""
            return 0, (json.dumps({"dscp_prio": pairs}) + "\n") if as_json else text, ""
        if obj == "app" and verb in ("add", "replace", "del", "flush"):
            if rest[:1] != ["dscp-prio"]:
                return 1, "", "Error: twin models the dscp-prio table only.\n"
            if verb == "flush":
                nic.app.clear()
                return self._changed(0, "")
            mapping, err = nic.app_pairs(rest[1:])
            if mapping is None:
                return 1, "", err
            for d, p in mapping.items():
                if verb == "del":
                    if nic.app.get(d) == p:
                        del nic.app[d]
                else:
                    nic.app[d] = p
            return self._changed(0, "")
        return 1, "", f"Error: unsupported dcb command {' '.join(words[:2])}\n"

    def _mlnx_qos(self, args: list[str]) -> Result:
        """MLNX_OFED's mlnx_qos: `-i DEV` shows the port's QoS, `--trust=pcp|dscp` sets the mlx5 trust state."""
        dev = args[args.index("-i") + 1] if "-i" in args and args.index("-i") + 1 < len(args) else None
        nic = self.nic_state.get(dev or "")
        if nic is None:
            return 1, "", f"Netlink error: device {dev} not found\n"
        trust = next((a.split("=", 1)[1] for a in args if a.startswith("--trust=")), None)
        if "--trust" in args and args.index("--trust") + 1 < len(args):
            trust = args[args.index("--trust") + 1]
        if trust is not None:
            if trust not in ("pcp", "dscp"):
                return 1, "", f"Invalid trust state {trust}: pcp or dscp\n"
            nic.trust = [trust]
            self._nics_changed()
        pfc = ",".join(str(int(p in nic.pfc)) for p in range(8))
        return 0, (f"DCBX mode: OS controlled\nPriority trust state: {nic.trust[0]}\n"
                   f"PFC configuration:\n\tpriority    0   1   2   3   4   5   6   7\n\tenabled     {pfc}\n"), ""

    def _changed(self, rc: int, err: str) -> Result:
        if rc == 0:
            self._nics_changed()
        return rc, "", err

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
        disagrees on a hop or the lossless queue drops on the way. A hop with PFC off at both ends and ECN
        marking at both (a lossy tier by design) loses nothing while it is not congested."""
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
            lossy_hop = (ia and ib and prio not in ia.pfc_priorities | ib.pfc_priorities and ia.ecn and ib.ecn)
            if not lossy_hop and (not ia or not ib or prio not in ia.pfc_priorities or prio not in ib.pfc_priorities):
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


def _seconds(text: str) -> float:
    """systemd time span: '300', '300s', '5min', '2m'."""
    for suffix, scale in (("min", 60), ("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)):
        if text.endswith(suffix) and text[: -len(suffix)].replace(".", "", 1).isdigit():
            return float(text[: -len(suffix)]) * scale
    return float(text) if text.replace(".", "", 1).isdigit() else 0.0
