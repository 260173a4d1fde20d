"""The history report of a time window: new and resolved findings, counter increases and rates, the ports with
the most pause, and one timeline of fabric events, findings and deploy actions (the audit log).

`site_report(store, since, until, audit)` returns the JSON document (schema "nr-run.report/1",
docs/history.md); `ports` restricts it to a set of (device, port) (a job's ports, runbooks.job).
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Collection as Container
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from nr_run.history.model import GAUGES, NO_INDEX, PAUSE_FRAMES, PAUSE_TIME
from nr_run.history.rates import delta, increase, resets
from nr_run.history.store import HistoryStore, SeriesKey

SCHEMA = "nr-run.report/1"
WINDOWS = {"5m": 300.0, "1h": 3600.0}     # rate windows ending at the report's end, besides the whole window
TOP = 10
RELATE_S = 3600.0           # a fabric event is related to the last deploy action at most this long before it
GROUP = 5                  # more findings than this new (or resolved) in one run: one timeline line
Port = tuple[str, str]


def iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


_YEAR_10000 = 253402300800.0


def parse_iso(text: str) -> float | None:
    """An ISO 8601 time (UTC unless it says otherwise) as Unix seconds; None when it is not one, or lies outside
    1970..9999 (a time the report could not print back)."""
    try:
        dt = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    t = (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()
    return t if 0 <= t < _YEAR_10000 else None


@dataclass
class SeriesWindow:
    """One counter series over the window: readings as (time, value), the first being the baseline."""

    key: SeriesKey
    points: list[tuple[float, int]]
    sampled: list[float]                 # every time its device was sampled (values unchanged between points)

    def increase(self, start: float | None = None) -> int:
        pts = self.points if start is None else self._from(start)
        return increase(v for _, v in pts)

    def _from(self, start: float) -> list[tuple[float, int]]:
        """The points from the value in force at `start` (the last reading at or before it) on."""
        i = bisect.bisect_right([t for t, _ in self.points], start)
        return self.points[max(0, i - 1):]

    def span(self, start: float | None = None) -> float:
        times = self.sampled if start is None else [t for t in self.sampled if t >= start] or self.sampled[-1:]
        if start is not None:
            before = [t for t in self.sampled if t < start]
            times = before[-1:] + times
        return times[-1] - times[0] if len(times) > 1 else 0.0

    def rate(self, start: float | None = None) -> float | None:
        span = self.span(start)
        return self.increase(start) / span if span > 0 else None

    def peak(self) -> float | None:
        """The highest rate between two consecutive samples of the device (a change is dated from the sample
        before it, when the value was still the old one)."""
        best = None
        for (_, v0), (t1, v1) in zip(self.points, self.points[1:], strict=False):
            i = bisect.bisect_left(self.sampled, t1)
            if i == 0:
                continue
            dt = t1 - self.sampled[i - 1]
            if dt > 0:
                r = delta(v0, v1) / dt
                best = r if best is None else max(best, r)
        return best

    def resets(self) -> int:
        return resets([v for _, v in self.points])


COUNTER_WORDS = {"pfc_rx_frames": "PFC pause frames received", "pfc_tx_frames": "PFC pause frames sent",
                 "pfc_rx_pause_us": "PFC pause time received", "pfc_tx_pause_us": "PFC pause time sent",
                 "ecn_marked_packets": "ECN marks", "queue_dropped_packets": "queue drops"}


def onsets(windows: list[SeriesWindow], since: float) -> list[dict[str, Any]]:
    """When a counter began to grow after a sample without growth, and when it stopped (a sample without
    growth after growing): the start and end of a pause storm, a congestion episode or drops, whether or not a
    watchdog or a check saw it. Dated at the first sample that showed the change; a counter already growing
    when the window starts (and not at zero then) has no "began"."""
    out: list[dict[str, Any]] = []
    for w in windows:
        device, port, counter, idx = w.key
        if counter not in COUNTER_WORDS:
            continue
        # only the samples from the series' first reading on: a device sampled before it had this counter
        # (a source that does not read it) says nothing about whether it grew
        sampled = [t for t in w.sampled if w.points and t >= w.points[0][0]]
        values, j = [], 0
        for t in sampled:
            while j + 1 < len(w.points) and w.points[j + 1][0] <= t:
                j += 1
            values.append(w.points[j][1])
        # before the first reading: unknown, except that a counter still at zero had not been growing
        growing = [False if values and values[0] == 0 else None]
        growing += [delta(a, b) > 0 for a, b in zip(values, values[1:], strict=False)]
        for i in range(1, len(values)):
            if growing[i] == growing[i - 1] or sampled[i] < since:
                continue
            dt = sampled[i] - sampled[i - 1]
            rate = delta(values[i - 1], values[i]) / dt if growing[i] and dt > 0 else None
            out.append({"t": sampled[i], "device": device, "port": port, "kind": "counter", "counter": counter,
                        "idx": idx, "old": "steady" if growing[i] else "rising",
                        "new": "rising" if growing[i] else "steady", "per_second": _rnd(rate)})
    return sorted(out, key=lambda e: (e["t"], e["device"], e["port"], e["counter"], e["idx"]))


def counter_windows(store: HistoryStore, since: float, until: float, counters: Iterable[str] | None = None,
                    ports: Container[Port] | None = None) -> list[SeriesWindow]:
    """Series that changed in [since, until] (one row is only a baseline: no increase), restricted to `ports`."""
    times = store.sample_times(since, until)
    runs = [r for lst in times.values() for r, _ in lst]
    if not runs:
        return []
    rows = store.series_rows(min(runs), max(runs), counters)
    out = []
    for key, lst in sorted(rows.items()):
        device, port = key[0], key[1]
        if len(lst) < 2 or device not in times or (ports is not None and (device, port) not in ports):
            continue
        by_run = dict(times[device])
        sampled = [t for _, t in times[device]]
        points = [(max(by_run.get(run, sampled[0]), sampled[0]), value) for run, value in lst]
        out.append(SeriesWindow(key, points, sampled))
    return out


def _rnd(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def rates(windows: list[SeriesWindow], until: float, top: int = TOP) -> list[dict[str, Any]]:
    """Counters that grew, most first per counter: increase, average and peak rates, rates over WINDOWS."""
    by_counter: dict[str, list[dict[str, Any]]] = {}
    for w in windows:
        device, port, counter, idx = w.key
        if counter in GAUGES:
            continue
        inc = w.increase()
        if inc <= 0:
            continue
        by_counter.setdefault(counter, []).append({
            "device": device, "port": port, "counter": counter, "index": None if idx == NO_INDEX else idx,
            "increase": inc, "per_second": _rnd(w.rate()), "peak_per_second": _rnd(w.peak()),
            "resets": w.resets(),
            "windows": {name: _rnd(w.rate(until - s)) for name, s in WINDOWS.items()}})
    out = []
    for counter in sorted(by_counter):
        rows = sorted(by_counter[counter], key=lambda r: (-r["increase"], r["device"], r["port"], r["index"] or 0))
        out += rows[:top]
    return out


def top_pause(store: HistoryStore, windows: list[SeriesWindow], top: int = TOP) -> dict[str, Any]:
    """Ports (and priorities) with the most pause: pause time where a platform reports it, else pause frames."""
    has_time = store.db.execute(f"SELECT 1 FROM series WHERE counter IN ({','.join('?' * len(PAUSE_TIME))}) "
                                "LIMIT 1", PAUSE_TIME).fetchone() is not None
    names = PAUSE_TIME if has_time else PAUSE_FRAMES
    totals: dict[tuple[str, str, int], dict[str, int]] = {}
    for w in windows:
        device, port, counter, idx = w.key
        if counter in names:
            direction = "rx" if "_rx_" in counter else "tx"
            totals.setdefault((device, port, idx), {"rx": 0, "tx": 0})[direction] += w.increase()
    rows: list[dict[str, Any]] = [{"device": d, "port": p, "priority": None if i == NO_INDEX else i, "rx": v["rx"], "tx": v["tx"],
             "total": v["rx"] + v["tx"]} for (d, p, i), v in totals.items() if v["rx"] + v["tx"] > 0]
    rows.sort(key=lambda r: (-r["total"], r["device"], r["port"], r["priority"] or 0))
    return {"measure": "pause_time_us" if has_time else "pause_frames",
            "note": "" if has_time else "pause duration is not exposed by these devices' collectors: ranked by "
                                        "PFC pause frames",
            "ports": rows[:top]}


# ------------------------------------------------------------------ timeline

def _event_text(e: Mapping[str, Any]) -> str:
    where = f"{e['device']} {e['port']}"
    if e["kind"] == "counter":
        which = "" if e["idx"] == NO_INDEX else (" prio " if "pfc" in e["counter"] else " queue ") + str(e["idx"])
        what = f"began rising ({e['per_second']:,.0f}/s)" if e["new"] == "rising" else "stopped rising"
        return f"{COUNTER_WORDS[e['counter']]} on {where}{which} {what}"
    if e["kind"] == "storm":
        what = "began" if e["new"] == "stormed" else "ended"
        return f"PFC storm on {where} prio {e['idx']} {what}"
    if e["kind"] == "link":
        return f"link {where} went {e['new']}" + (f" (was {e['old']})" if e["old"] else "")
    return f"BGP {e['device']} -> {e['port']}: {e['old'] or 'unknown'} -> {e['new']}"


def audit_actions(audit: Iterable[Mapping[str, Any]], site: str, since: float, until: float) -> list[dict[str, Any]]:
    """Finished device actions of the site (the audit log's end lines) in the window, with their stage."""
    starts: dict[str, Mapping[str, Any]] = {}
    out = []
    for line in audit:
        if line.get("site") != site:
            continue
        if line.get("phase") == "start":
            starts[str(line.get("id"))] = line
            continue
        t = parse_iso(str(line.get("time", "")))
        if t is None or not since <= t <= until:
            continue
        start = starts.get(str(line.get("id")), {})
        stage = str(start.get("detail", "")).split(",")[0].strip()
        out.append({"t": t, "device": line.get("device", ""), "action": line.get("action", ""),
                    "outcome": line.get("outcome", ""), "stage": stage, "run": line.get("run", "")})
    return out


def timeline(events: list[dict[str, Any]], new: list[dict[str, Any]], resolved: list[dict[str, Any]],
             actions: list[dict[str, Any]], since: float | None = None,
             peers: Mapping[Port, str] | None = None) -> list[dict[str, Any]]:
    """One list in time order; a fabric event or finding says how long after a deploy action it came, only when
    it touches what that action changed: the action's device is the event's device, or the far end of its port
    (`peers`: (device, port) -> the cabled far device; a finding names its own `peer_device`). The latest such
    action within RELATE_S counts; an event nothing changed nearby is related to nothing. Actions before
    `since` only serve that, and are not listed."""
    items: list[dict[str, Any]] = []
    for a in actions:
        stage = f"{a['stage']}: " if a["stage"] else ""
        items.append({"t": a["t"], "source": "audit", "device": a["device"], "port": "",
                      "text": f"{stage}{a['device']} {a['action']} {a['outcome']}"})
    for e in events:
        items.append({"t": e["t"], "source": "fabric", "device": e["device"], "port": e["port"],
                      "text": _event_text(e), "_near": {e["device"], (peers or {}).get((e["device"], e["port"]), "")}})
    groups: dict[tuple[float, str], list[dict[str, Any]]] = {}
    for f, what, t in [(f, "new finding", f["first_seen"]) for f in new] + \
                      [(f, "resolved", f["resolved"]) for f in resolved]:
        groups.setdefault((t, what), []).append(f)
    for (t, what), fs in groups.items():
        if len(fs) > GROUP:     # a deploy or an outage changes many at once: one line with counts per check
            by_check = _count(f["check"] for f in fs)
            items.append({"t": t, "source": "finding", "device": "", "port": "", "count": len(fs),
                          "text": f"{what}: {len(fs)} findings ("
                                  + ", ".join(f"{c} {n}" for c, n in by_check.items()) + ")",
                          "_near": {f["device"] for f in fs} | {f.get("peer_device") or "" for f in fs}})
            continue
        for f in fs:
            items.append({"t": t, "source": "finding", "device": f["device"], "port": f["port"],
                          "text": f"{what}: {f['check']} {f['device']} {f['target']}".rstrip()
                                  + (f" ({f['observed']})" if what == "new finding" else ""),
                          "_near": {f["device"], f.get("peer_device") or "",
                                    (peers or {}).get((f["device"], f["port"]), "")}})
    items.sort(key=lambda i: (i["t"], i["source"] != "audit", i["text"]))
    last: dict[str, dict[str, Any]] = {}         # device -> its latest deploy action so far
    for it in items:
        near = it.pop("_near", set())
        if it["source"] == "audit":
            last[it["device"]] = it
            continue
        related = [last[d] for d in near if d and d in last and it["t"] - last[d]["t"] <= RELATE_S]
        if related:
            act = max(related, key=lambda a: (a["t"], a["text"]))
            it["after"] = {"seconds": round(it["t"] - act["t"]), "action": act["text"]}
            it["text"] += f", {round(it['t'] - act['t'])} s after {act['text']}"
    items = [it for it in items if since is None or it["t"] >= since]
    for it in items:
        it["time"] = iso(it["t"])
    return items


def site_report(store: HistoryStore, since: float, until: float, audit: Iterable[Mapping[str, Any]] = (),
                ports: set[Port] | None = None, devices: set[str] | None = None,
                top: int = TOP, peers: Mapping[Port, str] | None = None) -> dict[str, Any]:
    """The report of [since, until]; with `ports`/`devices`, only what happens on those ports (and anywhere on
    those devices), and only the deploy actions on their devices."""
    scoped = ports is not None or devices is not None
    on_devices = (devices or set()) | {d for d, _ in ports or set()}

    def mine(device: str, port: str) -> bool:
        return not scoped or device in (devices or set()) or (device, port) in (ports or set())

    runs = store.runs(since, until)
    new = [f for f in store.findings("first_seen >= ? AND first_seen <= ?", (since, until))
           if mine(f["device"], f["port"])]
    resolved = [f for f in store.findings("resolved >= ? AND resolved <= ?", (since, until))
                if mine(f["device"], f["port"])]
    active = [f for f in store.findings("first_seen <= ? AND (resolved IS NULL OR resolved >= ?)", (until, since))
              if mine(f["device"], f["port"])]
    events = [e for e in store.events(since, until) if mine(e["device"], e["port"])]
    windows = counter_windows(store, since, until,
                              ports={k for k in _all_series(store) if mine(*k)} if scoped else None)
    actions = [a for a in audit_actions(audit, store.site, since - RELATE_S, until)
               if not scoped or a["device"] in on_devices]
    flaps: dict[tuple[str, str], int] = {}
    for e in events:
        if e["kind"] == "link" and e["new"] == "down":
            flaps[(e["device"], e["port"])] = flaps.get((e["device"], e["port"]), 0) + 1
    changes = onsets(windows, since)
    lines = timeline(sorted(events + changes, key=lambda e: e["t"]), new, resolved, actions, since, peers)
    for f in new + resolved + active:
        for k in ("first_seen", "last_seen", "resolved"):
            f[k] = iso(f[k])
        f.pop("id", None)                  # the row: a report names a finding by its id (Finding.id)
        f["id"] = f.pop("fid")
    return {
        "schema": SCHEMA, "site": store.site, "since": iso(since), "until": iso(until),
        "runs": {"count": len(runs), "by_kind": _count(r["kind"] for r in runs),
                 "by_source": _count(r["source"] for r in runs),
                 "first": iso(runs[0]["started"]) if runs else None, "last": iso(runs[-1]["started"]) if runs else None},
        "findings": {"new": new, "resolved": resolved,
                     "open": [f for f in active if f["resolved"] is None]},
        "rates": rates(windows, until, top),
        "top_pause": top_pause(store, windows, top),
        "link_flaps": [{"device": d, "port": p, "flaps": n} for (d, p), n in sorted(flaps.items())],
        "events": [{**e, "time": iso(e["t"])} for e in events],
        "counter_changes": [{**e, "time": iso(e["t"])} for e in changes],
        "timeline": lines,
    }


def _all_series(store: HistoryStore) -> list[Port]:
    return [(d, p) for d, p in store.db.execute("SELECT DISTINCT device, port FROM series")]


def _count(items: Iterable[str]) -> dict[str, int]:
    return dict(sorted(Counter(items).items()))
