"""The `config` verbs engineers type on SONiC besides GCU: each changes CONFIG_DB as sonic-utilities does, or fails
with its text and exit status (click usage errors exit 2; portconfig's own errors exit 1).

config interface mtu|speed|fec <port> <value>    portconfig -p <port> -m|-s|-f (scripts/portconfig): PORT field
config interface startup|shutdown <port>         PORT admin_status up|down
config interface ip add|remove <port> <ip/len>   INTERFACE <port> and <port>|<ip/len>
config hostname <name>                           DEVICE_METADATA|localhost hostname
config bgp shutdown|startup all|neighbor <ip>    BGP_NEIGHBOR admin_status down|up
config qos reload                                QoS/buffer tables cleared and rendered from the HWSKU (qos_reload)
"""

from __future__ import annotations

import copy
import ipaddress
from collections.abc import Callable
from typing import Any, Protocol

Result = tuple[int, str, str]
FECS = ("rs", "fc", "none", "auto")       # utilities_common.constants DEFAULT_SUPPORTED_FECS_LIST (+ auto)

APPLY_PATCH_HELP = """Usage: config apply-patch [OPTIONS] PATCH_FILE_PATH

  Apply given patch of updates to Config. A patch is a JsonPatch which
  follows rfc6902. This command can be used do partial updates to the config
  with minimum disruption to running processes. It allows addition as well as
  deletion of configs. The patch file represents a diff of ConfigDb(ABNF)
  format or SonicYang format.

  <patch-file-path>: Path to the patch file on the file-system.

Options:
  -f, --format [CONFIGDB|SONICYANG]
                                  format of config of the patch is either
                                  ConfigDb(ABNF) or SonicYang
  -d, --dry-run                   test out the command without affecting
                                  config state
  -p, --parallel                  applying the change to all ASICs parallelly
  -n, --ignore-non-yang-tables    ignore validation for tables without YANG
                                  models
  -i, --ignore-path TEXT          ignore validation for config specified by
                                  given path which is a JsonPointer
  -v, --verbose                   print additional details of what the
                                  operation is doing
  -h, -?, --help                  Show this message and exit.
"""
USAGE = {
    "apply-patch": "config apply-patch [OPTIONS] PATCH_FILE_PATH",
    "interface mtu": "config interface mtu [OPTIONS] <interface_name> <interface_mtu>",
    "interface speed": "config interface speed [OPTIONS] <interface_name> <interface_speed>",
    "interface fec": "config interface fec [OPTIONS] <interface_name> <interface_fec>",
    "interface startup": "config interface startup [OPTIONS] <interface_name>",
    "interface shutdown": "config interface shutdown [OPTIONS] <interface_name>",
    "interface ip add": "config interface ip add [OPTIONS] <interface_name> <ip_addr> <default gateway IP address>",
    "interface ip remove": "config interface ip remove [OPTIONS] <interface_name> <ip_addr>",
    "hostname": "config hostname [OPTIONS] <new_hostname>",
    "bgp shutdown neighbor": "config bgp shutdown neighbor [OPTIONS] <ipaddr_or_hostname>",
    "bgp startup neighbor": "config bgp startup neighbor [OPTIONS] <ipaddr_or_hostname>",
}


class Device(Protocol):
    running: dict[str, Any]

    def set_running(self, db: dict[str, Any]) -> None: ...


def usage_error(command: str, message: str) -> Result:
    """click's UsageError: the usage line, the help hint, the message; exit status 2."""
    return 2, "", f"Usage: {USAGE[command]}\nTry \"config {command} -h\" for help.\n\nError: {message}\n"


def _ports(dev: Device) -> dict[str, Any]:
    return dev.running.get("PORT", {})


def _change(dev: Device, edit: Callable[[dict[str, Any]], object]) -> None:
    db = copy.deepcopy(dev.running)
    edit(db)
    dev.set_running(db)


def _port_field(dev: Device, command: str, args: list[str], field: str) -> Result:
    """portconfig -p PORT -m|-s|-f VALUE: an unknown port is `Invalid port X` (exit 1)."""
    if len(args) < 2:
        missing = "<interface_name>" if not args else f"<interface_{command.split()[-1]}>"
        return usage_error(command, f"Missing argument \"{missing}\".")
    port, value = args[0], args[1]
    if port not in _ports(dev):
        return 1, "", f"Invalid port {port}\n"
    if field in ("mtu", "speed") and not value.isdigit():
        return 2, "", (f"usage: portconfig [-h] -p PORT ...\nportconfig: error: argument -{field[0]}/--{field}: "
                       f"invalid int value: '{value}'\n")
    if field == "fec" and value not in FECS:
        return 1, f"fec {value} is not in {list(FECS)}\n", ""
    _change(dev, lambda db: db["PORT"][port].__setitem__(field, value))
    return 0, "", ""


