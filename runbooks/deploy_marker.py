"""Device-side deploy markers: a deploy holds the devices it is about to change against other operators on
other hosts (the site lock only covers this host).

Before the first commit every device of the rollout is claimed: its platform's marker hook
(a DeployPolicy that is a MarksDevices) lists what holds the device; another deploy's marker refuses the device (one line: the
marker and its age) unless --break-lock, which removes it; our marker is then placed. Two deploys that claim
at the same moment both see each other's marker on the second read: the later one (by start time, then name)
backs off. Markers are removed when the deploy ends. Platforms without a marker hook are not claimed.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nornir.core.task import Result, Task

from nr_run.platforms import registry
from nr_run.platforms.base import MARKER_PREFIX, DeviceMarker, Hold, MarksDevices, marker_time


class ForeignPending(Exception):
    """The device has a pending commit, config session or deploy marker that this run did not start."""


class MarkerHeld(ForeignPending):
    """Another nr-run deploy's marker is on the device."""


class SessionPending(ForeignPending):
    """Another tool's configuration session is pending on the device."""


def hook(platform: str) -> DeviceMarker | None:
    policy = registry.get(platform).deploy
    return policy.marker if isinstance(policy, MarksDevices) else None


def _driver(task: Task) -> Any:
    connection = registry.get(task.host.platform or "").transport.deploy_connection
    return task.host.get_connection(connection, task.nornir.config)


def age_text(since: datetime | None, now: datetime | None = None) -> str:
    if since is None:
        return "of unknown age"
    seconds = max(0, int(((now or datetime.now(UTC)) - since).total_seconds()))
    if seconds < 120:
        return f"placed {seconds} s ago"
    if seconds < 7200:
        return f"placed {seconds // 60} min ago"
    return f"placed {seconds // 3600} h {seconds % 3600 // 60} min ago"


def _refusal(hold: Hold) -> str:
    return (f"held by another nr-run deploy: marker {hold.name} ({age_text(hold.since)}); "
            "not touching it (--break-lock removes the marker)")


def _order(name: str) -> tuple[datetime, str]:
    return (marker_time(name) or datetime.min.replace(tzinfo=UTC), name)


def _foreign_sessions(holds: list[Hold]) -> None:
    others = [h for h in holds if not h.nr_run]
    if others:
        raise SessionPending(f"another configuration session is pending on the device ({others[0].name}); "
                             "not touching it")


def _check_holds(marker: DeviceMarker, driver: Any, break_lock: bool, earlier: Collection[str]) -> list[Hold]:
    """The device's holds, when none refuses it (judge_holds)."""
    return judge_holds(marker.holds(driver), break_lock, earlier)


def judge_holds(holds: list[Hold], break_lock: bool, earlier: Collection[str]) -> list[Hold]:
    """`holds` when none refuses the device: another tool's pending session always does, another deploy's
    marker unless break_lock or it is one of our `earlier` runs'."""
    _foreign_sessions(holds)
    foreign = [h for h in holds if h.name not in earlier]
    if foreign and not break_lock:
        raise MarkerHeld(_refusal(foreign[0]))
    return holds


def earlier_markers(artifacts: Path | str, site: str) -> frozenset[str]:
    """Markers of this artifacts folder's earlier deploys of `site` (their run folders carry the same time
    stamp). One still on a device was left by a run that died: this run, holding the host's site lock, takes it
    over without --break-lock."""
    runs = Path(artifacts) / "runs" / site
    if not runs.is_dir():
        return frozenset()
    return frozenset(f"{MARKER_PREFIX}{site}-{d.name.split('-')[0]}" for d in runs.glob("*-deploy"))


def guard(driver: Any, platform: str, break_lock: bool = False, earlier: Collection[str] = ()) -> list[Hold]:
    """Before a candidate is loaded: refuse a device another deploy or tool holds (platforms with a marker
    hook; the hook's read replaces the driver's own session check). With break_lock another deploy's marker
    does not refuse the device, nor does an `earlier` one of our own (the claim before the first commit
    removes them). The holds read (none without a hook)."""
    marker = hook(platform)
    return _check_holds(marker, driver, break_lock, earlier) if marker is not None else []


def release_earlier(driver: Any, platform: str, earlier: Collection[str], holds: list[Hold]) -> list[str]:
    """Take markers of `earlier` (dead) runs off a device that has just been read back with no commit pending
    (the deploy's guard, whose read gave `holds`): the names removed. Any other hold stays."""
    marker = hook(platform)
    if marker is None or not earlier:
        return []
    removed = []
    for hold in holds:
        if hold.nr_run and hold.name in earlier:
            marker.remove(driver, hold.name)
            removed.append(hold.name)
    return removed


def claim_device(task: Task, marker_name: str, break_lock: bool = False, earlier: Collection[str] = ()) -> Result:
    """Refuse the device if another deploy (or tool) holds it, else mark it as ours (`marker_name`). Markers of
    `earlier` runs of ours are removed; another deploy's only with break_lock."""
    marker = hook(task.host.platform or "")
    if marker is None:
        return Result(host=task.host, result="no marker on this platform")
    driver = _driver(task)
    holds = _check_holds(marker, driver, break_lock, earlier)
    broken = []
    for hold in holds:
        marker.remove(driver, hold.name)
        whose = "left by a run that is no longer running" if hold.name in earlier else "--break-lock"
        broken.append(f"removed marker {hold.name} ({age_text(hold.since)}, {whose})")
    marker.place(driver, marker_name)
    # a deploy that claimed at the same time placed its marker too: the earlier one keeps the device
    rivals = [h for h in marker.holds(driver) if h.nr_run and _order(h.name) < _order(marker_name)]
    if rivals and not break_lock:
        marker.remove(driver, marker_name)
        raise MarkerHeld(_refusal(rivals[0]))
    return Result(host=task.host, result="; ".join(broken) or "marked")


def release_device(task: Task, marker_name: str) -> Result:
    marker = hook(task.host.platform or "")
    if marker is not None:
        marker.remove(_driver(task), marker_name)
    return Result(host=task.host, result="released")
