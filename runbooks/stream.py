"""Judging a check run while it collects: each device's state becomes findings as soon as it is collected.

A run of a large site cannot hold every device's collected state (routes, QoS maps, LLDP tables, two counter
samples per port) until the last device answers. So, per device, right after its collection:
  - the checks that read nothing but the device's own state and no probe's measurement (`early`) judge it;
  - the history's part of it is taken: its state observations, and its ports' link status changes (they join
    the latest counter sample once the probes took it);
  - every field that no check still to run reads is dropped. Kept: the sections the device's own `late`
    checks require (those with probes, or reading other devices), the fields those checks read of far ends
    (`Check.peer_fields`) and the counters (the report's and the history's latest sample).
The late checks judge every device once the probes ran, on the kept sections. Findings are sorted as
evaluate_all sorts them, so the report is the one judging the whole collected state at the end gives.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from nr_run.history.model import Observation, observations
from nr_run.intent.models import FabricIntent
from nr_run.platforms.state import DeviceState
from nr_run.validators.base import Check, Finding, Selection, evaluate_device

# The DeviceState fields each section fills (the collectors' apply_section, the probes).
SECTION_FIELDS: dict[str, tuple[str, ...]] = {
    "interfaces": ("interfaces",),
    "lldp": ("lldp",),
    "bgp": ("bgp",),
    "routes": ("routes",),
    "pfc": ("pfc_priorities", "watchdog", "storms"),
    "qos": ("ecn", "qos"),
    "buffers": ("buffer_pgs",),
    "counters": ("counters_first", "counters_second"),
    "nics": ("nics",),
    "rdma": ("rdma",),
}
_EMPTY = DeviceState("", "")


def is_late(check: Check) -> bool:
    """Whether the check must wait for the whole collection: it needs a probe's measurement, or reads other
    devices' states."""
    return bool(check.probes()) or bool(check.peer_fields)


@dataclass
class StreamJudge:
    """One run's judging as devices are collected (thread-safe: collection threads call `collected`)."""

    checks: list[Check]
    fabric: FabricIntent
    selection: Mapping[str, Selection] | None = None
    findings: dict[str, list[Finding]] = field(default_factory=dict)          # device -> early findings
    observations: dict[str, list[Observation]] = field(default_factory=dict)
    link_changes: dict[str, dict[str, int]] = field(default_factory=dict)     # device -> port -> changes
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.early = [c for c in self.checks if not is_late(c)]
        self.late = [c for c in self.checks if is_late(c)]
        self.peer = {f for c in self.late for f in c.peer_fields}

    def _chosen(self, name: str) -> Selection | None:
        return self.selection[name] if self.selection is not None else None

    def kept(self, name: str) -> set[str]:
        """The DeviceState fields of `name` that a late check still reads (of its own sections, or as a far
        end), and the counters."""
        intent, chosen = self.fabric.devices[name], self._chosen(name)
        own = {f for c in self.late if c.applies_to(intent) and (chosen is None or c.name in chosen.checks)
               for s in c.requires for f in SECTION_FIELDS.get(s, ())}
        return own | self.peer | set(SECTION_FIELDS["counters"])

    def collected(self, name: str, state: DeviceState) -> DeviceState:
        """Judge a just-collected state on the early checks, take its history part, then drop what no later
        check reads; returns the (same, reduced) state."""
        judged = name in self.fabric.devices and (self.selection is None or name in self.selection)
        # one device judged at a time: the checks were written for one thread
        with self._lock:
            found = evaluate_device(self.early, self.fabric, name, {name: state}, self._chosen(name)) if judged else []
        self.findings[name] = found
        self.observations[name] = observations(state)
        if "interfaces" in state.sections:
            self.link_changes[name] = {n: i.link_changes for n, i in state.interfaces.items()
                                       if i.link_changes is not None}
        if judged:
            reduce(state, self.kept(name))
        return state

    def judge(self, states: dict[str, DeviceState]) -> list[Finding]:
        """The late checks on every judged device (probes done), with the early findings, sorted."""
        names = sorted(self.fabric.devices if self.selection is None else set(self.selection) & set(self.fabric.devices))
        out: list[Finding] = []
        for name in names:
            if name in self.findings:
                out += self.findings[name]
            else:                         # never collected (not in the run): the early checks say so too
                out += evaluate_device(self.early, self.fabric, name, states, self._chosen(name))
            out += evaluate_device(self.late, self.fabric, name, states, self._chosen(name))
        return sorted(out, key=Finding.sort_key)


def reduce(state: DeviceState, keep: set[str]) -> None:
    """Empty every field of the collected sections that is not in `keep` (the section's name stays in
    `sections`: it was collected, and its early checks judged it)."""
    for section in state.sections:
        for name in SECTION_FIELDS.get(section, ()):
            if name not in keep:
                default = getattr(_EMPTY, name)
                setattr(state, name, type(default)() if default is not None else None)