def _admin(dev: Device, command: str, args: list[str], status: str) -> Result:
    if not args:
        return usage_error(command, "Missing argument \"<interface_name>\".")
    bad = [p for p in args[0].split(",") if p not in _ports(dev)]
    if bad:
        return usage_error(command, "Interface name is invalid. Please enter a valid interface name!!")
    _change(dev, lambda db: [db["PORT"][p].__setitem__("admin_status", status) for p in args[0].split(",")])
    return 0, "", ""


def _ip(dev: Device, args: list[str]) -> Result:
    if not args or args[0] not in ("add", "remove"):
        return 2, "", ("Usage: config interface ip [OPTIONS] COMMAND [ARGS]...\nTry \"config interface ip -h\" for "
                       f"help.\n\nError: No such command \"{args[0] if args else ''}\".\n")
    command, rest = f"interface ip {args[0]}", args[1:]
    if len(rest) < 2:
        return usage_error(command, "Missing argument \"<interface_name>\"." if not rest
                           else "Missing argument \"<ip_addr>\".")
    port, addr = rest[0], rest[1]
    if port not in _ports(dev):
        return usage_error(command, "Interface name is invalid. Please enter a valid interface name!!")
    try:
        iface = ipaddress.ip_interface(addr)
    except ValueError:
        return usage_error(command, f"'{addr}' is not a valid IPv4 or IPv6 address")
    if "/" not in addr:
        return usage_error(command, f"'{addr}' is not a valid IPv4 or IPv6 address")
    key = f"{port}|{iface.with_prefixlen}"
    table = dev.running.get("INTERFACE", {})
    if args[0] == "remove":
        if key not in table:
            return usage_error(command, f"Cannot find {port} with IP address {addr}")

        def drop(db: dict[str, Any]) -> None:
            del db["INTERFACE"][key]
            if not any(k.startswith(port + "|") for k in db["INTERFACE"]):
                db["INTERFACE"].pop(port, None)

        _change(dev, drop)
        return 0, "", ""

    def add(db: dict[str, Any]) -> None:
        db.setdefault("INTERFACE", {}).setdefault(port, {})
        db["INTERFACE"][key] = {}

    _change(dev, add)
    return 0, "", ""


def _hostname(dev: Device, args: list[str]) -> Result:
    if not args:
        return usage_error("hostname", "Missing argument \"<new_hostname>\".")
    _change(dev, lambda db: db.setdefault("DEVICE_METADATA", {}).setdefault("localhost", {})
            .__setitem__("hostname", args[0]))
    return 0, "Please note loaded setting will be lost after system reboot. To preserve setting, run `config save`.\n", ""


def _bgp(dev: Device, args: list[str]) -> Result:
    if len(args) < 2 or args[0] not in ("shutdown", "startup") or args[1] not in ("all", "neighbor"):
        return 2, "", ("Usage: config bgp [OPTIONS] COMMAND [ARGS]...\nTry \"config bgp -h\" for help.\n\n"
                       f"Error: No such command \"{' '.join(args[:2])}\".\n")
    status = "down" if args[0] == "shutdown" else "up"
    neighbors = dev.running.get("BGP_NEIGHBOR", {})
    if args[1] == "all":
        keys = list(neighbors)
    else:
        command = f"bgp {args[0]} neighbor"
        if len(args) < 3:
            return usage_error(command, "Missing argument \"<ipaddr_or_hostname>\".")
        want = args[2]
        keys = [k for k, f in neighbors.items() if k.split("|")[-1] == want or f.get("name") == want]
        if not keys:
            return usage_error(command, f"Could not locate neighbor '{want}'")
    _change(dev, lambda db: [db["BGP_NEIGHBOR"][k].__setitem__("admin_status", status) for k in keys])
    return 0, "", ""


def run(dev: Device, verb: str, rest: list[str]) -> Result | None:
    """One of these verbs, or None (not one of them: the caller answers)."""
    if verb == "interface" and rest:
        sub, args = rest[0], rest[1:]
        if sub in ("mtu", "speed", "fec"):
            return _port_field(dev, f"interface {sub}", args, sub)
        if sub in ("startup", "shutdown"):
            return _admin(dev, f"interface {sub}", args, "up" if sub == "startup" else "down")
        if sub == "ip":
            return _ip(dev, args)
        return 2, "", ("Usage: config interface [OPTIONS] COMMAND [ARGS]...\nTry \"config interface -h\" for help."
                       f"\n\nError: No such command \"{sub}\".\n")
    if verb == "hostname":
        return _hostname(dev, rest)
    if verb == "qos" and rest[:1] == ["reload"]:
        from nr_run.lab.twin.sonic import qos_reload

        db, said = qos_reload.reload(dev.running)
        dev.set_running(db)
        return 0, said, ""
    if verb == "bgp":
        return _bgp(dev, rest)
    return None


def help_text(verb: str) -> Result | None:
    """`config <verb> --help`, for the verbs whose help engineers read."""
    if verb == "apply-patch":
        return 0, APPLY_PATCH_HELP, ""
    return None
