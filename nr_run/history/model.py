"""What one collection hands to the history, whatever produced it (polling, streaming)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from nr_run.platforms.state import CounterSample, DeviceState
from nr_run.validators.base import Finding

ObservationKind = Literal["storm", "link", "bgp"]
NO_INDEX = -1          # idx of a series or observation that has no priority/queue (a port total, a link)


@dataclass(frozen=True, slots=True)
class Observation:
    """A state that changes now and then: a PFC watchdog storm on (port, priority), a link's oper state, a BGP
    session's state (`port` holds the peer address). The history turns changes of `value` into events."""

    device: str
    kind: ObservationKind
    port: str
    value: str
    idx: int = NO_INDEX


@dataclass
class Collection:
    """One collection of a site: the latest counter sample per device (with its wall-clock time), state
    observations, and the findings of the checks that ran (passing ones too: they resolve earlier failures)."""

    kind: str                                   # "check", "compliance", "watch", "exporter"
    source: str                                 # "poll", "gnmi", ...
    started: float                              # wall clock (epoch seconds)
    finished: float
    samples: Mapping[str, CounterSample] = field(default_factory=dict)
    sample_times: Mapping[str, float] = field(default_factory=dict)     # device -> epoch seconds of its sample
    observations: list[Observation] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    errors: Mapping[str, Mapping[str, str]] = field(default_factory=dict)   # device -> section -> why
    devices: list[str] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return sum(1 for f in self.findings if not f.passed)


def wall_time(monotonic: float, now_wall: float | None = None, now_mono: float | None = None) -> float:
    """The epoch time of a time.monotonic() reading (CounterSample.taken_at)."""
    wall = time.time() if now_wall is None else now_wall
    mono = time.monotonic() if now_mono is None else now_mono
    return wall - (mono - monotonic)


def observations(state: DeviceState) -> list[Observation]:
    """Storm, link and BGP observations of the sections the state holds."""
    out: list[Observation] = []
    if "pfc" in state.sections:
        out += [Observation(state.device, "storm", s.port, "stormed" if s.stormed else "clear", s.priority)
                for s in state.storms]
    if "interfaces" in state.sections:
        out += [Observation(state.device, "link", name, "up" if i.oper_up else "down")
                for name, i in state.interfaces.items() if i.admin_up]
    if "bgp" in state.sections:
        out += [Observation(state.device, "bgp", peer, s.state) for peer, s in state.bgp.items()]
    return sorted(out, key=lambda o: (o.device, o.kind, o.port, o.idx))


def from_states(kind: str, source: str, started: float, finished: float, states: Mapping[str, DeviceState],
                findings: list[Finding], checks: list[str]) -> Collection:
    """A Collection of polled DeviceStates: each device's latest counter sample and its observations."""
    now_wall, now_mono = time.time(), time.monotonic()
    samples: dict[str, CounterSample] = {}
    times: dict[str, float] = {}
    obs: list[Observation] = []
    for name in sorted(states):
        st = states[name]
        sample = st.counters_second or st.counters_first
        if sample is not None and "counters" in st.sections:
            samples[name] = with_link_changes(sample, st)
            times[name] = wall_time(sample.taken_at, now_wall, now_mono)
        obs += observations(st)
    return Collection(kind=kind, source=source, started=started, finished=finished, samples=samples,
                      sample_times=times, observations=obs, findings=list(findings), checks=list(checks),
                      errors={n: dict(s.errors) for n, s in states.items() if s.errors}, devices=sorted(states))


def with_link_changes(sample: CounterSample, state: DeviceState) -> CounterSample:
    """The sample with each port's link status changes from the interfaces section where the counters did not
    bring them (polling reads them with the interfaces, gNMI with the counters)."""
    if "interfaces" not in state.sections:
        return sample
    return with_changes(sample, {n: i.link_changes for n, i in state.interfaces.items() if i.link_changes is not None})


def with_changes(sample: CounterSample, changes: Mapping[str, int]) -> CounterSample:
    """The sample with each port's link status changes (port -> count) where the counters did not bring them."""
    if not any(p in changes and c.link_status_changes is None for p, c in sample.ports.items()):
        return sample
    ports = {p: dataclasses.replace(c, link_status_changes=changes[p]) if p in changes and c.link_status_changes
             is None else c for p, c in sample.ports.items()}
    return dataclasses.replace(sample, ports=ports)


# Series names of the per-port counters, with the PortCounters field each one reads and what its index is.
# Pause durations come where the platform counts them (SONiC over gNMI, or `show pfc counters --history`);
# watermarks from both platforms' CLIs (EOS also over gNMI).
COUNTERS: dict[str, tuple[str, str]] = {
    "pfc_rx_frames": ("pfc_rx", "priority"),
    "pfc_tx_frames": ("pfc_tx", "priority"),
    "pfc_rx_pause_us": ("pfc_rx_pause_us", "priority"),
    "pfc_tx_pause_us": ("pfc_tx_pause_us", "priority"),
    "ecn_marked_packets": ("ecn_marks", "queue"),
    "queue_dropped_packets": ("queue_drops", "queue"),
    "queue_watermark_bytes": ("queue_watermark_bytes", "queue"),
}
# Gauges among them: a level, not a count, so no increase or rate is computed from it.
GAUGES = frozenset({"queue_watermark_bytes"})
PAUSE_FRAMES = ("pfc_rx_frames", "pfc_tx_frames")
PAUSE_TIME = ("pfc_rx_pause_us", "pfc_tx_pause_us")
# link status changes the device counted (a per-port total, index NO_INDEX)
LINK_CHANGES = "link_status_changes"


def counter_values(sample: CounterSample) -> list[tuple[str, str, int, int]]:
    """(port, series, index, value) of every counter in the sample. PFC frames reported only per port
    (no per-priority split) get index NO_INDEX."""
    out: list[tuple[str, str, int, int]] = []
    for port, c in sorted(sample.ports.items()):
        for name, (attr, _) in COUNTERS.items():
            values = getattr(c, attr, None) or {}
            out += [(port, name, int(idx), int(v)) for idx, v in sorted(values.items()) if v is not None]
        for direction in ("rx", "tx"):
            if not getattr(c, f"pfc_{direction}"):
                out.append((port, f"pfc_{direction}_frames", NO_INDEX, int(getattr(c, f"pfc_{direction}_total"))))
        if getattr(c, LINK_CHANGES, None) is not None:
            out.append((port, LINK_CHANGES, NO_INDEX, int(getattr(c, LINK_CHANGES))))
    return out
