"""Lossless counters over an interval: no drops on lossless queues, PFC pause rate bounded, ECN marks."""

from __future__ import annotations

from pydantic import Field

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms.state import DeviceState, PortCounters, sample_window_s
from nr_run.validators.base import Check, CheckOptions, Finding, Where, on_port, register
from nr_run.validators.helpers import lossless
from nr_run.validators.probes import CounterResample, Probe


class CountersOptions(CheckOptions):
    interval_s: float = Field(2.0, gt=0, le=3600, description="seconds between the two counter samples")
    max_pause_pps: float = Field(50.0, ge=0, description="PFC pause frames/s allowed per port and direction")


def _delta(a: dict[int, int], b: dict[int, int], keys: list[int]) -> int:
    return sum(max(0, b.get(k, 0) - a.get(k, 0)) for k in keys)


@register
class CountersCheck(Check):
    name = "counters"
    tags = ("roce", "counters")
    description = "Two samples apart: zero lossless-queue drops, PFC pause rate below threshold, ECN marks"
    requires = ("counters",)
    Options = CountersOptions
    options: CountersOptions

    def probes(self) -> list[Probe]:
        return [CounterResample(self.options.interval_s)]

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        first, second = state.counters_first, state.counters_second
        if first is None or second is None:
            return [self.fail(intent.name, "", "two counter samples", "one sample", "rerun; counters sampled once")]
        dt = max(sample_window_s(first, second), 1e-3)
        out: list[Finding] = []
        limit = self.options.max_pause_pps
        for itf in intent.interfaces:
            a, b = first.ports.get(itf.name), second.ports.get(itf.name)
            at = on_port(itf)
            if a is None or b is None:
                out.append(self.fail(intent.name, itf.name, "counters", "absent", "port not in counter output",
                                     where=at))
                continue
            prios = lossless(itf, intent)
            queues = sorted({intent.roce.pfc_priority_to_queue.get(p, p) for p in prios})
            drops = _delta(a.queue_drops, b.queue_drops, queues)
            qs = ",".join(map(str, queues))
            queue = queues[0] if len(queues) == 1 else None
            out.append(self.ok(intent.name, f"{itf.name} queue {qs} drops", "0 drops", where=at,
                               kind="lossless-drops", index=queue, value=0) if drops == 0 else
                       self.fail(intent.name, f"{itf.name} queue {qs} drops", "0 drops",
                                 f"{drops} drops in {dt:.1f} s",
                                 "lossless queue dropping: check PFC on both ends, headroom and the watchdog",
                                 where=at, kind="lossless-drops", index=queue, value=drops))
            for direction in ("rx", "tx"):
                per_a, per_b = getattr(a, f"pfc_{direction}"), getattr(b, f"pfc_{direction}")
                if per_a or per_b:
                    n = _delta(per_a, per_b, prios)
                else:   # platform reports per-port totals only
                    n = max(0, getattr(b, f"pfc_{direction}_total") - getattr(a, f"pfc_{direction}_total"))
                rate = n / dt
                target = f"{itf.name} pfc {direction}"
                kind = f"pause-rate-{direction}"
                if rate <= limit:
                    out.append(self.ok(intent.name, target, f"pause <= {limit:g}/s", f"{rate:.1f}/s", at,
                                       kind=kind, value=round(rate, 1)))
                    continue
                toward_rtsw = intent.role == "ctsw" and direction == "tx"
                hint = (f"persistent pause from CTSW toward {itf.peer_device}: abnormal, find the congested egress"
                        if toward_rtsw else f"sustained pause on {itf.name}: congestion or a stuck receiver")
                out.append(self.fail(intent.name, target, f"pause <= {limit:g}/s", f"{rate:.1f}/s", hint,
                                     "error" if toward_rtsw else "warning", at, kind=kind, value=round(rate, 1)))
            out.append(self._ecn(intent, itf.name, a, b, dt, first.unreadable or second.unreadable, at))
        return out

    def _ecn(self, intent: DeviceIntent, port: str, a: PortCounters, b: PortCounters, dt: float,
             unreadable: dict[str, str], at: Where) -> Finding:
        """ECN marks on the ECN queue, reported as observed; a count the device did not give is a failure."""
        q = intent.roce.ecn.queue
        target = f"{port} queue {q} ecn marks"
        if not intent.roce.ecn.enabled:
            return self.ok(intent.name, target, "not configured", "ECN off in the profile", at)
        why = unreadable.get("ecn")
        if why is None and (q not in a.ecn_marks or q not in b.ecn_marks):
            why = f"no ECN counter for queue {q}"
        if why is not None:
            return self.fail(intent.name, target, "ECN marks collected", "not collected",
                             f"{why}: enable ECN counting/polling on the queue, then rerun", where=at)
        marks = _delta(a.ecn_marks, b.ecn_marks, [q])
        return self.ok(intent.name, target, "ECN marks collected", f"{marks} ECN marks in {dt:.1f} s", at)
