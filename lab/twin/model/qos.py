"""PFC, ECN and queues: pause frames, watchdog, drops, marks and watermarks that the faults make grow."""

from __future__ import annotations

import time

from nr_run.lab.twin.faults import (
    DROPS_PER_S,
    ECN_MARKS_PER_S,
    FULL_QUEUE_BYTES,
    PFC_STORM_FRAMES_PER_S,
    Fault,
)
from nr_run.lab.twin.model.links import Links
from nr_run.lab.twin.state import EcnQueue, IfState


class Qos(Links):
    def _ifstate(self, dev: str, port: str) -> IfState | None:
        st = self.states.get(dev)
        return st.interfaces.get(port) if st else None

    @staticmethod
    def _grown(f: Fault, rate: float, now: float) -> int:
        """What one fault added to a counter by `now`: rate x the seconds it was on, plus the first frame
        (none at a zero rate: an ECN queue below its minimum threshold marks nothing)."""
        return int(f.active_s(now) * rate) + 1 if rate > 0 else 0

    def pfc_counters(self, dev: str, port: str, now: float | None = None) -> dict[int, dict[str, int]]:
        """Per priority: rx (pause frames received), tx (sent), rx_us / tx_us (microseconds paused).

        A storm on (dev, port, prio) means the far end keeps sending pause frames: dev's rx and the far
        end's tx grow while the storm is on, and keep their counts once it ends or is cleared. A storm holds
        the priority paused the whole time it is on (the pause-duration counters). Frames are only counted
        where PFC is enabled on the port.
        """
        now = time.time() if now is None else now
        out = {p: {"rx": 0, "tx": 0, "rx_us": 0, "tx_us": 0} for p in range(8)}
        ifs = self._ifstate(dev, port)
        if not ifs or not ifs.pfc_enabled:
            return out
        for f in self.faults.counted("pfc_storm", device=dev, port=port):
            prio = out[int(f.params["priority"])]
            prio["rx"] += self._grown(f, PFC_STORM_FRAMES_PER_S, now)
            prio["rx_us"] += int(f.active_s(now) * 1_000_000)
        far = self.peer(dev, port)
        if far:
            for f in self.faults.counted("pfc_storm", device=far[0], port=far[1]):
                prio = out[int(f.params["priority"])]
                prio["tx"] += self._grown(f, PFC_STORM_FRAMES_PER_S, now)
                prio["tx_us"] += int(f.active_s(now) * 1_000_000)
        # PFC-only backpressure: a lossless queue congested without ECN on another port of a device makes it
        # pause its senders on every PFC port (this one sends; the port facing such a device receives)
        for side, owner, facing in [("tx", dev, port)] + ([("rx", far[0], far[1])] if far else []):
            for f in self.faults.counted("congestion", device=owner):
                q = int(f.params["queue"]) % 8
                if f.params.get("port") != facing and q in ifs.pfc_priorities and \
                        self.paced(owner, str(f.params.get("port")), q):
                    out[q][side] += self._grown(f, PFC_STORM_FRAMES_PER_S / 10, now)
                    out[q][f"{side}_us"] += int(f.active_s(now) * 500_000)
        return out

    def paced(self, dev: str, port: str, q: int) -> bool:
        """A congested lossless queue without ECN marking (a PFC-only design): the device holds it by pausing
        its senders instead of dropping, as long as every other cabled port pauses its far end on `q` (PFC on
        at both ends). A sender with PFC off ignores the pauses: the queue then drops."""
        ifs = self._ifstate(dev, port)
        if not ifs or q in ifs.ecn or q not in ifs.pfc_priorities:
            return False
        node = self.topology.nodes.get(dev)
        for p in node.ports if node else ():
            if p == port or not self.link_up(dev, p):
                continue
            mine, far = self._ifstate(dev, p), self.peer(dev, p)
            theirs = self._ifstate(*far) if far else None
            if not mine or not theirs or q not in mine.pfc_priorities or q not in theirs.pfc_priorities:
                return False
        return True

    def watchdog_status(self, dev: str, port: str, now: float | None = None) -> dict[int, dict[str, int | bool]]:
        """Per lossless priority: whether the watchdog holds the queue stormed now, storms detected and
        restored so far, and what it dropped while stormed (drop action).

        A timed storm is detected once it has lasted the configured detection time and restored once it has
        been over for the restoration time; an open-ended storm (no for/on/off) stands for one already under
        way when it was injected, so the watchdog has detected it from that moment.
        """
        now = time.time() if now is None else now
        ifs = self._ifstate(dev, port)
        out: dict[int, dict[str, int | bool]] = {}
        if not ifs or not ifs.pfc_enabled:
            return out
        wd = ifs.watchdog
        enabled = bool(wd and wd.enabled)
        for prio in sorted(ifs.pfc_priorities):
            detected = restored = drops = 0
            stormed = False
            for f in self.faults.counted("pfc_storm", device=dev, port=port, priority=prio) if enabled else []:
                assert wd is not None
                ev = f.watchdog(now, wd.detection_ms / 1000 if f.timed else 0.0, wd.restoration_ms / 1000)
                detected, restored = detected + ev.detected, restored + ev.restored
                stormed = stormed or ev.stormed
                if wd.action == "drop" and ev.detected:
                    drops += int(ev.stormed_s * DROPS_PER_S) + 1
            out[prio] = {"enabled": enabled, "stormDetected": stormed, "stormCount": detected,
                         "restoredCount": restored, "droppedPackets": drops}
        return out

    def queue_drops(self, dev: str, port: str, now: float | None = None) -> dict[int, int]:
        """Egress drops per queue: lossless-drop faults, congestion without ECN (unless PFC paces it: see
        paced), watchdog drops."""
        now = time.time() if now is None else now
        out = dict.fromkeys(range(8), 0)
        ifs = self._ifstate(dev, port)
        if not ifs:
            return out
        for f in self.faults.counted("lossless_drops", device=dev, port=port):
            out[int(f.params["queue"]) % 8] += self._grown(f, DROPS_PER_S, now)
        for f in self.faults.counted("congestion", device=dev, port=port):
            q = int(f.params["queue"]) % 8
            if q not in ifs.ecn and not self.paced(dev, port, q):
                out[q] += self._grown(f, DROPS_PER_S, now)
        for prio, wd in self.watchdog_status(dev, port, now).items():
            out[prio] += int(wd["droppedPackets"])
        return out

    def dropping_queues(self, dev: str, port: str, now: float | None = None) -> set[int]:
        """Queues that drop packets at `now` (their drop counters are growing, not only non-zero)."""
        now = time.time() if now is None else now
        ifs = self._ifstate(dev, port)
        if not ifs:
            return set()
        out = {int(f.params["queue"]) % 8 for f in self.faults.of("lossless_drops", device=dev, port=port)
               if f.active(now)}
        out |= {int(f.params["queue"]) % 8 for f in self.faults.of("congestion", device=dev, port=port)
                if f.active(now) and int(f.params["queue"]) % 8 not in ifs.ecn
                and not self.paced(dev, port, int(f.params["queue"]) % 8)}
        wd = ifs.watchdog
        if wd and wd.action == "drop":
            out |= {p for p, st in self.watchdog_status(dev, port, now).items() if st["stormDetected"]}
        return out

    def ecn_marks(self, dev: str, port: str, now: float | None = None) -> dict[int, int | None]:
        """ECN-marked packets per queue; None where ECN is not configured on the queue.

        Under congestion the queue stands at `depth` bytes (default: halfway between the thresholds) and
        packets are marked with the WRED/ECN probability the configured thresholds give at that depth.
        """
        now = time.time() if now is None else now
        ifs = self._ifstate(dev, port)
        out: dict[int, int | None] = dict.fromkeys(range(8))
        if not ifs:
            return out
        for q in ifs.ecn:
            out[q] = 0
        for f in self.faults.counted("congestion", device=dev, port=port):
            q = int(f.params["queue"]) % 8
            if q in ifs.ecn:
                rate = ECN_MARKS_PER_S * mark_probability(ifs.ecn[q], f.params.get("depth"))
                out[q] = (out[q] or 0) + self._grown(f, rate, now)
        return out

    def wred_counters(self, dev: str, port: str, now: float | None = None) -> dict[int, tuple[int, int]]:
        """Per queue where WRED/ECN runs (ECN configured on it): (packets dropped, packets ECN-marked)."""
        now = time.time() if now is None else now
        drops = self.queue_drops(dev, port, now)
        return {q: (drops[q], m) for q, m in self.ecn_marks(dev, port, now).items() if m is not None}

    def clear_watermarks(self, dev: str, kind: str = "user", now: float | None = None) -> None:
        """A watermark clear on the device (every port): later reads start from the occupancy since then.
        `kind` names the set cleared ("user", "persistent"): a device may keep several, cleared apart."""
        self._wm_cleared[(dev, kind)] = time.time() if now is None else now

    def queue_watermarks(self, dev: str, port: str, now: float | None = None, kind: str = "user") -> dict[int, int]:
        """Peak occupancy (bytes) per egress queue since the device's last clear of `kind`.

        A congestion fault holds its queue at `depth` (default halfway between the queue's ECN thresholds, a
        full queue without ECN); a PFC storm received on the port holds the paused priority's queue full, as do
        lossless drops. A condition counts when it was on at some time after the clear.
        """
        now = time.time() if now is None else now
        since = self._wm_cleared.get((dev, kind), 0.0)
        out = dict.fromkeys(range(8), 0)
        ifs = self._ifstate(dev, port)
        if not ifs:
            return out

        def on_since(f: Fault) -> bool:
            return f.active_s(now) > f.active_s(since)

        for f in self.faults.counted("congestion", device=dev, port=port):
            q = int(f.params["queue"]) % 8
            if on_since(f):
                out[q] = max(out[q], queue_depth(ifs.ecn.get(q), f.params.get("depth")))
        for f in self.faults.counted("lossless_drops", device=dev, port=port):
            q = int(f.params["queue"]) % 8
            if on_since(f):
                out[q] = max(out[q], FULL_QUEUE_BYTES)
        if ifs.pfc_enabled:
            for f in self.faults.counted("pfc_storm", device=dev, port=port):
                q = int(f.params["priority"]) % 8
                if on_since(f):
                    out[q] = max(out[q], FULL_QUEUE_BYTES)
        return out

    def congested_queues(self, dev: str, port: str, now: float | None = None) -> set[int]:
        """Queues standing above empty at `now`: a congestion, lossless drops or a received pause storm is on."""
        now = time.time() if now is None else now
        out = {int(f.params["queue"]) % 8 for kind in ("congestion", "lossless_drops")
               for f in self.faults.of(kind, device=dev, port=port) if f.active(now)}
        return out | {int(f.params["priority"]) % 8 for f in self.faults.of("pfc_storm", device=dev, port=port)
                      if f.active(now)}

    def pause_transitions(self, dev: str, port: str, now: float | None = None) -> dict[int, int]:
        """Per priority: pauses received that have ended (pause -> no pause transitions), where PFC is on."""
        now = time.time() if now is None else now
        out = dict.fromkeys(range(8), 0)
        ifs = self._ifstate(dev, port)
        if not ifs or not ifs.pfc_enabled:
            return out
        for f in self.faults.counted("pfc_storm", device=dev, port=port):
            full, last, _ = f.windows_until(now)
            out[int(f.params["priority"]) % 8] += full + (1 if last > 0 and not f.active(now) else 0)
        return out


def pause_totals(pfc: dict[int, dict[str, int]]) -> tuple[int, int]:
    """(received, sent) pause frames of a port over all priorities, from its Fabric.pfc_counters."""
    return sum(c["rx"] for c in pfc.values()), sum(c["tx"] for c in pfc.values())


def queue_depth(ecn: EcnQueue | None, depth: object = None) -> int:
    """The standing queue (bytes) of a congestion: its `depth`, else halfway between the ECN thresholds, else
    (no ECN on the queue: it overflows) a full queue."""
    if depth is not None:
        return int(float(str(depth)))
    if ecn is not None:
        return (ecn.min_bytes + ecn.max_bytes) // 2
    return FULL_QUEUE_BYTES


def mark_probability(ecn: EcnQueue, depth: object = None) -> float:
    """The RED/ECN marking probability at a standing queue of `depth` bytes (linear from the minimum to
    the maximum threshold up to max_mark_probability, every packet above the maximum)."""
    lo, hi = ecn.min_bytes or 0, ecn.max_bytes or 0
    q = float(str(depth)) if depth is not None else (lo + hi) / 2
    if q <= lo:
        return 0.0
    if q >= hi:
        return 1.0
    return (ecn.max_mark_probability / 100) * (q - lo) / (hi - lo)

