"""One twin SONiC switch: CONFIG_DB (running/startup), checkpoints, revert timers and its commands."""

from __future__ import annotations

import ipaddress
import json
import re
import shlex
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nr_run.lab.twin.fabric import Fabric
from nr_run.lab.twin.sonic import config_cli, factory, gcu, show, show_ops, watermarks
from nr_run.lab.twin.sonic.interpret import to_state
from nr_run.lab.twin.sonic.release import version_string
from nr_run.lab.twin.topology import Node

CHECKPOINTS = "/etc/sonic/checkpoints"
STARTUP = "/etc/sonic/config_db.json"
Result = tuple[int, str, str]


# A startup config_db holding any of these is a whole switch config: the switch boots it as it is.
CONFIGURED_TABLES = ("BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "PORT_QOS_MAP", "QUEUE")


def boot_config(node: Node) -> dict[str, Any]:
    """First boot. A startup config_db that carries buffers or QoS is a whole config and is booted as it is
    (config_db.json replaced, as containerlab's startup-config does); a bare day-0 file (metadata, management,
    ports: what `nr-run lab topology` writes) is loaded key by key onto the HWSKU's factory day 0
    (factory.py), as `config load` on a factory switch does; a HWSKU the twin has no folder for boots the file
    alone."""
    doc = None
    if node.startup_config:
        try:
            doc = json.loads(node.startup_config)
        except ValueError:
            doc = None
    if not isinstance(doc, dict):
        return factory_config(node)
    if any(doc.get(table) for table in CONFIGURED_TABLES):
        return doc
    hwsku = str(doc.get("DEVICE_METADATA", {}).get("localhost", {}).get("hwsku", ""))
    base = factory.day0(hwsku)
    if base is None:
        return doc
    return _load_onto(_identity(base, node), doc)


def _load_onto(base: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    """`config load`: each key of `doc` is written onto `base` field by field (hmset), nothing is removed."""
    for table, entries in doc.items():
        if not isinstance(entries, dict):
            continue
        target = base.setdefault(table, {})
        for key, fields in entries.items():
            if isinstance(fields, dict) and isinstance(target.get(key), dict):
                target[key].update(fields)
            else:
                target[key] = fields
    return base


def _identity(db: dict[str, Any], node: Node) -> dict[str, Any]:
    """The node's own hostname, MAC and management address on a HWSKU's day 0."""
    mgmt = node.mgmt_prefix or node.mgmt_address + "/24"
    db["DEVICE_METADATA"]["localhost"].update(hostname=node.name, mac=_mac(node.name))
    db["MGMT_PORT"] = {"eth0": {"admin_status": "up", "alias": "eth0"}}
    db["MGMT_INTERFACE"] = {f"eth0|{mgmt}": {"gwaddr": str(next(ipaddress.ip_interface(mgmt).network.hosts()))}}
    return db


def factory_config(node: Node) -> dict[str, Any]:
    """SONiC day 0 without a startup config: the HWSKU's factory day 0 where the twin has its folder (the
    model, else sonic-vs's Force10-S6000), else DEVICE_METADATA and the cabled PORTs, admin down, no QoS."""
    base = factory.day0(node.model or "Force10-S6000")
    if base is not None and all(p in base["PORT"] for p in node.ports):
        return _identity(base, node)
    mgmt = node.mgmt_prefix or node.mgmt_address + "/24"
    nums = sorted(int(re.sub(r"\D", "", p)) for p in node.ports if p.startswith("Ethernet"))
    step = min((b - a for a, b in zip(nums, nums[1:], strict=False) if b > a), default=4)
    ports = {f"Ethernet{n}": {"admin_status": "down", "alias": f"etp{n // step + 1}", "index": str(n // step + 1),
                              "lanes": ",".join(str(n + i) for i in range(step)), "mtu": "9100",
                              "speed": "400000"} for n in nums}
    return {
        "DEVICE_METADATA": {"localhost": {"hostname": node.name, "hwsku": node.model or "Force10-S6000",
                                          "platform": "x86_64-kvm_x86_64-r0", "mac": _mac(node.name),
                                          "type": "LeafRouter", "buffer_model": "traditional"}},
        "MGMT_PORT": {"eth0": {"admin_status": "up", "alias": "eth0"}},
        # containerlab's management network: the gateway is the subnet's first address (YANG wants gwaddr)
        "MGMT_INTERFACE": {f"eth0|{mgmt}": {"gwaddr": str(next(ipaddress.ip_interface(mgmt).network.hosts()))}},
        "PORT": ports,
    }


def _mac(name: str) -> str:
    h = sum(ord(c) * (i + 1) for i, c in enumerate(name))
    return f"52:54:00:{h >> 8 & 0xff:02x}:{h & 0xff:02x}:{len(name):02x}"


class SonicDevice:
    """State and commands of one switch. `files` is the device's (virtual) file system."""

    user, password = "admin", "YourPaSsWoRd"
    revert_prefix = "/usr/local/bin/config"

    def __init__(self, node: Node, fabric: Fabric, state_file: Path | None = None, boot_time: float = 0.0) -> None:
        self.node, self.fabric, self.state_file = node, fabric, state_file
        self.boot_time = boot_time or time.time()
        self.running: dict[str, Any] = boot_config(node)
        self.files: dict[str, str] = {}
        self.timers: dict[str, dict[str, Any]] = {}     # unit -> {"deadline", "argv"}
        self.mtimes: dict[str, float] = {}               # checkpoint file -> when it was written
        self.appl_prev: dict[str, Any] = {}              # CONFIG_DB before the last change (`appl_lag`)
        self.appl_changed = 0.0                          # when CONFIG_DB last changed
        self.traffic_shifted = False                     # TSA in effect
        self._load()
        self.files.setdefault(STARTUP, json.dumps(self.running, indent=4, sort_keys=True) + "\n")
        self.publish()

    # ------------------------------------------------------------ persistence / fabric
    def _load(self) -> None:
        if self.state_file and self.state_file.exists():
            data = json.loads(self.state_file.read_text())
            self.running, self.files, self.timers = data["running"], data["files"], data.get("timers", {})
            self.mtimes = data.get("mtimes", {})

    def save(self) -> None:
        if self.state_file:
            self.state_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.state_file.with_suffix(".tmp")
            keep = {k: v for k, v in self.files.items() if k == STARTUP or k.startswith(CHECKPOINTS)}
            tmp.write_text(json.dumps({"running": self.running, "files": keep, "timers": self.timers,
                                       "mtimes": {k: v for k, v in self.mtimes.items() if k in keep}},
                                      sort_keys=True))
            tmp.replace(self.state_file)

    def publish(self) -> None:
        st = to_state(self.running, self.node.name)
        st.system_mac = st.system_mac or _mac(self.node.name)     # DEVICE_METADATA mac, else the image's
        self.fabric.set_state(self.node.name, st)

    def set_running(self, db: dict[str, Any]) -> None:
        self.appl_prev, self.appl_changed = self.running, time.time()    # APPL_DB lags under `appl_lag`
        self.running = db
        self.publish()
        self.save()

    def reboot(self) -> None:
        """Boot again: CONFIG_DB loads /etc/sonic/config_db.json; transient systemd timers do not survive."""
        self.timers.clear()
        self.boot_time = time.time()
        self.set_running(json.loads(self.files[STARTUP]))

    @property
    def build(self) -> str:
        """The SONiC build the node runs (`show version`), which picks the release's GCU rules."""
        return version_string(self.node.image) if self.node.image else ""

    @property
    def hostname(self) -> str:
        return self.running.get("DEVICE_METADATA", {}).get("localhost", {}).get("hostname", self.node.name)

    # ------------------------------------------------------------ shell Device protocol
    def prompt(self) -> str:
        return f"{self.user}@{self.hostname}:~$ "

    def accepts(self, username: str, password: str) -> bool:
        return (username, password) == (self.user, self.password)

    def reachable(self) -> bool:
        return self.fabric.reachable(self.node.name)

    def special_files(self) -> dict[str, str]:
        up = max(0.0, time.time() - self.boot_time)
        return {"/proc/uptime": f"{up:.2f} {up * 1.9:.2f}\n"}

    def tick(self) -> None:
        """Fire expired systemd-run timers (also checked before every command)."""
        now = time.time()
        for unit, t in sorted(self.timers.items()):
            if t["deadline"] <= now:
                del self.timers[unit]
                self.run(t["argv"], None)
                self.save()

    def run(self, argv: list[str], stdin: str | None) -> Result:
        self.tick()
        name = self._verb = argv[0].rsplit("/", 1)[-1]
        handler = {"config": self._config, "show": self._show, "systemd-run": self._systemd_run,
                   "systemctl": self._systemctl, "vtysh": self._vtysh, "pfcwd": self._pfcwd,
                   "ecnconfig": self._ecnconfig, "ping": self._ping, "hostname": self._hostname,
                   "mmuconfig": lambda a, i: show_ops.mmuconfig(self, a), "redis-cli": lambda a, i: show_ops.redis_cli(self, a),
                   "sonic-db-cli": self._db_cli,
                   "sonic-clear": lambda a, i: watermarks.clear(self, a),
                   "sonic-cfggen": lambda a, i: show_ops.sonic_cfggen(self, a),
                   "docker": lambda a, i: show_ops.docker(self, a),
                   "TSA": self._traffic_shift, "TSB": self._traffic_shift, "TSC": self._traffic_shift}.get(name)
        if handler is None:
            return 127, "", f"-bash: {argv[0]}: command not found\n"
        return handler(argv[1:], stdin)

    def _db_cli(self, args: list[str], stdin: str | None) -> Result:
        # APPL_DB is derived from the running config (with the `appl_lag` lag); the other databases read CONFIG_DB
        return gcu.db_cli(self, args) if args[:1] == ["APPL_DB"] else show_ops.sonic_db_cli(self, args)

    def _traffic_shift(self, args: list[str], stdin: str | None) -> Result:
        return gcu.traffic_shift(self, self._verb)

    def _hostname(self, args: list[str], stdin: str | None) -> Result:
        return 0, self.hostname + "\n", ""

    # ------------------------------------------------------------ config (GCU)
    def _config(self, args: list[str], stdin: str | None) -> Result:
        flags = {a for a in args if a.startswith("-")}
        pos = [a for a in args if not a.startswith("-")]
        dry = bool(flags & {"-d", "--dry-run"})
        if not pos:
            return 2, "", "Usage: config [OPTIONS] COMMAND [ARGS]...\n"
        verb, rest = pos[0], pos[1:]
        if flags & {"-h", "--help", "-?"}:
            shown = config_cli.help_text(verb)
            if shown is not None:
                return shown
        if verb == "apply-patch" and not rest:
            return config_cli.usage_error("apply-patch", "Missing argument 'PATCH_FILE_PATH'.")
        if verb in ("apply-patch", "replace") and rest and not dry and \
                self.fabric.faults.commit_rejected(self.node.name):     # the fault applies to every platform
            what = "apply patch" if verb == "apply-patch" else "replace config"
            return 2, "", gcu.failure_text(what, "configuration rejected by the system (commit_rejected fault)")
        if verb == "apply-patch" and rest:
            if rest[0] not in self.files:
                return 2, "", f"Error: Invalid value for 'PATCH_FILE_PATH': Path '{rest[0]}' does not exist.\n"
            try:
                target, ops = gcu.simulate(self.running, self.files[rest[0]], self.build)
            except gcu.GcuError as exc:
                return 2, "", gcu.failure_text("apply patch", str(exc))
            out = gcu.success_text(ops, gcu.changes(self.running, target), dry)
            if not dry:
                self.set_running(target)
            return 0, out, ""
        if verb == "replace" and rest:
            try:
                target = json.loads(self.files[rest[0]])
                gcu.validate_field_operations(self.running, target, self.build)
                gcu.validate(target)
            except (KeyError, ValueError, gcu.GcuError) as exc:
                return 2, "", gcu.failure_text("replace config", str(exc))
            if not dry:
                self.set_running(target)
            return 0, "Config Replacer: Config replacement starting.\nConfig replaced successfully.\n", ""
        if verb == "checkpoint" and rest:
            self.files[f"{CHECKPOINTS}/{rest[0]}.cp.json"] = json.dumps(self.running, indent=4, sort_keys=True)
            self.mtimes[f"{CHECKPOINTS}/{rest[0]}.cp.json"] = time.time()
            self.save()
            return 0, "Config Rollbacker: Config checkpoint starting.\nCheckpoint created successfully.\n", ""
        if verb == "rollback" and rest:
            cp = self.files.get(f"{CHECKPOINTS}/{rest[0]}.cp.json")
            if cp is None:
                return 2, "", gcu.failure_text("rollback config", f"Checkpoint '{rest[0]}' does not exist")
            try:
                gcu.validate_field_operations(self.running, json.loads(cp), self.build)
            except gcu.GcuError as exc:
                return 2, "", gcu.failure_text("rollback config", str(exc))
            if not dry:
                self.set_running(json.loads(cp))
            return 0, "Config Rollbacker: Config rollback starting.\nConfig rolled back successfully.\n", ""
        if verb == "delete-checkpoint" and rest:
            self.mtimes.pop(f"{CHECKPOINTS}/{rest[0]}.cp.json", None)
            if self.files.pop(f"{CHECKPOINTS}/{rest[0]}.cp.json", None) is None:
                return 2, "", gcu.failure_text("delete checkpoint", f"Checkpoint '{rest[0]}' does not exist")
            self.save()
            return 0, "Checkpoint deleted successfully.\n", ""
        if verb == "reload" and rest:                    # a drained apply: CONFIG_DB replaced by the file
            return gcu.reload(self, rest[0])
        if verb == "list-checkpoints":
            names = sorted(p[len(CHECKPOINTS) + 1:-len(".cp.json")] for p in self.files if p.startswith(CHECKPOINTS))
            if flags & {"-t", "--time"}:      # sonic-utilities: the file's mtime in ISO 8601 UTC, newest first
                rows = [{"name": n, "time": datetime.fromtimestamp(
                    self.mtimes.get(f"{CHECKPOINTS}/{n}.cp.json", self.boot_time), tz=UTC).isoformat()} for n in names]
                rows.sort(key=lambda r: r["time"], reverse=True)
                return 0, json.dumps(rows, indent=4) + "\n", ""
            return 0, json.dumps(names, indent=4) + "\n", ""
        if verb == "save":
            self.files[STARTUP] = json.dumps(self.running, indent=4, sort_keys=True) + "\n"
            self.save()
            return 0, f"Running command: /usr/local/bin/sonic-cfggen -d --print-data > {STARTUP}\n", ""
        done = config_cli.run(self, verb, rest)
        if done is not None:
            return done
        return 2, "", f"Error: No such command \"{verb}\".\n"

    # ------------------------------------------------------------ systemd (revert timer)
    def _systemd_run(self, args: list[str], stdin: str | None) -> Result:
        opts = {}
        i = 0
        while i < len(args) and args[i].startswith("-"):
            key, _, val = args[i].partition("=")
            opts[key] = val
            i += 1
        cmd = args[i:]
        unit = opts.get("--unit", f"run-u{len(self.timers) + 1}")
        delay = opts.get("--on-active")
        if not cmd:
            return 1, "", "Command line to execute required.\n"
        if not delay:
            return self.run(cmd, None)
        if f"{unit}.timer" in self.timers:
            return 1, "", f"Failed to start transient timer unit: Unit {unit}.timer already exists.\n"
        m = re.fullmatch(r"(\d+)(s|min|m)?", delay)
        if not m:
            return 1, "", f"Failed to parse timer value: {delay}\n"
        secs = int(m.group(1)) * (60 if m.group(2) in ("min", "m") else 1)
        self.timers[f"{unit}.timer"] = {"deadline": time.time() + secs, "argv": cmd}
        self.save()
        return 0, "", f"Running timer as unit: {unit}.timer\nWill run service as unit: {unit}.service\n"

    def _systemctl(self, args: list[str], stdin: str | None) -> Result:
        pos = [a for a in args if not a.startswith("-")]
        quiet = "--quiet" in args or "-q" in args
        if len(pos) >= 2 and pos[0] == "is-active":
            unit = pos[1] if "." in pos[1] else pos[1] + ".service"
            active = unit in self.timers
            return (0 if active else 3), ("" if quiet else ("active\n" if active else "inactive\n")), ""
        if len(pos) >= 2 and pos[0] == "stop":
            for unit in pos[1:]:
                self.timers.pop(unit if "." in unit else unit + ".timer", None)
            self.save()
            return 0, "", ""
        if pos and pos[0] == "list-timers":
            rows = [f"{time.strftime('%a %Y-%m-%d %H:%M:%S UTC', time.gmtime(t['deadline']))}  {u}"
                    for u, t in sorted(self.timers.items())]
            return 0, "\n".join(rows) + f"\n\n{len(rows)} timers listed.\n", ""
        return 1, "", f"Unknown command verb {pos[0] if pos else ''}.\n"

    # ------------------------------------------------------------ show & friends
    def _show(self, args: list[str], stdin: str | None) -> Result:
        return show.show(self, args)

    def _vtysh(self, args: list[str], stdin: str | None) -> Result:
        cmds = [args[i + 1] for i, a in enumerate(args) if a == "-c" and i + 1 < len(args)]
        out: list[str] = []
        for c in cmds:
            rc, o, e = show.vtysh(self, c)
            if rc:
                return rc, "".join(out), e
            out.append(o)
        return 0, "".join(out), ""

    def _pfcwd(self, args: list[str], stdin: str | None) -> Result:
        return show.pfcwd(self, args)

    def _ecnconfig(self, args: list[str], stdin: str | None) -> Result:
        return show.ecnconfig(self, args)

    def _ping(self, args: list[str], stdin: str | None) -> Result:
        from nr_run.lab.twin.linux.ping import ping
        return ping(self.fabric, self.node.name, args)


def quote(s: str) -> str:
    return shlex.quote(s)
