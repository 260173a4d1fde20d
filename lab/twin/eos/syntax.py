"""EOS command syntax: one table row per known command, the checks the EOS parser makes on its arguments.

A row names the config modes it applies in, the leading keywords it matches (the first one case-insensitive,
as the CLI is), whether the `no` form is checked too, and a check that raises ConfigError with EOS' text or
returns the canonical tokens (None: the tokens as written). The longest matching keyword prefix wins.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass


class ConfigError(Exception):
    """A line EOS would reject; `args[0]` is the EOS error text ("Invalid input ...")."""


# `speed` values of a front-panel port: <rate>[-<lanes>] ("400g-8", "100g-2", "25g") or the legacy forms
SPEED = re.compile(r"(auto|(\d+g)(-[1248])?|forced \d+[gm]full|\d+[gm]full|sfp-1000baset auto)$", re.IGNORECASE)

Check = Callable[[list[str], bool], "list[str] | None"]


@dataclass(frozen=True)
class Rule:
    modes: tuple[str, ...]
    prefix: tuple[str, ...]     # leading keywords (the first compared in lower case)
    check: Check
    negated: bool = False       # the `no` form is checked as well


def bad(tokens: list[str], i: int) -> ConfigError:
    if i >= len(tokens):
        return ConfigError("Incomplete command")
    return ConfigError(f"Invalid input (at token {i}: '{tokens[i]}')")


def need_int(tokens: list[str], i: int, lo: int, hi: int) -> None:
    if i >= len(tokens):
        raise bad(tokens, i)
    if not tokens[i].isdigit() or not lo <= int(tokens[i]) <= hi:
        raise bad(tokens, i)


def need_ip(tokens: list[str], i: int) -> None:
    if i >= len(tokens):
        raise bad(tokens, i)
    try:
        ipaddress.IPv4Address(tokens[i])
    except ValueError:
        raise bad(tokens, i) from None


def _one_arg(t: list[str], neg: bool) -> None:
    """`hostname NAME`, `vrf NAME`, `service-profile NAME`: exactly one argument."""
    if len(t) != 2:
        raise bad(t, 1 if len(t) < 2 else 2)


def _mtu(t: list[str], neg: bool) -> None:
    need_int(t, 1, 68, 9214)


def _ip_address(t: list[str], neg: bool) -> list[str] | None:
    """`ip address A.B.C.D/N [secondary]` or `ip address A.B.C.D M.M.M.M` (stored as the /N form)."""
    if len(t) < 3:
        raise bad(t, 2)
    if "/" in t[2]:
        try:
            ipaddress.IPv4Interface(t[2])
        except ValueError:
            raise bad(t, 2) from None
        if len(t) > 3 and t[3] != "secondary":
            raise bad(t, 3)
        return None
    need_ip(t, 2)
    if len(t) < 4:
        raise bad(t, 3)
    try:
        iface = ipaddress.IPv4Interface(f"{t[2]}/{t[3]}")
    except ValueError:
        raise bad(t, 3) from None
    return ["ip", "address", iface.with_prefixlen] + t[4:]


def _description(t: list[str], neg: bool) -> None:
    if len(t) < 2:
        raise bad(t, 1)


def _shutdown(t: list[str], neg: bool) -> None:
    if len(t) > 1:
        raise bad(t, 1)


def _pfc_priority(t: list[str], at: int) -> None:
    need_int(t, at, 0, 7)
    if len(t) < at + 2 or t[at + 1] not in ("drop", "no-drop"):
        raise bad(t, at + 1)


def _pfc_interface(t: list[str], neg: bool) -> None:
    if len(t) < 2:
        raise bad(t, 1)
    if t[1] == "priority":
        _pfc_priority(t, 2)
    elif t[1] not in ("on", "pause"):
        raise bad(t, 1)


def _pfc_profile(t: list[str], neg: bool) -> None:
    _pfc_priority(t, 2)


def _qos_trust(t: list[str], neg: bool) -> None:
    if len(t) < 3 or t[2] not in ("dscp", "cos"):
        raise bad(t, 2)


def _speed(t: list[str], neg: bool) -> None:
    if not SPEED.match(" ".join(t[1:])):
        raise bad(t, 1)


def _router_id(t: list[str], neg: bool) -> None:
    need_ip(t, 1)


def _maximum_paths(t: list[str], neg: bool) -> None:
    need_int(t, 1, 1, 600)
    if len(t) > 2:
        if t[2] != "ecmp":
            raise bad(t, 2)
        need_int(t, 3, 1, 600)


def _neighbor(t: list[str], neg: bool) -> None:
    if len(t) < 2:
        raise bad(t, 1)
    if len(t) < 3 and not neg:
        raise bad(t, 2)
    if len(t) > 2 and t[2] == "remote-as" and not neg:
        need_int(t, 3, 1, 4294967295)
    if len(t) > 2 and t[2] == "route-map" and not neg:
        if len(t) < 4:
            raise bad(t, 3)
        if len(t) != 5 or t[4] not in ("in", "out"):
            raise bad(t, min(len(t), 4))


def _aggregate_address(t: list[str], neg: bool) -> None:
    """`aggregate-address <network> [summary-only] [as-set] [advertise-only]` (route-map options not modelled)."""
    _network(t, neg)
    for i, word in enumerate(t[2:], 2):
        if word not in ("summary-only", "as-set", "advertise-only") and not neg:
            raise bad(t, i)


def _redistribute(t: list[str], neg: bool) -> None:
    if len(t) < 2:
        raise bad(t, 1)
    if not neg and len(t) > 2 and (t[2] != "route-map" or len(t) != 4):
        raise bad(t, 2 if t[2] != "route-map" else min(len(t), 4))


def _network(t: list[str], neg: bool) -> None:
    """`network <prefix>` (and the prefix every command that names one starts with): an IPv4 network."""
    if len(t) < 2:
        raise bad(t, 1)
    try:
        ipaddress.IPv4Network(t[1])
    except ValueError:
        raise bad(t, 1) from None


def _dscp_map(t: list[str], neg: bool) -> None:
    """`qos map dscp D [D...] to traffic-class TC`."""
    if "to" not in t or t.index("to") < 4:
        raise bad(t, len(t) if "to" not in t else 3)
    for i in range(3, t.index("to")):
        need_int(t, i, 0, 63)
    j = t.index("to")
    if len(t) < j + 3 or t[j + 1] != "traffic-class":
        raise bad(t, j + 1)
    need_int(t, j + 2, 0, 7)


def _ip_route(t: list[str], neg: bool) -> None:
    """`ip route [vrf NAME] PREFIX NEXT-HOP`."""
    at = 4 if len(t) > 2 and t[2] == "vrf" else 2
    try:
        ipaddress.IPv4Network(t[at] if len(t) > at else "")
    except ValueError:
        raise bad(t, at) from None
    if len(t) < at + 2:
        raise bad(t, at + 1)


def _ip_routing(t: list[str], neg: bool) -> None:
    """`ip routing` or `ip routing vrf NAME`."""
    if len(t) > 2 and (t[2] != "vrf" or len(t) != 4):
        raise bad(t, 2 if t[2] != "vrf" else min(len(t), 4))


def _prefix_list_entry(t: list[str], neg: bool) -> None:
    """`seq N permit|deny PREFIX [ge N] [le N]`: len <= ge <= le <= 32, as EOS checks them."""
    need_int(t, 1, 0, 65535)
    if len(t) < 3 or t[2] not in ("permit", "deny"):
        raise bad(t, 2)
    try:
        net = ipaddress.IPv4Network(t[3] if len(t) > 3 else "")
    except ValueError:
        raise bad(t, 3) from None
    bounds: dict[str, int] = {}
    i = 4
    while i < len(t):
        if t[i] not in ("ge", "le") or t[i] in bounds:
            raise bad(t, i)
        need_int(t, i + 1, net.prefixlen, 32)
        bounds[t[i]] = int(t[i + 1])
        i += 2
    if bounds.get("ge", 0) > bounds.get("le", 32):
        raise ConfigError("% Invalid prefix range: ge must be at most le")


def _match_prefix_list(t: list[str], neg: bool) -> None:
    if t[1:4] != ["ip", "address", "prefix-list"] or len(t) != 5:
        raise bad(t, min(len(t), 4))


def _random_detect(t: list[str], neg: bool) -> None:
    """`random-detect ecn minimum-threshold N UNIT maximum-threshold N UNIT [max-mark-probability P]`."""
    if len(t) <= 2 or t[2] != "minimum-threshold":
        return
    need_int(t, 3, 1, 2**31)
    if len(t) < 8 or t[5] != "maximum-threshold":
        raise bad(t, min(len(t), 5))
    need_int(t, 6, 1, 2**31)
    if len(t) > 8 and t[8] == "max-mark-probability":
        need_int(t, 9, 1, 100)


def sha512_crypt(clear: str, salt_from: str) -> str:
    """`$6$<salt>$<hash>`, the SHA-512 crypt EOS stores a `secret` as; the salt is derived from `salt_from` so the
    same config renders the same text (EOS draws a random one)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import crypt

    alphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    digest = hashlib.sha256(salt_from.encode()).digest()
    salt = "".join(alphabet[b % 64] for b in digest[:16])
    return crypt.crypt(clear, f"$6${salt}$")


