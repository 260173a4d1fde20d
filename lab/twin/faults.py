"""Injected lab conditions. Plain data, persisted with the lab state (faults.json)."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

# kind -> required params
KINDS: dict[str, tuple[str, ...]] = {
    "link_down": ("device", "port"),
    "cable_swap": ("device_a", "port_a", "device_b", "port_b"),   # near ends; their far ends are exchanged
    "unreachable": ("device",),
    "slow": ("device", "ms"),
    "appl_lag": ("device", "ms"),
    "commit_rejected": ("device",),
    "drift": ("device", "lines"),              # config lines applied outside any session (platform does it)
    "pfc_storm": ("device", "port", "priority"),
    "lossless_drops": ("device", "port", "queue"),
    "congestion": ("device", "port", "queue"),  # ECN marks if ECN configured on the queue, else drops
    "latency": ("ms",),                         # lab-wide, every request
    "reboot": ("device",),                      # the device boots its startup config (an action, like drift)
}

# what each parameter means (`nr-run lab fault --help`)
PARAMS: dict[str, str] = {
    "device": "node name of the topology", "port": "the device's interface name (Ethernet1, Ethernet8, eth1)",
    "device_a": "first cable's near-end node", "port_a": "its interface",
    "device_b": "second cable's near-end node", "port_b": "its interface",
    "ms": "milliseconds added to every answer (eAPI and SSH)",
    "lines": "config lines separated by ';' (EOS CLI lines, SONiC `config ...` commands)",
    "priority": "PFC priority 0-7", "queue": "egress queue 0-7",
}
DESCRIPTIONS: dict[str, str] = {
    "link_down": "the port loses its link (both ends see it down)",
    "cable_swap": "the far ends of two cables are exchanged",
    "unreachable": "the device's management plane stops answering",
    "slow": "one device answers late",
    "appl_lag": "the switch's daemons lag CONFIG_DB: APPL_DB catches up ms after each config change",
    "commit_rejected": "the device refuses config commits",
    "drift": "config changed outside nr-run", "pfc_storm": "the far end keeps sending PFC pause frames",
    "lossless_drops": "a lossless queue drops packets", "congestion": "ECN marks (or drops without ECN) on a queue",
    "latency": "every device answers late",
    "reboot": "the device reboots: startup config, no sessions or pending timers, SSH sessions dropped",
}

# Counters grow at these rates (per second) while a fault is active, from its injection time.
PFC_STORM_FRAMES_PER_S = 5000
DROPS_PER_S = 2000
ECN_MARKS_PER_S = 3000


def help_text() -> str:
    """Fault kinds and their parameters, for `nr-run lab fault --help`."""
    lines = ["fault kinds (nr-run lab fault KIND key=value ...; nr-run lab fault clear [KIND key=value ...]):"]
    for kind, params in KINDS.items():
        lines.append(f"  {kind:<16}{' '.join(f'{p}=...' for p in params):<50}{DESCRIPTIONS.get(kind, '')}")
    lines.append("parameters:")
    lines += [f"  {name:<16}{text}" for name, text in PARAMS.items()]
    lines.append("unknown devices and ports are refused; faults on a stopped lab apply at its next start")
    return "\n".join(lines)


class FaultError(ValueError):
    """Unknown fault kind or missing parameters."""


def check_fault_targets(topology: object, kind: str, params: dict) -> None:
    """Refuse a fault on a device or port the topology does not have (FaultError names it)."""
    nodes = getattr(topology, "nodes", {})
    for dev_key, port_key in (("device", "port"), ("device_a", "port_a"), ("device_b", "port_b")):
        if dev_key not in params:
            continue
        device = str(params[dev_key])
        if device not in nodes:
            raise FaultError(f"{kind}: no device {device!r} in the topology (one of {', '.join(sorted(nodes))})")
        if port_key in params and str(params[port_key]) not in nodes[device].ports:
            raise FaultError(f"{kind}: {device} has no cabled port {params[port_key]!r} "
                             f"(cabled: {', '.join(nodes[device].ports) or 'none'})")


@dataclass
class Fault:
    kind: str
    params: dict
    since: float = field(default_factory=time.time)

    def matches(self, kind: str | None = None, **params: object) -> bool:
        if kind is not None and self.kind != kind:
            return False
        return all(self.params.get(k) == v for k, v in params.items())


@dataclass
class Faults:
    items: list[Fault] = field(default_factory=list)
    version: int = 0                      # bumped on every change (the fabric's caches key on it)

    def add(self, kind: str, **params: object) -> Fault:
        if kind not in KINDS:
            raise FaultError(f"unknown fault kind {kind!r}; one of {', '.join(sorted(KINDS))}")
        missing = [p for p in KINDS[kind] if p not in params]
        if missing:
            raise FaultError(f"fault {kind} needs {', '.join(missing)}")
        for key in ("priority", "queue", "ms"):
            if key in params:
                params[key] = int(str(params[key]))
        if kind == "drift" and isinstance(params["lines"], str):
            params["lines"] = str(params["lines"]).splitlines()
        fault = Fault(kind, dict(params))
        if kind == "latency":
            self.items = [f for f in self.items if f.kind != "latency"]
        self.items.append(fault)
        self.version += 1
        return fault

    def clear(self, kind: str | None = None, **params: object) -> int:
        """Remove matching faults (all when no filter); returns how many were removed."""
        keep = [f for f in self.items if not f.matches(kind, **params)]
        removed = len(self.items) - len(keep)
        self.items = keep
        self.version += 1
        return removed

    def of(self, kind: str, **params: object) -> list[Fault]:
        return [f for f in self.items if f.matches(kind, **params)]

    # convenience queries
    def is_link_down(self, device: str, port: str) -> bool:
        return bool(self.of("link_down", device=device, port=port))

    def is_unreachable(self, device: str) -> bool:
        return bool(self.of("unreachable", device=device))

    def commit_rejected(self, device: str) -> bool:
        return bool(self.of("commit_rejected", device=device))

    def latency_ms(self, device: str) -> int:
        lab = sum(int(f.params["ms"]) for f in self.of("latency"))
        return lab + sum(int(f.params["ms"]) for f in self.of("slow", device=device))

    # persistence
    def to_json(self) -> list[dict]:
        return [asdict(f) for f in self.items]

    @classmethod
    def from_json(cls, data: list[dict]) -> Faults:
        return cls(items=[Fault(d["kind"], d["params"], d.get("since", time.time())) for d in data])

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=1, sort_keys=True))

    @classmethod
    def load(cls, path: Path) -> Faults:
        return cls.from_json(json.loads(path.read_text())) if path.exists() else cls()
