"""Injected lab conditions. Plain data, persisted with the lab state (faults.json, faults-ended.json).

Counter faults (a PFC storm, drops, congestion) may be timed: `for=20s` ends the condition after 20 s,
`on=5s off=10s` repeats it (5 s on, 10 s off). Counters grow only while a condition is on and are cumulative:
a fault that ends or is cleared stops their growth but its counts stay (faults-ended.json keeps cleared faults
across a twin restart; only a lab reset forgets them), as a switch keeps its counters when a storm ends.
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from nr_run.lab.twin.personality import all_personalities, personality
from nr_run.lab.twin.topology import Topology

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
    "for": "optional (pfc_storm, lossless_drops, congestion): the condition ends after this long (20s, 500ms, 2m)",
    "on": "optional, with off: the condition repeats, on for this long", "off": "then off for this long",
    "depth": "optional (congestion): standing queue in bytes (default halfway between the ECN thresholds)",
}
TIMED_KINDS = ("pfc_storm", "lossless_drops", "congestion")
# the kinds the fabric's cached views read (cabling, links, addresses, BGP, routes: lab.twin.model); the others
# are read afresh on every request, so adding or clearing them keeps those views (Faults.cabling_version)
CABLING_KINDS = frozenset({"link_down", "cable_swap"})
# kinds whose history stays visible after they are cleared (counters, link flap counts)
ENDED_KINDS = TIMED_KINDS + ("link_down",)
TIMING = ("for", "on", "off")
DESCRIPTIONS: dict[str, str] = {
    "link_down": "the port loses its link (both ends see it down)",
    "cable_swap": "the far ends of two cables are exchanged",
    "unreachable": "the device's management plane stops answering (its links stay up and keep forwarding)",
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
# Queue occupancy (bytes) a condition holds while it is on: a paused or overflowing queue stands at the
# buffer's shared limit for it (a congestion fault stands at its `depth` instead).
FULL_QUEUE_BYTES = 1_048_576


def help_text() -> str:
    """Fault kinds and their parameters, for `nr-run lab fault --help`."""
    lines = ["fault kinds (nr-run lab fault KIND key=value ...; nr-run lab fault clear [KIND key=value ...]):"]
    everywhere = {p.platform for p in all_personalities()}
    for kind, params in KINDS.items():
        where = applies_to(kind)
        only = f" ({' and '.join(where)} only)" if "device" in params and set(where) != everywhere else ""
        lines.append(f"  {kind:<16}{' '.join(f'{p}=...' for p in params):<50}{DESCRIPTIONS.get(kind, '')}{only}")
    lines.append("parameters:")
    lines += [f"  {name:<16}{text}" for name, text in PARAMS.items()]
    lines.append("unknown devices and ports are refused; faults on a stopped lab apply at its next start")
    return "\n".join(lines)


def applies_to(kind: str) -> list[str]:
    """The platforms whose nodes a fault kind applies to (each personality lists its kinds)."""
    return [p.platform for p in all_personalities() if kind in p.fault_kinds]


class FaultError(ValueError):
    """Unknown fault kind or missing parameters."""


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")


def parse_duration(value: object) -> float:
    """Seconds of '20s', '500ms', '2m', '1h' or a plain number of seconds (FaultError otherwise)."""
    m = _DURATION.match(str(value))
    if not m or float(m.group(1)) <= 0:
        raise FaultError(f"duration {value!r}: a positive number with ms, s, m or h (20s, 500ms)")
    return float(m.group(1)) * {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[m.group(2) or "s"]


@dataclass(frozen=True)
class WatchdogEvents:
    """What a PFC watchdog saw of one storm up to now."""

    detected: int           # storms detected (pause held for the detection time)
    restored: int           # storms restored (no pause for the restoration time after a detection)
    stormed: bool           # a detected storm is not restored yet
    stormed_s: float        # seconds the queue spent stormed (what the drop action drops during)


def check_fault_targets(topology: Topology, kind: str, params: dict) -> None:
    """Refuse a fault on a device or port the topology does not have (FaultError names it)."""
    nodes = topology.nodes
    for dev_key, port_key in (("device", "port"), ("device_a", "port_a"), ("device_b", "port_b")):
        if dev_key not in params:
            continue
        device = str(params[dev_key])
        if device not in nodes:
            raise FaultError(f"{kind}: no device {device!r} in the topology (one of {', '.join(sorted(nodes))})")
        if kind not in personality(nodes[device].platform).fault_kinds:
            raise FaultError(f"{kind}: {device} is a {nodes[device].platform} node; {kind} applies to "
                             f"{' and '.join(applies_to(kind))} nodes only")
        if port_key in params and str(params[port_key]) not in nodes[device].ports:
            raise FaultError(f"{kind}: {device} has no cabled port {params[port_key]!r} "
                             f"(cabled: {', '.join(nodes[device].ports) or 'none'})")


@dataclass
class Fault:
    kind: str
    params: dict
    since: float = field(default_factory=time.time)
    until: float | None = None          # when it was cleared (ended faults only)

    def matches(self, kind: str | None = None, **params: object) -> bool:
        if kind is not None and self.kind != kind:
            return False
        return all(self.params.get(k) == v for k, v in params.items())

    @property
    def timed(self) -> bool:
        return any(k in self.params for k in TIMING)

    def _end(self) -> float:
        """When the condition stops for good (inf while it may still be on)."""
        ends = [self.until if self.until is not None else math.inf]
        if "for" in self.params:
            ends.append(self.since + float(self.params["for"]))
        return min(ends)

    def _cycle(self) -> tuple[float, float]:
        """(on, period) of the repetition; a single window is on for ever."""
        if "on" in self.params:
            on = float(self.params["on"])
            return on, on + float(self.params["off"])
        return math.inf, math.inf

    def windows_until(self, now: float) -> tuple[int, float, float]:
        """(full cycles, length of the last window, its start) of the on-windows up to now."""
        horizon = min(now, self._end())
        elapsed = max(0.0, horizon - self.since)
        on, period = self._cycle()
        if math.isinf(period):
            return 0, elapsed, self.since
        full = int(elapsed // period)
        return full, min(elapsed - full * period, on), self.since + full * period

    def active_s(self, now: float) -> float:
        """Seconds the condition was on between its injection and now."""
        full, last, _ = self.windows_until(now)
        on, _ = self._cycle()
        return (full * on if full else 0.0) + last

    def active(self, now: float) -> bool:
        """Whether the condition is on at `now`."""
        if now >= self._end() or now < self.since:
            return False
        on, period = self._cycle()
        return math.isinf(period) or (now - self.since) % period < on

    def watchdog(self, now: float, detection_s: float, restoration_s: float) -> WatchdogEvents:
        """A PFC watchdog's view of this storm: a window of continuous pause detects once it lasts the
        detection time; a detected storm restores once pause has stopped for the restoration time (an off
        period shorter than that keeps the queue stormed across windows)."""
        full, last, last_start = self.windows_until(now)
        on, period = self._cycle()
        ongoing = self.active(now)
        stormed_s = (full * max(0.0, on - detection_s) if full else 0.0) + max(0.0, last - detection_s)
        if full == 0 or period - on >= restoration_s:
            # windows apart: each one that lasted the detection time is a storm of its own, and every full
            # window restored before the next began
            full_storms = full if on >= detection_s else 0
            last_detected = 1 if last > 0 and last >= detection_s else 0
            detected = full_storms + last_detected
            restored = full_storms + (1 if last_detected and not ongoing
                                      and last_start + last + restoration_s <= now else 0)
        else:
            # off periods shorter than the restoration time: one storm from the first detection on
            detected = 1 if on >= detection_s else 0
            last_end = last_start + last if last > 0 else last_start - period + on
            restored = 1 if detected and not ongoing and last_end + restoration_s <= now else 0
        return WatchdogEvents(detected, restored, detected > restored, stormed_s)


@dataclass
class Faults:
    items: list[Fault] = field(default_factory=list)
    version: int = 0                      # bumped on every change
    ended: list[Fault] = field(default_factory=list)   # cleared faults whose counts stay on the counters
    cabling_version: int = 0              # bumped when a CABLING_KINDS fault comes or goes (the fabric's caches)

    def add(self, kind: str, **params: object) -> Fault:
        if kind not in KINDS:
            raise FaultError(f"unknown fault kind {kind!r}; one of {', '.join(sorted(KINDS))}")
        missing = [p for p in KINDS[kind] if p not in params]
        if missing:
            raise FaultError(f"fault {kind} needs {', '.join(missing)}")
        for key in ("priority", "queue", "ms"):
            if key in params:
                params[key] = int(str(params[key]))
        timing = [k for k in TIMING if k in params]
        if timing and kind not in TIMED_KINDS:
            raise FaultError(f"fault {kind} takes no {', '.join(timing)} (only {', '.join(TIMED_KINDS)} are timed)")
        if ("on" in params) != ("off" in params):
            raise FaultError(f"fault {kind}: on= and off= go together")
        for key in timing:
            params[key] = parse_duration(params[key])
        if kind == "drift" and isinstance(params["lines"], str):
            params["lines"] = str(params["lines"]).splitlines()
        fault = Fault(kind, dict(params))
        if kind == "latency":
            self.items = [f for f in self.items if f.kind != "latency"]
        self.items.append(fault)
        self.version += 1
        self.cabling_version += kind in CABLING_KINDS
        return fault

    def clear(self, kind: str | None = None, **params: object) -> int:
        """Remove matching faults (all when no filter); returns how many were removed. A removed counter
        fault is kept as ended: its counts stay on the counters."""
        now = time.time()
        keep: list[Fault] = []
        removed: list[Fault] = []
        for f in self.items:
            (removed if f.matches(kind, **params) else keep).append(f)
        self.items = keep
        for f in removed:
            if f.kind in ENDED_KINDS:
                f.until = now if f.until is None else f.until
                self.ended.append(f)
        self.version += 1
        self.cabling_version += any(f.kind in CABLING_KINDS for f in removed)
        return len(removed)

    def forget(self) -> None:
        """No faults and no history (a lab reset: counters back to zero)."""
        self.items, self.ended = [], []
        self.version += 1
        self.cabling_version += 1

    def of(self, kind: str, **params: object) -> list[Fault]:
        return [f for f in self.items if f.matches(kind, **params)]

    def counted(self, kind: str, **params: object) -> list[Fault]:
        """Active and ended faults of a kind: everything that has added to a counter."""
        return [f for f in self.items + self.ended if f.matches(kind, **params)]

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
        return [_fault_json(f) for f in self.items]

    @classmethod
    def from_json(cls, data: list[dict], ended: list[dict] | None = None) -> Faults:
        def one(d: dict) -> Fault:
            return Fault(d["kind"], d["params"], d.get("since", time.time()), d.get("until"))
        return cls(items=[one(d) for d in data], ended=[one(d) for d in ended or []])

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=1, sort_keys=True))
        ended_path(path).write_text(json.dumps([asdict(f) for f in self.ended], indent=1, sort_keys=True))

    @classmethod
    def load(cls, path: Path) -> Faults:
        if not path.exists():
            return cls()
        ended = ended_path(path)
        return cls.from_json(json.loads(path.read_text()), json.loads(ended.read_text()) if ended.exists() else [])


def ended_path(faults_path: Path) -> Path:
    """Where the cleared faults of faults.json are kept (their counts stay on the counters)."""
    return faults_path.with_name("faults-ended.json")


def _fault_json(f: Fault) -> dict:
    out = asdict(f)
    if out.get("until") is None:
        out.pop("until", None)      # active faults keep the shape they always had
    return out