def _username(t: list[str], neg: bool) -> list[str] | None:
    """`username NAME ... secret [0] CLEAR` is stored as `secret sha512 $6$...`, as EOS stores it."""
    if "secret" not in t:
        return None
    i = t.index("secret")
    if i + 1 >= len(t):
        raise bad(t, i + 1)
    if t[i + 1] in ("sha512", "5"):
        if i + 2 >= len(t):
            raise bad(t, i + 2)
        return None
    clear_at = i + 2 if t[i + 1] == "0" else i + 1
    if clear_at >= len(t):
        raise bad(t, clear_at)
    return t[:i + 1] + ["sha512", sha512_crypt(t[clear_at], t[1] + t[clear_at])] + t[clear_at + 1:]


def hash_secrets(text: str) -> str:
    """A config text with every clear-text user secret replaced by its stored sha512 form."""
    out = []
    for line in text.splitlines(keepends=True):
        if line.startswith("username ") and " secret " in line:
            body = line.rstrip("\n")
            line = " ".join(_username(body.split(), False) or body.split()) + line[len(body):]
        out.append(line)
    return "".join(out)


_BGP = ("router-bgp", "address-family")
RULES: tuple[Rule, ...] = (
    Rule(("interface",), ("mtu",), _mtu),
    Rule(("interface",), ("ip", "address"), _ip_address),
    Rule(("interface",), ("description",), _description),
    Rule(("interface",), ("shutdown",), _shutdown, negated=True),
    Rule(("interface",), ("priority-flow-control",), _pfc_interface),
    Rule(("interface", "qos-profile"), ("qos", "trust"), _qos_trust),
    Rule(("interface",), ("service-profile",), _one_arg),
    Rule(("interface",), ("speed",), _speed),
    Rule(("interface",), ("vrf",), _one_arg),
    Rule(("qos-profile",), ("priority-flow-control", "priority"), _pfc_profile),
    Rule(_BGP, ("router-id",), _router_id),
    Rule(_BGP, ("maximum-paths",), _maximum_paths),
    Rule(_BGP, ("neighbor",), _neighbor, negated=True),
    Rule(_BGP, ("redistribute",), _redistribute, negated=True),
    Rule(_BGP, ("network",), _network),
    Rule(_BGP, ("aggregate-address",), _aggregate_address, negated=True),
    Rule(("global",), ("hostname",), _one_arg),
    Rule(("global",), ("username",), _username),
    Rule(("global",), ("qos", "map", "dscp"), _dscp_map),
    Rule(("global",), ("ip", "route"), _ip_route),
    Rule(("global",), ("ip", "routing"), _ip_routing, negated=True),
    Rule(("prefix-list",), ("seq",), _prefix_list_entry),
    Rule(("route-map",), ("match",), _match_prefix_list),
    Rule(("tx-queue",), ("random-detect",), _random_detect),
)


def _index(rules: tuple[Rule, ...]) -> dict[tuple[str, str], list[Rule]]:
    """(mode, first keyword) -> its rules, longest keyword prefix first."""
    out: dict[tuple[str, str], list[Rule]] = {}
    for rule in rules:
        for mode in rule.modes:
            out.setdefault((mode, rule.prefix[0]), []).append(rule)
    for lst in out.values():
        lst.sort(key=lambda r: -len(r.prefix))
    return out


_BY_HEAD = _index(RULES)


def rule_for(mode: str, tokens: list[str]) -> Rule | None:
    for rule in _BY_HEAD.get((mode, tokens[0].lower()), ()):
        if tuple(tokens[1:len(rule.prefix)]) == rule.prefix[1:]:
            return rule
    return None


def validate(mode: str, tokens: list[str], neg: bool) -> list[str]:
    """Check a known command's syntax; return its canonical tokens. Raises ConfigError."""
    rule = rule_for(mode, tokens)
    if rule is None or (neg and not rule.negated):
        return tokens
    return rule.check(tokens, neg) or tokens
