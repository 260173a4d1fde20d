"""EOS running-config as a mode-aware tree: parse lines as the CLI does, `no` forms, render text.

Lines arrive without indentation (as the NAPALM eos driver sends them); the current mode and its
parents decide where each line belongs, like the EOS CLI: a line not valid in the current mode is
tried in the parent modes. Known commands are validated (EOS-style errors); plausible commands
(known first keywords) are kept verbatim; anything else is rejected.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from nr_run.lab.twin.eos.syntax import ConfigError as ConfigError  # raised by ConfigTree.apply (via validate)
from nr_run.lab.twin.eos.syntax import bad, validate
from nr_run.lab.twin.policy import PrefixEntry, RouteMapEntry, RoutingPolicy

INDENT = "   "


@dataclass
class CfgNode:
    line: str
    mode: str = ""
    children: list[CfgNode] = field(default_factory=list)
    # what ConfigTree._store knows of `children` (a cache: rebuilt whenever the list is replaced or resized)
    plain: _StoreIndex | None = field(default=None, repr=False, compare=False)

    def child(self, line: str) -> CfgNode | None:
        return next((c for c in self.children if c.line == line), None)

    def blocks(self, prefix: str) -> list[CfgNode]:
        return [c for c in self.children if c.line.startswith(prefix)]

    def has(self, line: str) -> bool:
        return any(c.line == line for c in self.children)

    def lines(self) -> list[str]:
        return [c.line for c in self.children if not c.children and not c.mode]

    def copy(self) -> CfgNode:
        return CfgNode(self.line, self.mode, [c.copy() for c in self.children])


@dataclass
class _StoreIndex:
    """The setting keys of a node's children and where its sub-blocks start, for the list it was built from.

    A config of thousands of lines in one mode (a spine's BGP neighbours) would otherwise compare every new
    line with every line before it. The keys may hold more than the children's (a stale key only sends a line
    down the full comparison), never fewer while the list is the one indexed and has the indexed length."""

    children: list[CfgNode]
    length: int
    keys: set[tuple[str, ...]]
    first_block: int

    @classmethod
    def of(cls, node: CfgNode, mode: Mode) -> _StoreIndex:
        index = node.plain
        if index is not None and index.children is node.children and index.length == len(node.children):
            return index
        keys = set()
        first_block = len(node.children)
        for i, c in enumerate(node.children):
            ctoks = c.line.split()
            keys.add(_key(mode, ctoks[1:] if ctoks[:1] == ["no"] and len(ctoks) > 1 else ctoks))
            if first_block == len(node.children) and (c.children or c.mode):
                first_block = i
        node.plain = cls(node.children, len(node.children), keys, first_block)
        return node.plain


@dataclass(frozen=True)
class Mode:
    name: str
    enters: tuple[tuple[re.Pattern, str], ...] = ()      # (header pattern, child mode)
    keys: tuple[tuple[tuple[str, ...], int], ...] = ()  # (token prefix, key length; 0 = whole line)
    known: frozenset[str] = frozenset()                 # first keywords accepted verbatim
    displayed_no: frozenset[str] = frozenset()          # "no X" forms that show in running-config (regex)
    permissive: bool = False                            # accept anything the global mode does not
    rejects: re.Pattern | None = None                   # global commands that share a first keyword


def _re(p: str) -> re.Pattern:
    return re.compile(p + r"$", re.IGNORECASE)


TXQ = Mode("tx-queue", keys=((("priority",), 1), (("bandwidth", "guaranteed"), 2), (("bandwidth",), 1),
                             (("random-detect", "ecn", "minimum-threshold"), 3), (("shape",), 2)),
           known=frozenset({"priority", "bandwidth", "random-detect", "shape", "no", "default"}),
           displayed_no=frozenset({"priority"}))
_PFC_KEYS = ((("priority-flow-control", "on"), 1), (("priority-flow-control", "priority"), 3),
             (("priority-flow-control", "pause", "watchdog", "port", "action"), 5),
             (("priority-flow-control", "pause", "watchdog", "port", "timer"), 5))
INTERFACE = Mode(
    "interface",
    enters=((_re(r"tx-queue ([0-7])"), "tx-queue"), (_re(r"uc-tx-queue ([0-7])"), "tx-queue")),
    keys=((("description",), 1), (("mtu",), 1), (("ip", "address"), 2), (("shutdown",), 1),
          (("switchport",), 1), (("speed",), 1), (("service-profile",), 1), (("qos", "trust"), 2),
          (("load-interval",), 1), (("channel-group",), 1), (("bfd", "interval"), 2), (("qos", "dscp"), 2),
          (("qos", "cos"), 2), (("service-policy", "type", "qos", "input"), 4), (("error-correction",), 2))
    + _PFC_KEYS,
    known=frozenset({"description", "mtu", "ip", "ipv6", "shutdown", "switchport", "speed", "service-profile",
                     "qos", "priority-flow-control", "load-interval", "channel-group", "bfd", "lldp",
                     "service-policy", "error-correction", "logging", "dcbx", "flowcontrol", "storm-control",
                     "spanning-tree", "vrf", "arp", "mac", "link-debounce", "sflow", "ptp", "pim"}),
    displayed_no=frozenset({"switchport", "priority-flow-control$", "qos trust", "lldp transmit",
                            "lldp receive", "autostate"}),
    rejects=_re(r"(qos (map|profile|random-detect)|priority-flow-control (pause watchdog (default|action|hardware)|all)"
                r"|ip (routing|route|prefix-list|name-server|domain-name|access-list|community-list|as-path|virtual-router)"
                r"|spanning-tree mode|logging (buffered|host|console|trap|monitor|source-interface|format|vrf|level)"
                r"|lldp (timer|run|hold|management|tlv)|mac address-table|load-interval default|mtu default).*"),
)
QOS_PROFILE = Mode(
    "qos-profile",
    enters=((_re(r"tx-queue ([0-7])"), "tx-queue"), (_re(r"uc-tx-queue ([0-7])"), "tx-queue")),
    keys=((("qos", "trust"), 2), (("qos", "dscp"), 2), (("qos", "cos"), 2), (("shape",), 2),
          (("service-policy",), 4)) + _PFC_KEYS,
    known=frozenset({"qos", "priority-flow-control", "shape", "service-policy"}),
    displayed_no=frozenset({"qos trust", "priority-flow-control$"}),
    rejects=_re(r"(qos (map|profile|random-detect)|priority-flow-control (pause watchdog (default|action|hardware)|all)).*"),
)
BGP_AF = Mode("address-family", keys=((("neighbor",), 3), (("redistribute",), 2), (("network",), 2),
                                      (("maximum-paths",), 1), (("bgp",), 0)),
              known=frozenset({"neighbor", "redistribute", "network", "maximum-paths", "bgp", "graceful-restart"}),
              displayed_no=frozenset({r"neighbor \S+ activate"}))
ROUTER_BGP = Mode(
    "router-bgp",
    enters=((_re(r"address-family (ipv4|ipv6)( unicast)?"), "address-family"),
            (_re(r"vrf \S+"), "permissive")),
    keys=((("router-id",), 1), (("maximum-paths",), 1), (("neighbor",), 3), (("redistribute",), 2),
          (("network",), 2), (("timers", "bgp"), 2), (("distance", "bgp"), 2), (("bgp",), 0),
          (("graceful-restart",), 1)),
    known=frozenset({"router-id", "maximum-paths", "neighbor", "redistribute", "network", "timers",
                     "distance", "bgp", "graceful-restart", "shutdown", "update", "ucmp", "aggregate-address"}),
    displayed_no=frozenset({"bgp default ipv4-unicast", "bgp default ipv6-unicast"}),
)
MGMT_API = Mode(
    "mgmt-api",
    enters=((_re(r"vrf \S+"), "mgmt-vrf"),),
    keys=((("protocol",), 2), (("shutdown",), 1), (("cors",), 1)),
    known=frozenset({"protocol", "shutdown", "cors", "session"}),
    displayed_no=frozenset({"shutdown"}),
)
MGMT_SSH = Mode(
    "mgmt-ssh",
    enters=((_re(r"vrf \S+"), "mgmt-vrf"),),
    keys=((("shutdown",), 1), (("idle-timeout",), 1)),
    known=frozenset({"shutdown", "idle-timeout", "authentication", "cipher", "hostkey", "connection"}),
    displayed_no=frozenset({"shutdown"}),
)
MGMT_VRF = Mode("mgmt-vrf", keys=((("shutdown",), 1),), known=frozenset({"shutdown"}),
                displayed_no=frozenset({"shutdown"}))
PREFIX_LIST = Mode("prefix-list", keys=((("seq",), 2),), known=frozenset({"seq"}))
ROUTE_MAP = Mode("route-map", keys=((("match", "ip", "address", "prefix-list"), 4), (("set",), 2)),
                 known=frozenset({"match", "set", "description", "continue"}))
ROUTER_BFD = Mode("router-bfd", keys=((("interval",), 1), (("multihop", "interval"), 2)),
                  known=frozenset({"interval", "multihop", "slow-timer", "shutdown", "local-address"}))
PERMISSIVE = Mode("permissive", permissive=True)
GLOBAL = Mode(
    "global",
    enters=(
        (_re(r"interface ((?:Ethernet|Loopback|Management|Port-Channel|Vlan)\d+(?:/\d+)*)"), "interface"),
        (_re(r"router bgp (\d+(?:\.\d+)?)"), "router-bgp"),
        (_re(r"qos profile (\S+)"), "qos-profile"),
        (_re(r"management api http-commands"), "mgmt-api"),
        (_re(r"router bfd"), "router-bfd"),
        (_re(r"management ssh"), "mgmt-ssh"),
        (_re(r"management (api \S+|console|security|cvx|telnet|defaults|accounts)"), "permissive"),
        (_re(r"vrf instance \S+"), "permissive"),
        (_re(r"route-map \S+ (permit|deny) \d+"), "route-map"),
        (_re(r"ip access-list \S+"), "permissive"),
        (_re(r"ip prefix-list \S+"), "prefix-list"),
        (_re(r"vlan [\d,-]+"), "permissive"),
        (_re(r"daemon \S+"), "permissive"),
        (_re(r"policy-map type \S+ \S+"), "permissive"),
        (_re(r"class-map type \S+ \S+"), "permissive"),
        (_re(r"aaa authorization .*"), ""),
        (_re(r"router (ospf \d+|multicast|pim.*|general)"), "permissive"),
        (_re(r"monitor \S+.*"), "permissive"),
        (_re(r"event-handler \S+"), "permissive"),
        (_re(r"queue-monitor length"), "permissive"),
        (_re(r"hardware counter feature .*"), ""),
    ),
    keys=((("hostname",), 1), (("qos", "map", "dscp"), -1), (("qos", "map", "traffic-class"), -1),
          (("priority-flow-control", "pause", "watchdog", "default"), 5),
          (("priority-flow-control", "pause", "watchdog", "action"), 4),
          (("priority-flow-control", "pause", "watchdog", "hardware"), 0),
          (("priority-flow-control", "all"), 2),
          (("username",), 2), (("ip", "routing"), 0), (("ip", "name-server"), 0), (("ip", "domain-name"), 2),
          (("service", "routing", "protocols", "model"), 4), (("spanning-tree", "mode"), 2),
          (("clock", "timezone"), 2), (("dns", "domain"), 2), (("aaa", "root"), 2), (("enable", "password"), 2),
          (("ip", "route"), -2), (("lldp", "timer"), 2), (("transceiver", "qsfp", "default-mode"), 3),
          (("logging", "buffered"), 2), (("qos", "random-detect", "ecn", "allow"), 4)),
    known=frozenset({"hostname", "qos", "priority-flow-control", "username", "ip", "ipv6", "service", "spanning-tree",
                     "clock", "dns", "aaa", "enable", "logging", "ntp", "snmp-server", "lldp", "transceiver",
                     "errdisable", "load-interval", "platform", "hardware", "alias", "radius-server",
                     "tacacs-server", "banner", "prompt", "sflow", "system", "terminal", "agent", "boot",
                     "mac", "arp", "tcam", "switch", "interface", "lacp", "comment", "peer-filter",
                     "dhcp", "mlag", "bfd", "schedule", "ptp", "email", "management", "role"}),
    displayed_no=frozenset({"aaa root", "ip routing", "ipv6 unicast-routing", "priority-flow-control all"}),
)
MODES = {m.name: m for m in (GLOBAL, INTERFACE, TXQ, QOS_PROFILE, ROUTER_BGP, BGP_AF, MGMT_API, MGMT_SSH, MGMT_VRF,
                            PREFIX_LIST, ROUTE_MAP, ROUTER_BFD, PERMISSIVE)}

_LONGEST: dict[str, int] = {}       # mode name -> its longest key prefix


def _key(mode: Mode, tokens: list[str]) -> tuple[str, ...]:
    """The identity of a setting: lines with the same key replace each other."""
    best: tuple[tuple[str, ...], int] | None = None
    longest = _LONGEST.get(mode.name)
    if longest is None:
        longest = _LONGEST[mode.name] = max((len(p) for p, _ in mode.keys), default=0)
    low = tuple(t.lower() for t in tokens[:longest])      # lowered once, not once per key
    for prefix, n in mode.keys:
        if low[: len(prefix)] == prefix and (best is None or len(prefix) > len(best[0])):
            best = (prefix, n)
    if best is None or best[1] == 0:
        return tuple(tokens)
    n = best[1]
    if n == -1:   # "qos map dscp 26 27 to traffic-class 3": key up to "to"
        return tuple(tokens[: tokens.index("to")]) if "to" in tokens else tuple(tokens)
    if n == -2:   # "ip route 0.0.0.0/0 10.0.0.1": prefix + next hop, the whole line
        return tuple(tokens)
    return tuple(tokens[:n])


def _canon_ifname(name: str) -> str:
    m = re.match(r"(?i)(ethernet|et|eth|loopback|lo|management|ma|port-channel|po|vlan)(\d.*)$", name)
    if not m:
        return name
    full = {"et": "Ethernet", "eth": "Ethernet", "ethernet": "Ethernet", "lo": "Loopback", "loopback": "Loopback",
            "ma": "Management", "management": "Management", "po": "Port-Channel", "port-channel": "Port-Channel",
            "vlan": "Vlan"}[m.group(1).lower()]
    return full + m.group(2)


class ConfigTree:
    """A running-config (or session-config) and a cursor for one CLI config session."""

    def __init__(self, root: CfgNode | None = None) -> None:
        self.root = root or CfgNode("", "global")
        self.stack: list[CfgNode] = [self.root]

    def copy(self) -> ConfigTree:
        return ConfigTree(self.root.copy())

    def reset_cursor(self) -> None:
        self.stack = [self.root]

    # ---- applying lines --------------------------------------------------------------------
    def apply(self, line: str) -> None:
        """Apply one config-mode line at the current cursor (raises ConfigError)."""
        text = line.strip()
        if not text or text.startswith("!"):
            return
        if text == "exit":
            if len(self.stack) > 1:
                self.stack.pop()
            return
        for depth in range(len(self.stack) - 1, -1, -1):
            node = self.stack[depth]
            mode = MODES[node.mode]
            if mode.permissive and self._global_accepts(text):
                continue
            if self._apply_in(node, mode, text, depth):
                return
        raise bad(text.split(), 0)

    @staticmethod
    def _global_accepts(text: str) -> bool:
        body = text.split(None, 1)[1] if text.split()[0] in ("no", "default") and len(text.split()) > 1 else text
        return any(p.match(body) for p, _ in GLOBAL.enters) or body.split()[0].lower() in GLOBAL.known

    def _apply_in(self, node: CfgNode, mode: Mode, text: str, depth: int) -> bool:
        tokens = text.split()
        neg = tokens[0] in ("no", "default") and len(tokens) > 1
        body = tokens[1:] if neg else tokens
        body_text = " ".join(body)
        for pattern, child_mode in mode.enters:
            if pattern.match(body_text):
                header = self._canon_header(body)
                if neg:
                    node.children = [c for c in node.children if c.line != header]
                    del self.stack[depth + 1:]
                    return True
                child = node.child(header)
                if child is None:
                    child = CfgNode(header, child_mode or "permissive")
                    node.children.append(child)
                del self.stack[depth + 1:]
                if child_mode:
                    self.stack.append(child)
                return True
        if mode.permissive:
            self._store(node, mode, body, neg, text)
            del self.stack[depth + 1:]
            return True
        if body[0].lower() not in mode.known or (mode.rejects is not None and mode.rejects.match(body_text)):
            return False
        if depth > 0 and any(p.match(body_text) for n in self.stack[:depth] for p, _ in MODES[n.mode].enters):
            return False
        body = validate(mode.name, body, neg)
        self._store(node, mode, body, neg, text)
        del self.stack[depth + 1:]
        return True

    def _canon_header(self, body: list[str]) -> str:
        if body[0].lower() == "interface" and len(body) == 2:
            return f"interface {_canon_ifname(body[1])}"
        return " ".join(body)

    def _store(self, node: CfgNode, mode: Mode, body: list[str], neg: bool, text: str) -> None:
        key = _key(mode, body)
        if not neg:
            index = _StoreIndex.of(node, mode)
            if key not in index.keys:       # a new setting: nothing replaced, it goes before the sub-blocks
                node.children.insert(index.first_block, CfgNode(" ".join(body)))
                index.keys.add(key)
                index.first_block += 1
                index.length += 1
                return
        keep: list[CfgNode] = []
        slot: int | None = None      # a replaced setting keeps its place (minimal diffs)
        for c in node.children:
            ctoks = c.line.split()
            cneg = ctoks[0] == "no" and len(ctoks) > 1
            cbody = ctoks[1:] if cneg else ctoks
            same = _key(mode, cbody) == key
            covered = neg and tuple(cbody[: len(body)]) == tuple(body)
            if (same and not c.children) or covered:
                slot = len(keep) if slot is None else slot
                continue
            keep.append(c)
        new: CfgNode | None = None
        if not neg:
            new = CfgNode(" ".join(body))
        elif text.split()[0] == "no" and (mode.permissive or any(re.match(d, " ".join(body)) for d in mode.displayed_no)):
            new = CfgNode("no " + " ".join(body))
        if new is not None:
            # plain lines go before sub-blocks, as EOS prints them
            first_block = next((i for i, c in enumerate(keep) if c.children or c.mode), len(keep))
            keep.insert(min(slot, first_block) if slot is not None else first_block, new)
        node.children = keep

    def apply_text(self, text: str) -> None:
        """Apply a whole config (indentation ignored, like NAPALM's line stripping)."""
        self.reset_cursor()
        for line in text.splitlines():
            if line.strip() == "end":
                break
            self.apply(line)
        self.reset_cursor()

    # ---- rendering -------------------------------------------------------------------------
    def render(self) -> str:
        """The config body as EOS prints it (without the `! Command:` header), ending in `end`."""
        out: list[str] = []
        prev_rank = None
        for c in sorted(self.root.children, key=_top_rank):
            rank = _top_rank(c)[:1]
            if c.children or c.mode:
                if out and out[-1] != "!":
                    out.append("!")
                _render_block(c, 0, out)
                out.append("!")
            else:
                if out and out[-1] != "!" and prev_rank != rank:
                    out.append("!")
                out.append(c.line)
            prev_rank = rank
        if out and out[-1] != "!":
            out.append("!")
        out.append("end")
        return "\n".join(out) + "\n"


def _render_block(node: CfgNode, depth: int, out: list[str]) -> None:
    out.append(INDENT * depth + node.line)
    for c in node.children:
        if not c.children and not c.mode:
            out.append(INDENT * (depth + 1) + c.line)
    for c in node.children:
        if c.children or c.mode:
            out.append(INDENT * (depth + 1) + "!")
            _render_block(c, depth + 1, out)


_RANKS = (("no aaa root", 10), ("aaa", 10), ("username", 20), ("enable", 20), ("management api http-commands", 30),
          ("daemon", 35), ("alias", 37), ("service", 40), ("transceiver", 42), ("logging", 44), ("hostname", 50),
          ("ip name-server", 55), ("dns", 55), ("ip domain", 55), ("ntp", 57), ("snmp", 58),
          ("spanning-tree", 60), ("qos map", 70), ("vlan", 75), ("vrf instance", 78), ("qos profile", 80),
          ("interface Ethernet", 90), ("interface Loopback", 91), ("interface Management", 92),
          ("interface Port-Channel", 93), ("interface Vlan", 94), ("interface", 95), ("ip routing", 100),
          ("no ip routing", 100), ("ip prefix-list", 104), ("ip route", 105), ("route-map", 110),
          ("qos random-detect", 118), ("priority-flow-control", 120), ("router bfd", 130), ("router bgp", 140),
          ("management", 150))


def _top_rank(node: CfgNode) -> tuple:
    rank = next((r for p, r in _RANKS if node.line.startswith(p)), 145)
    if node.line.startswith("interface "):
        name = node.line.split()[1]
        return (rank, [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", name)])
    return (rank, [])


def routing_policy(root: CfgNode) -> RoutingPolicy:
    """The prefix-lists and route-maps of a config tree (validated lines, see PREFIX_LIST/ROUTE_MAP)."""
    policy = RoutingPolicy()
    for block in root.blocks("ip prefix-list "):
        entries = policy.prefix_lists.setdefault(block.line.split()[2], [])
        for line in block.lines():
            t = line.split()
            if t[0] != "seq":
                continue
            bounds = {t[i]: int(t[i + 1]) for i in range(4, len(t) - 1, 2)}
            entries.append(PrefixEntry(int(t[1]), t[2] == "permit", ipaddress.IPv4Network(t[3]),
                                       bounds.get("ge"), bounds.get("le")))
    for block in root.blocks("route-map "):
        _, name, action, seq = block.line.split()
        lists = tuple(ln.split()[4] for ln in block.lines() if ln.startswith("match ip address prefix-list "))
        policy.route_maps.setdefault(name, []).append(RouteMapEntry(int(seq), action == "permit", lists))
    return policy


def parse(text: str) -> ConfigTree:
    tree = ConfigTree()
    tree.apply_text(text)
    return tree
