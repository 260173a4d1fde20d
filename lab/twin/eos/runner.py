"""Execute one eAPI runCmds request against an EosDevice, as the EOS CLI would."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from nr_run.lab.twin.eos import show, show_ops, show_routing, text
from nr_run.lab.twin.eos.config import CfgNode, ConfigError, ConfigTree
from nr_run.lab.twin.eos.device import _SESSION, CommandFailed, EosDevice


def _running_json(node: CfgNode) -> dict:
    cmds: dict = {}
    for c in node.children:
        cmds[c.line] = _running_json(c) if (c.children or c.mode) else None
    return {"cmds": cmds, "comments": []} if node.line else {"cmds": cmds, "header": []}


def _filter(text: str, pipe: str) -> str:
    """Output modifiers: include, exclude, begin, section (regex, like EOS)."""
    m = re.match(r"(include|exclude|begin|section|i|grep)\s+(.*)$", pipe.strip())
    if not m:
        raise CommandFailed([f"Invalid input (at token 0: '{pipe.strip()}')"])
    kind, pat = m.group(1), re.compile(m.group(2))
    lines = text.splitlines()
    if kind in ("include", "i", "grep"):
        out = [ln for ln in lines if pat.search(ln)]
    elif kind == "exclude":
        out = [ln for ln in lines if not pat.search(ln)]
    elif kind == "begin":
        idx = next((i for i, ln in enumerate(lines) if pat.search(ln)), len(lines))
        out = lines[idx:]
    else:
        out, keep = [], False
        for ln in lines:
            if not ln.startswith(" "):
                keep = bool(pat.search(ln))
            if keep and ln.strip() != "!":
                out.append(ln)
    return "\n".join(out) + ("\n" if out else "")


def _text_default(data: dict) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


# (pattern, json builder, text builder or None); the first match wins
ShowFn = Callable[[EosDevice, re.Match], dict]
_VRF = r"(?: vrf (?:all|default))?"
SHOWS: list[tuple[re.Pattern, ShowFn, Callable[[EosDevice, re.Match], str] | None]] = [
    # system and management plane (show_ops)
    (re.compile(r"show uptime$"), lambda d, m: show_ops.uptime(d), None),
    (re.compile(r"show reload cause( full)?$"), lambda d, m: show_ops.reload_cause(d),
     lambda d, m: text.reload_cause(d)),
    (re.compile(r"show system coredump$"), lambda d, m: show_ops.coredump(d), None),
    (re.compile(r"show agent logs crash$"), lambda d, m: {}, lambda d, m: ""),
    (re.compile(r"show processes top once$"), lambda d, m: show_ops.processes_top(d),
     lambda d, m: show_ops.processes_top_text(d)),
    (re.compile(r"show maintenance$"), lambda d, m: show_ops.maintenance(d), None),
    (re.compile(r"show zerotouch$"), lambda d, m: show_ops.zerotouch(d), None),
    (re.compile(r"show running-config diffs$"), lambda d, m: {"output": show_ops.running_config_diffs(d)},
     lambda d, m: show_ops.running_config_diffs(d)),
    (re.compile(r"show extensions( detail)?$"), lambda d, m: show_ops.extensions(d), None),
    (re.compile(r"show boot-extensions$"), lambda d, m: show_ops.boot_extensions(d), None),
    (re.compile(r"show errdisable recovery$"), lambda d, m: {}, lambda d, m: show_ops.errdisable_recovery_text(d)),
    (re.compile(r"show management ssh$"), lambda d, m: {}, lambda d, m: show_ops.management_ssh_text(d)),
    (re.compile(r"show management api http-commands$"), lambda d, m: show_ops.management_api_http(d), None),
    (re.compile(r"show clock$"), lambda d, m: show_ops.clock(d), lambda d, m: text.clock_text(d)),
    (re.compile(r"show users accounts$"), lambda d, m: show_ops.users_accounts(d), None),
    (re.compile(r"show vrf$"), lambda d, m: show_ops.vrfs(d), lambda d, m: text.vrf(d)),
    (re.compile(r"show inventory$"), lambda d, m: show_ops.inventory(d), lambda d, m: text.inventory(d)),
    (re.compile(r"show snmp v2-mib chassis$"), lambda d, m: show_ops.snmp_chassis(d), None),
    (re.compile(r"show snmp v2-mib location$"), lambda d, m: show_ops.snmp_location(d), None),
    (re.compile(r"show snmp v2-mib contact$"), lambda d, m: show_ops.snmp_contact(d), None),
    (re.compile(r"show system environment cooling$"), lambda d, m: show_ops.environment_cooling(d), None),
    (re.compile(r"show system environment temperature$"), lambda d, m: show_ops.environment_temperature(d), None),
    (re.compile(r"show system environment power$"), lambda d, m: show_ops.environment_power(d), None),
    (re.compile(r"show mac address-table$"), lambda d, m: show_ops.mac_address_table(d), None),
    (re.compile(r"show (?:arp|ip arp)" + _VRF + "$"), lambda d, m: show_ops.arp(d), lambda d, m: text.arp(d)),
    # interfaces
    (re.compile(r"show interfaces transceiver$"), lambda d, m: show_ops.transceivers(d), None),
    (re.compile(r"show interfaces counters errors$"), lambda d, m: show_ops.counters_errors(d), None),
    (re.compile(r"show interfaces counters discards$"), lambda d, m: show_ops.counters_discards(d), None),
    (re.compile(r"show interfaces counters rates$"), lambda d, m: show_ops.counters_rates(d), None),
    (re.compile(r"show interfaces status errdisabled$"), lambda d, m: show_ops.errdisabled(d), None),
    (re.compile(r"show interfaces description$"), lambda d, m: show_ops.interfaces_description(d),
     lambda d, m: text.interfaces_description(d)),
    (re.compile(r"show lacp counters all-ports$"), lambda d, m: show_ops.lacp_counters(d), None),
    (re.compile(r"show ip interface brief$"), lambda d, m: show_ops.ip_interface_brief(d),
     lambda d, m: text.ip_interface_brief(d)),
    (re.compile(r"show ip interface( (\S+))?$"), lambda d, m: show_ops.ip_interface(d, m.group(2)), None),
    # routing (show_routing)
    (re.compile(r"show ip route summary$"), lambda d, m: show_routing.route_summary(d), None),
    (re.compile(r"show ip route" + _VRF + r" (connected|static|bgp)$"),
     lambda d, m: show_routing.routes_of(d, m.group(1)), None),
    (re.compile(r"show ip route vrf all summary$"), lambda d, m: show_routing.route_summary_all(d), None),
    (re.compile(r"show ip route vrf (\S+) (\d[\d./]*)( longer-prefixes)?( (?:connected|static|bgp))?( detail)?$"),
     lambda d, m: show_routing.route_lookup(d, m.group(1), m.group(2), bool(m.group(3))), None),
    (re.compile(r"show ip route (\d[\d./]*)( longer-prefixes)?( detail)?$"),
     lambda d, m: show_routing.route_lookup(d, "default", m.group(1), bool(m.group(2))), None),
    (re.compile(r"show ip bgp( (\d[\d./]*))?( longer-prefixes)?" + _VRF + "( detail)?$"),
     lambda d, m: show_routing.ip_bgp(d, m.group(2), bool(m.group(3))), None),
    (re.compile(r"show bfd peers( detail)?" + _VRF + "$"), lambda d, m: show_routing.bfd_peers(d), None),
    (re.compile(r"show version( detail)?$"), lambda d, m: show.version(d), lambda d, m: text.version(d)),
    (re.compile(r"show hostname$"), lambda d, m: show.hostname(d),
     lambda d, m: f"Hostname: {d.state().hostname}\nFQDN:     {d.state().hostname}\n"),
    (re.compile(r"show interfaces status$"), lambda d, m: show.interfaces_status(d),
     lambda d, m: text.interfaces_status(d)),
    (re.compile(r"show interfaces counters queue( detail)?$"), lambda d, m: show.queue_counters(d), None),
    (re.compile(r"show interfaces( (\S+))?$"), lambda d, m: _one_if(show.interfaces(d), d, m.group(2)),
     lambda d, m: _interfaces_text(d, m.group(2))),
    (re.compile(r"show lldp neighbors detail$"), lambda d, m: show.lldp_neighbors_detail(d),
     lambda d, m: text.lldp_neighbors_detail(d)),
    (re.compile(r"show lldp neighbors$"), lambda d, m: show.lldp_neighbors(d), lambda d, m: text.lldp_neighbors(d)),
    (re.compile(r"show ip bgp summary( vrf (all|default))?$"), lambda d, m: show.ip_bgp_summary(d),
     lambda d, m: text.ip_bgp_summary(d)),
    (re.compile(r"show bgp ipv4 unicast summary( vrf (all|default))?$"), lambda d, m: show.ip_bgp_summary(d),
     lambda d, m: text.ip_bgp_summary(d)),
    (re.compile(r"show ipv6 bgp summary( vrf (all|default))?$"), lambda d, m: show.ipv6_bgp_summary(d), None),
    (re.compile(r"show (ip )?bgp neighbors( vrf (all|default))?$"), lambda d, m: show.ip_bgp_neighbors(d),
     lambda d, m: show_routing.bgp_neighbors_text(d)),
    (re.compile(r"show (?:ip )?bgp neighbors (\d[\d.]*)" + _VRF + "$"), lambda d, m: _one_peer(d, m.group(1)),
     lambda d, m: show_routing.bgp_neighbors_text(d, m.group(1))),
    (re.compile(r"show ipv6 bgp (peers|neighbors)( vrf (all|default))?$"), lambda d, m: show.ipv6_bgp_peers(d),
     lambda d, m: ""),
    (re.compile(r"show ipv6 interface( brief)?$"), lambda d, m: {"interfaces": {}}, None),
    (re.compile(r"show vlan$"), lambda d, m: show_ops.vlans(d), lambda d, m: text.vlans(d)),
    (re.compile(r"show ntp associations$"), lambda d, m: {"peers": {}}, lambda d, m: "NTP is disabled.\n"),
    (re.compile(r"show ntp status$"), lambda d, m: {"status": "disabled"}, lambda d, m: "NTP is disabled.\n"),
    (re.compile(r"show bgp summary( vrf (all|default))?$"), lambda d, m: show.bgp_summary(d), None),
    (re.compile(r"show ip route( vrf (all|default))?$"), lambda d, m: show.ip_route(d), lambda d, m: text.ip_route(d)),
    (re.compile(r"show priority-flow-control counters( detail)?$"), lambda d, m: show.pfc_counters(d), None),
    (re.compile(r"show priority-flow-control( interfaces (\S+)| status)?$"),
     lambda d, m: show.pfc(d, m.group(2)), lambda d, m: text.pfc(d, m.group(2))),
    (re.compile(r"show qos interfaces ecn counters queue$"), lambda d, m: show.ecn_counters(d), None),
    (re.compile(r"show queue-monitor length$"), lambda d, m: show.queue_monitor_length(d), None),
    (re.compile(r"show qos interfaces( (\S+))?$"), lambda d, m: show.qos_interfaces(d, m.group(2)),
     lambda d, m: text.qos_interfaces(d, m.group(2))),
    (re.compile(r"show configuration sessions( detail)?$"),
     lambda d, m: d.sessions_json(bool(m.group(1))), None),
    (re.compile(r"show running-config( all)?( sanitized)?$"), lambda d, m: _running_json(d.running.root),
     lambda d, m: _header(d, "show running-config") + _sanitize(d.render_running(), m.group(2))),
    (re.compile(r"show startup-config( sanitized)?$"), lambda d, m: {"output": _sanitize(d.startup, m.group(1))},
     lambda d, m: _header(d, "show startup-config") + _sanitize(d.startup, m.group(1))),
    (re.compile(r"show session-config named (\S+) diffs$"), lambda d, m: {"output": d.session_diff(m.group(1))},
     lambda d, m: d.session_diff(m.group(1))),
    (re.compile(r"show session-config named (\S+)( sanitized)?$"), lambda d, m: _session_json(d, m.group(1)),
     lambda d, m: _session_text(d, m.group(1))),
]


# what EOS masks in `sanitized` output: secrets, passwords, keys (the value after the keyword)
_SECRET = re.compile(r"(\b(?:secret|password|key)(?: sha512| 0| 5| 7| 8a)?) (\S+)")


def _sanitize(text: str, sanitized: str | None) -> str:
    return _SECRET.sub(r"\1 <removed>", text) if sanitized else text


def _header(dev: EosDevice, cmd: str) -> str:
    return f"! Command: {cmd}\n! device: {dev.state().hostname} (cEOSLab, EOS-4.32.1F)\n!\n"


def _session_tree(dev: EosDevice, name: str) -> ConfigTree:
    sess = dev.sessions.get(name)
    if sess is None:
        raise CommandFailed([f"Session {name} does not exist"], 1000, "could not run command")
    return sess.tree


def _session_json(dev: EosDevice, name: str) -> dict:
    return _running_json(_session_tree(dev, name).root)


def _session_text(dev: EosDevice, name: str) -> str:
    return _header(dev, f"show session-config named {name}") + _session_tree(dev, name).render()


def _interfaces_text(dev: EosDevice, arg: str | None) -> str:
    """`show interfaces [INTF]` in text: the same checks as the JSON form (an unknown interface is refused)."""
    only = _one_if(show.interfaces(dev), dev, arg)["interfaces"]
    return text.interfaces(dev, next(iter(only)) if arg else None)


def _one_if(data: dict, dev: EosDevice, arg: str | None) -> dict:
    if not arg:
        return data
    from nr_run.lab.twin.eos.config import _canon_ifname
    name = _canon_ifname(arg)
    if name not in data["interfaces"]:
        raise CommandFailed([f"Interface does not exist (at token 2: '{arg}')"])
    return {"interfaces": {name: data["interfaces"][name]}}


def _one_peer(dev: EosDevice, ip: str) -> dict:
    data = show.ip_bgp_neighbors(dev)
    for vrf in data["vrfs"].values():
        vrf["peerList"] = [p for p in vrf["peerList"] if p["peerAddress"] == ip]
    return data


def _bash(argv: list[str]) -> str:
    """`bash [timeout N] CMD`: the few read-only Linux commands monitoring tools run on a cEOS."""
    if argv[:1] == ["timeout"] and len(argv) > 2:
        argv = argv[2:]
    if argv == ["nproc"]:
        return "4\n"
    if argv[:1] == ["df"]:
        return ("Filesystem      Size  Used Avail Use% Mounted on\n"
                "overlay          98G   31G   63G  33% /\n"
                "tmpfs           3.9G  4.0K  3.9G   1% /dev/shm\n"
                "/dev/sda1        98G   31G   63G  33% /mnt/flash\n")
    raise CommandFailed([f"bash: {' '.join(argv)}: not available in the lab"], 1000, "could not run command")


class Request:
    """The CLI state of one runCmds request: exec, config (direct) or a config session."""

    def __init__(self, dev: EosDevice, fmt: str) -> None:
        self.dev = dev
        self.fmt = fmt
        self.tree: ConfigTree | None = None     # config target while in a config mode
        self.session: str | None = None
        self.direct = False

    def _out(self, data: dict | None = None, text: str = "") -> dict:
        if self.fmt == "text":
            return {"output": text}
        return data if data is not None else {}

    def run(self, cmd: str | dict) -> dict:
        if isinstance(cmd, dict):
            text = str(cmd.get("cmd", ""))
            if text.strip() in ("comment", "banner motd", "banner login") or text.startswith("protocol https"):
                return self._out()
        else:
            text = cmd
        line = " ".join(text.split())
        if self.tree is not None:
            return self._config_line(line)
        return self._exec(line)

    def finish(self) -> None:
        """End of request: a direct-config change is already live; leave any session pending."""
        if self.direct:
            self.dev._changed()

    # ---- exec mode -------------------------------------------------------------------------
    def _exec(self, line: str) -> dict:
        low = line.lower()
        if low in ("enable", "disable", "") or low.startswith("terminal "):
            return self._out()
        if low in ("configure", "configure terminal", "config", "conf t"):
            self.tree, self.direct = self.dev.running, True
            self.dev.running.reset_cursor()
            return self._out()
        m = _SESSION.match(line)
        if m:
            name, action = m.group(1), m.group(2)
            if action is None:
                sess = self.dev._open_session(name)
                self.tree, self.session = sess.tree, name
            elif action == "abort":
                self.dev.abort_session(name)
            else:
                timer = None
                if m.group(3) is not None:
                    timer = int(m.group(3)) * 3600 + int(m.group(4)) * 60 + int(m.group(5))
                self.dev.commit_session(name, timer)
            return self._out()
        m = re.match(r"copy (\S+) (\S+)$", line)
        if m:
            self.dev.copy(m.group(1), m.group(2))
            return self._out(text="Copy completed successfully.\n")
        m = re.match(r"configure replace (\S+)( force)?$", line)
        if m:
            self.dev.configure_replace(m.group(1))
            return self._out()
        if low in ("write memory", "write", "wr", "copy running-config startup-config"):
            text = self.dev.write_memory()
            return self._out({"messages": [text.strip()]}, text)
        if low == "clear queue-monitor length statistics":     # UNVERIFIED command name (LANZ)
            self.dev.fabric.clear_watermarks(self.dev.name, show.LANZ)
            return self._out()
        if low.startswith("bash "):
            text = _bash(line.split()[1:])
            return self._out({"messages": [text]}, text)
        if low.startswith("ping "):
            text = show.ping_text(self.dev, line.split()[1:])
            return self._out({"messages": [text]}, text)
        if low.startswith("show "):
            return self._show(line)
        raise CommandFailed([f"Invalid input (at token 0: '{line.split()[0]}')"])

    def _show(self, line: str) -> dict:
        cmd, _, pipe = line.partition("|")
        cmd = cmd.strip()
        if pipe.strip() == "json":
            self.fmt, pipe = "json", ""
        for pattern, jfn, tfn in SHOWS:
            m = pattern.match(cmd)
            if not m:
                continue
            if self.fmt == "json":
                if pipe:
                    raise CommandFailed([f"Command '{line}' cannot be converted to JSON"], 1003,
                                        "could not run command")
                return jfn(self.dev, m)
            text = tfn(self.dev, m) if tfn else _text_default(jfn(self.dev, m))
            return {"output": _filter(text, pipe) if pipe else text}
        bad = next((i for i, t in enumerate(cmd.split()) if i > 0), 1)
        raise CommandFailed([f"Invalid input (at token {bad}: '{cmd.split()[bad] if len(cmd.split()) > bad else ''}')"])

    # ---- config modes ------------------------------------------------------------------------
    def _config_line(self, line: str) -> dict:
        assert self.tree is not None
        low = line.lower()
        if low == "end":
            self.tree.reset_cursor()
            self.tree, self.session = None, None
            return self._out()
        if low.startswith("show ") or low.startswith("do "):
            return self._show(line[3:] if low.startswith("do ") else line)
        if low == "rollback clean-config":
            if self.session is None:
                raise CommandFailed(["Invalid input (at token 0: 'rollback')"])
            fresh = ConfigTree()
            self.tree.root.children = fresh.root.children
            self.tree.reset_cursor()
            return self._out()
        if self.session and low in ("commit", "abort"):
            name = self.session
            self.tree, self.session = None, None
            if low == "commit":
                self.dev.commit_session(name, None)
            else:
                self.dev.abort_session(name)
            return self._out()
        try:
            self.tree.apply(line)
        except ConfigError as e:
            raise CommandFailed([str(e)]) from None
        return self._out()


def run_request(dev: EosDevice, cmds: list, fmt: str) -> tuple[list[dict], CommandFailed | None, int]:
    """Run commands in order; returns (outputs, failure, index of the failed command)."""
    dev.tick()
    req = Request(dev, fmt)
    outputs: list[dict] = []
    try:
        for i, cmd in enumerate(cmds):
            try:
                outputs.append(req.run(cmd))
            except CommandFailed as e:
                return outputs, e, i
    finally:
        if req.tree is not None:
            req.tree.reset_cursor()
        req.finish()
    return outputs, None, -1
