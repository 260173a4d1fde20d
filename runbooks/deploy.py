"""Deploy runbook: dry-run diffs, then staged commits with revert timers, post-checks and rollback.

The device-level steps are plain Nornir tasks (usable from a user's own script):

    nr.run(task=diff_device, config=text, replace=False)
    nr.run(task=commit_device, config=text, replace=False, revert_in=300)
    nr.run(task=confirm_device) / nr.run(task=rollback_device)

`Deployment` composes them into the rollout. A device is changed only through NAPALM's
load -> compare -> commit(revert_in) -> confirm_commit | rollback, so a failed stage leaves each device
with its full old or full new config, and a process that dies before confirming is reverted by the
device's own timer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nornir.core import Nornir
from nornir.core.filter import F
from nornir.core.task import Result, Task

from nr_run.intent.models import FabricIntent
from nr_run.platforms import registry
from nr_run.platforms.base import COMMIT, ApplyMethod, DeployPolicy, LeftUntouched, ReplaceCandidate
from nr_run.runbooks.deploy_marker import (
    ForeignPending,
    MarkerHeld,
    SessionPending,
    claim_device,
    earlier_markers,
    guard,
    release_device,
)
from nr_run.runbooks.failures import result_cause, result_traceback
from nr_run.runbooks.interrupt import Interrupted, Stop, bounded
from nr_run.runbooks.plan import Stage, plan_rollout
from nr_run.runbooks.progress import DeviceProgress, ProgressProcessor
from nr_run.runbooks.records import AWAITING_REVERT, RunRecords, unfinished
from nr_run.validators.base import Finding

if TYPE_CHECKING:
    from nr_run.runbooks.check import CheckReport
    from nr_run.runbooks.deploy_checks import StageGate

# Nornir task name -> the device state shown while it runs
TASK_LABELS = {"diff_device": "diffing", "running_config": "backing up", "commit_device": "committing",
               "confirm_device": "confirming", "rollback_device": "rolling back", "device_status": "reading",
               "claim_device": "marking", "release_device": "unmarking"}
# Extra seconds after a revert timer's deadline before a device that is not back on its backup is reported
REVERT_GRACE_S = 10.0
POLL_S = 1.0          # reading a device left to its timer, once the timer is due (or it looks stranded)
POLL_EARLY_S = 5.0    # ... and before that


def _policy(platform: str) -> DeployPolicy:
    policy = registry.get(platform).deploy
    if policy is None:
        raise ValueError(f"platform {platform!r} is not deployed by nr-run")
    return policy


def check_policies(platforms: set[str], commit: bool = False) -> None:
    """Read every deploy policy the run needs before touching a device (PolicyMissing fails the run); a commit
    also needs every platform's device marker (registry.MissingCapability)."""
    if commit:
        registry.require(platforms, COMMIT)
    for name in sorted(platforms):
        _policy(name).check()


def _driver(task: Task) -> Any:
    """The connection the host's platform deploys through (NAPALM for the built-in switch platforms)."""
    connection = registry.get(task.host.platform or "").transport.deploy_connection
    return task.host.get_connection(connection, task.nornir.config)


def _load(device, config: str, replace: bool) -> None:
    if replace:
        device.load_replace_candidate(config=config)
    else:
        device.load_merge_candidate(config=config)


def _candidate(task: Task, device: Any, config: str, replace: bool) -> str:
    """What a load sends: the rendered config, or for a replace what the platform's policy makes of it (EOS
    carries the running config's local users and AAA over: the inventory never holds them)."""
    policy = _policy(task.host.platform or "")
    if not replace or not isinstance(policy, ReplaceCandidate):
        return config
    return policy.replace_candidate(device.get_config(retrieve="running")["running"], config)


def _guard_pending(task: Task, device, break_lock: bool = False, earlier: Collection[str] = ()) -> None:
    if device.has_pending_commit():
        raise ForeignPending("a commit-confirm by someone else is pending on the device; not touching it")
    guard(device, task.host.platform or "", break_lock, earlier)


def _load_guarded(device, config: str, replace: bool) -> None:
    try:
        _load(device, config, replace)
    except Exception as exc:  # NAPALM's SessionLockedException has no common base we can rely on
        if type(exc).__name__ == "SessionLockedException":
            raise ForeignPending(f"another configuration session is pending on the device ({exc})") from exc
        raise


def diff_device(task: Task, config: str, replace: bool = False, break_lock: bool = False,
                earlier: Collection[str] = ()) -> Result:
    """Load the candidate, diff it against running, discard it. A device another deploy marked is refused
    (unless break_lock, or the marker is one of our `earlier` runs': runbooks.deploy_marker)."""
    device = _driver(task)
    _guard_pending(task, device, break_lock, earlier)
    _load_guarded(device, _candidate(task, device, config, replace), replace)
    try:
        diff = device.compare_config()
        method = _apply_method(task, device) if diff else None
    finally:
        device.discard_config()
    return Result(host=task.host, diff=diff, changed=bool(diff), result=diff, method=method)


def _apply_method(task: Task, device: Any) -> tuple[str, str] | None:
    """(method, why) from the platform's deploy policy, for policies that tell (SONiC: gcu | drained apply)."""
    policy = _policy(task.host.platform or "")
    if not isinstance(policy, ApplyMethod):
        return None
    return policy.apply_method(device.get_config(retrieve="running")["running"],
                               device.get_config(retrieve="candidate")["candidate"])


def running_config(task: Task) -> Result:
    """The running config with secrets masked (it is written to the artifacts)."""
    return Result(host=task.host, result=_driver(task).get_config(retrieve="running", sanitized=True)["running"])


def commit_device(task: Task, config: str, replace: bool = False, revert_in: int = 300) -> Result:
    """Commit with a device-side revert timer; confirm_device must follow or the device reverts itself."""
    device = _driver(task)
    _guard_pending(task, device)
    _load_guarded(device, _candidate(task, device, config, replace), replace)
    diff = device.compare_config()
    if not diff:
        device.discard_config()
        return Result(host=task.host, diff="", changed=False, result="no change")
    device.commit_config(revert_in=revert_in)
    return Result(host=task.host, diff=diff, changed=True, result="committed, waiting for confirm")


def confirm_device(task: Task) -> Result:
    _driver(task).confirm_commit()
    return Result(host=task.host, result="confirmed")


def device_status(task: Task) -> Result:
    """The running config (masked, as backed up) and whether a commit-confirm is pending on the device."""
    device = _driver(task)
    running = device.get_config(retrieve="running", sanitized=True)["running"]
    return Result(host=task.host, result={"running": running, "pending": bool(device.has_pending_commit())})


def rollback_device(task: Task) -> Result:
    device = _driver(task)
    device.rollback()
    return Result(host=task.host, result=device.get_config(retrieve="running", sanitized=True)["running"])


@dataclass
class DeviceOutcome:
    name: str
    platform: str
    role: str
    # no change | diffed | confirmed | rolled back | reverted | failed | skipped | untouched | interrupted
    state: str = "pending"
    diff: str = ""
    detail: str = ""
    stage: str = ""
    method: str = ""                # how the change is applied ("gcu", "drained apply: <why>"), when the policy says

    def added_removed(self) -> tuple[int, int]:
        lines = self.diff.splitlines()
        return (sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++")),
                sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---")))

    def as_dict(self) -> dict[str, Any]:
        added, removed = self.added_removed()
        return {"device": self.name, "platform": self.platform, "role": self.role, "state": self.state,
                "stage": self.stage, "added": added, "removed": removed, "detail": self.detail,
                "method": self.method}


@dataclass
class DeployReport:
    site: str
    commit: bool
    devices: dict[str, DeviceOutcome]
    stages: list[Stage] = field(default_factory=list)
    stopped_at: str = ""
    checks: list[Finding] = field(default_factory=list)        # new failed findings that stopped a stage
    preexisting: list[Finding] = field(default_factory=list)   # failing already in the baseline (unique by id)
    baseline: dict[str, Any] | None = None
    reconciled: list[dict[str, Any]] = field(default_factory=list)    # unfinished audit lines of earlier runs
    interrupted: str = ""
    message: str = ""
    final_check: dict[str, Any] | None = None    # whole-site post-check after the last stage

    @property
    def failed(self) -> bool:
        # the final check fails the deploy only on what is new since the baseline (pre-existing is reported)
        if self.final_check is not None and not self.final_check.get("passed", False):
            return True
        return bool(self.stopped_at or self.interrupted) or any(
            d.state in ("failed", "rolled back", "reverted", "interrupted") for d in self.devices.values())

    @property
    def pending(self) -> bool:
        return any(d.state == "diffed" for d in self.devices.values())

    def exit_code(self) -> int:
        if self.failed:
            return 1
        if any(d.state == "skipped" for d in self.devices.values()):
            return 1
        return 2 if self.pending else 0

    def as_dict(self) -> dict[str, Any]:
        return {"site": self.site, "commit": self.commit, "exit_code": self.exit_code(),
                "stopped_at": self.stopped_at, "message": self.message, "interrupted": self.interrupted,
                "stages": [{"name": s.name, "devices": list(s.devices)} for s in self.stages],
                "devices": [self.devices[n].as_dict() for n in sorted(self.devices)],
                "checks": [f.to_dict() for f in self.checks],
                "preexisting": [f.to_dict() for f in self.preexisting], "baseline": self.baseline,
                "reconciled": self.reconciled, "final_check": self.final_check}


class StepInterrupted(Exception):
    """A device step was abandoned on an interrupt; `done` holds the hosts that finished it."""

    def __init__(self, done: dict[str, Any], in_flight: list[str]):
        super().__init__(f"interrupted with {len(in_flight)} device call(s) in flight")
        self.done, self.in_flight = done, in_flight


class _Collect:
    """Nornir processor keeping each host's result as it completes (known even if the run is abandoned)."""

    def __init__(self, into: dict[str, Any]):
        self.into = into

    def task_started(self, task) -> None: ...
    def task_completed(self, task, result) -> None: ...
    def task_instance_started(self, task, host) -> None: ...

    def task_instance_completed(self, task, host, result) -> None:
        self.into[host.name] = result

    def subtask_instance_started(self, task, host) -> None: ...
    def subtask_instance_completed(self, task, host, result) -> None: ...



class Deployment:
    """One deploy run over the selected switches."""

    def __init__(self, nr: Nornir, intent: FabricIntent, configs: dict[str, str], records: RunRecords,
                 progress: DeviceProgress, *, replace: bool = False, revert_in: int = 300,
                 gate: StageGate | None = None, stop: Stop | None = None, marker: str | None = None,
                 break_lock: bool = False):
        self.nr, self.intent, self.configs, self.records = nr, intent, configs, records
        self.progress, self.replace, self.revert_in, self.gate = progress, replace, revert_in, gate
        if gate is not None:    # --confirm-timeout is the floor of every stage's timer (runbooks.revert_timer)
            gate.timer.floor_s = revert_in
        self.stop = stop
        # the device-side marker of this run (runbooks.deploy_marker); None: devices are not marked
        self.marker, self.break_lock = marker, break_lock
        self.earlier = earlier_markers(records.artifacts, intent.site) - {marker} if marker else frozenset()
        self.claimed: list[str] = []
        self.report = DeployReport(site=intent.site, commit=False, devices={
            n: DeviceOutcome(n, intent.devices[n].platform, intent.devices[n].role) for n in sorted(configs)})

    # ------------------------------------------------------------ plumbing

    def _run(self, names: list[str], task, **kwargs) -> dict[str, Any]:
        """Run a task on `names`; per-host MultiResults. On an interrupt, StepInterrupted after the grace."""
        self.nr.data.reset_failed_hosts()
        if not names:
            return {}
        done: dict[str, Any] = {}
        # per-device progress comes from Nornir itself (thread-safe processor events)
        nr = self.nr.filter(F(name__in=names)).with_processors(
            [ProgressProcessor(self.progress, TASK_LABELS), _Collect(done)])
        try:
            result = bounded(lambda: nr.run(task=task, **kwargs), self.stop)
        except Interrupted:
            raise StepInterrupted(dict(done), [n for n in names if n not in done]) from None
        out = {n: result[n] for n in names}
        for n, multi in out.items():
            if multi.failed:
                self.records.log(f"{n} {task.__name__} failed:\n{result_traceback(multi)}")
        return out

    def _run_per_host(self, names: list[str], task, per_host: Callable[[str], dict]) -> dict:
        """Nornir runs one kwargs set for all hosts; per-host configs go through a wrapper task."""
        def wrapper(t: Task) -> Result:
            return task(t, **per_host(t.host.name))
        wrapper.__name__ = task.__name__
        return self._run(names, wrapper)

    @staticmethod
    def _error(multi) -> str:
        return result_cause(multi)

    def _set(self, name: str, state: str, detail: str = "") -> None:
        out = self.report.devices[name]
        out.state, out.detail = state, detail
        self.progress.set(name, state, detail)

    # ------------------------------------------------------------ before anything

    def reconcile(self) -> list[dict[str, Any]]:
        """Read every device named by an unfinished audit line of this site (a run died between writing
        "start" and "end", or left a device to its revert timer): did it revert? Reported and closed."""
        lines = [ln for ln in unfinished(self.records.artifacts, self.intent.site)
                 if ln.get("device") in self.nr.inventory.hosts]
        if not lines:
            return []
        names = sorted({ln["device"] for ln in lines})
        self.progress.phase(f"reading back {len(lines)} unfinished action(s) of earlier runs")
        try:
            status = self._run(names, device_status)
        except StepInterrupted:
            return []
        for ln in lines:
            n = ln["device"]
            backup = Path(self.records.artifacts) / "runs" / self.intent.site / ln.get("run", "") / "backup" / f"{n}.running"
            multi = status[n]
            if multi.failed:
                verdict, closed = f"still unknown: cannot read the device ({self._error(multi)})", False
            elif multi[0].result["pending"]:
                verdict, closed = "a commit-confirm is still pending on the device; its revert timer decides", False
            elif not backup.exists():
                verdict, closed = "no backup from that run to compare with; running config read", True
            elif multi[0].result["running"] == backup.read_text(encoding="utf-8"):
                verdict, closed = "reverted: the running config equals the backup taken before the change", True
            else:
                verdict, closed = "kept the change: the running config differs from the backup taken before it", True
            item = {"device": n, "action": ln.get("action", ""), "run": ln.get("run", ""), "since": ln.get("time", ""),
                    "user": ln.get("user", ""), "outcome": verdict}
            self.report.reconciled.append(item)
            if closed:
                self.records.audit_end(ln["id"], n, ln.get("action", ""), "", f"reconciled: {verdict}",
                                       f"unfinished since {ln.get('time', '?')} (run {ln.get('run', '?')})",
                                       run=ln.get("run"))
        return self.report.reconciled

    def dry_run(self) -> None:
        names = sorted(self.configs)
        self.progress.phase(f"diffing {len(names)} device(s) against their rendered configs")
        for n in names:
            self.progress.set(n, "diffing")
        try:
            results = self._run_per_host(names, diff_device, lambda h: {
                "config": self.configs[h], "replace": self.replace, "break_lock": self.break_lock,
                "earlier": self.earlier})
        except StepInterrupted as exc:
            results = exc.done
            self.report.interrupted = self.stop.reason if self.stop else "interrupted"
            for n in exc.in_flight:
                self._set(n, "interrupted", "diff not finished: interrupted")
        for name in names:
            if name not in results:
                continue
            out = self.report.devices[name]
            multi = results[name]
            if multi.failed:
                out.state = "skipped" if isinstance(multi[0].exception, (ForeignPending, LeftUntouched)) else "failed"
                out.detail = self._error(multi)
            else:
                raw = multi[0].diff
                policy = _policy(out.platform)
                out.diff = policy.redact(raw)
                out.state = "diffed" if raw else "no change"
                method = getattr(multi[0], "method", None)
                if method:
                    out.method = f"{method[0]}: {method[1]}"
                    out.detail = out.detail or out.method
                cut = policy.lockouts(raw)
                if cut:
                    out.state = "skipped"
                    removed = policy.redact("; ".join(cut[:3]))
                    out.detail = f"refused: the change would remove management access ({removed})"
            self.records.write(f"diffs/{name}.diff", out.diff)
            self.progress.set(name, out.state, out.detail)

    def plan(self, canary: int, batch: str) -> list[Stage]:
        """The rollout stages over the devices with pending changes."""
        pending = [n for n, d in self.report.devices.items() if d.state == "diffed"]
        self.report.stages = plan_rollout(self.intent, pending, canary=canary, batch=batch)
        return self.report.stages

    # ------------------------------------------------------------ the rollout

    def final_check(self) -> CheckReport | None:
        """Every check (RDMA included) over the whole site once every stage is confirmed: reported, never rolled
        back. Its failures are split into new since the baseline and pre-existing (by id). None without a gate,
        or when interrupted (said in the report)."""
        from nr_run.runbooks.check import run_checks

        gate = self.gate
        if gate is None:
            return None
        try:
            checks = bounded(lambda: run_checks(self.nr, self.intent, None, gate.options), self.stop)
        except Interrupted:
            self.report.interrupted = self.stop.reason if self.stop is not None else "interrupted"
            self.report.message = "interrupted during the final whole-site check (every stage was confirmed)"
            return None
        if gate.recorder is not None:
            gate.recorder(checks, "deploy-final")
        declared = checks.declared_ids()          # known degradations the inventory declares fail nothing
        failed = [f for f in checks.findings if not f.passed and f.id not in declared]
        new, old = gate.split(failed)
        self.report.final_check = {"passed": not failed, "summary": checks.to_dict()["summary"],
                                   "failed": [f.to_dict() for f in failed], "new": [f.to_dict() for f in new],
                                   "preexisting": [f.to_dict() for f in old]}
        if new:
            self.report.message = (f"rollout confirmed, but {len(new)} finding(s) fail that passed before the deploy "
                                   f"(new); {len(old)} failed before it too (pre-existing)")
        elif old:
            self.report.message = (f"rollout confirmed; nothing new fails. {len(old)} finding(s) failed before the "
                                   "deploy and still fail (pre-existing, not caused by this deploy)")
        return checks

    def commit(self, canary: int, batch: str) -> None:
        self.report.commit = True
        if not self.report.stages:
            self.plan(canary, batch)
        try:
            if self.marker is not None and self.report.stages:
                if not self._claim():
                    return
                # a refused device may have been a stage's canary: plan again over the devices still to
                # change, so the batches never go first without a canary of their own
                self.plan(canary, batch)
                if not self.report.stages:
                    return
            self._rollout()
        finally:
            self._release()

    def _claim(self) -> bool:
        """Mark every device of the rollout as held by this run; devices another deploy (or tool) holds are
        refused (skipped: no longer pending). False when the rollout was interrupted."""
        names = [n for stage in self.report.stages for n in stage.devices]
        self.progress.phase(f"marking {len(names)} device(s) as held by this deploy ({self.marker})")
        try:
            results = self._run(names, claim_device, marker_name=self.marker, break_lock=self.break_lock,
                                earlier=self.earlier)
        except StepInterrupted as exc:
            self.claimed = [n for n, multi in exc.done.items() if not multi.failed]
            self._stop_before(0, "marking devices", interrupted=True)
            return False
        for n in names:
            multi = results[n]
            if not multi.failed:
                self.claimed.append(n)
                if multi[0].result.startswith("removed"):
                    self.records.log(f"{n}: {multi[0].result}")
                continue
            error = multi[0].exception
            held = isinstance(error, (MarkerHeld, SessionPending))
            self._set(n, "skipped" if held else "failed",
                      self._error(multi) if held else f"cannot mark the device as held: {self._error(multi)}")
        return True

    def _release(self) -> None:
        """Take this run's markers off the devices (not after an interrupt: the process is about to exit)."""
        if not self.claimed or self.marker is None or (self.stop is not None and self.stop.is_set()):
            return
        try:
            results = self._run(self.claimed, release_device, marker_name=self.marker)
        except StepInterrupted:
            return
        for n, multi in results.items():
            if multi.failed:
                self.records.log(f"{n}: marker {self.marker} not removed: {self._error(multi)}")
        self.claimed = [n for n, multi in results.items() if multi.failed]

    def _rollout(self) -> None:
        if self.gate is not None and self.report.stages:
            self.progress.phase("baseline: every check over the whole site, before the first commit")
            try:
                bounded(lambda: self.gate.take_baseline(self.nr), self.stop)   # type: ignore[union-attr]
            except Interrupted:
                self._stop_before(0, "baseline check", interrupted=True)
                return
            self.report.baseline = self.gate.baseline_summary
        # devices without changes, and those outside this deploy's selection: the deploy does not change them,
        # so a link or session toward them that breaks is the stage's doing
        at_intent = {n for n, d in self.report.devices.items() if d.state == "no change"} | \
            (set(self.intent.devices) - set(self.report.devices))
        for i, stage in enumerate(self.report.stages):
            if self.stop is not None and self.stop.is_set():
                self._stop_before(i, stage.name, interrupted=True)
                return
            self.progress.phase(f"{stage.name}: {', '.join(stage.devices)}")
            if not self._stage(stage, at_intent):
                self.report.stopped_at = stage.name
                self._stop_before(i + 1, stage.name)
                return
            at_intent |= set(stage.devices)

    def _stop_before(self, index: int, where: str, interrupted: bool = False) -> None:
        if interrupted:
            self.report.interrupted = self.stop.reason if self.stop else "interrupted"
            self.report.stopped_at = self.report.stopped_at or where
        for later in self.report.stages[index:]:
            for n in later.devices:
                self._set(n, "untouched", f"not started: rollout stopped at {where}"
                          + (f" ({self.report.interrupted})" if interrupted else ""))

    def _stage(self, stage: Stage, at_intent: set[str]) -> bool:
        names = list(stage.devices)
        if self.gate is not None:       # outlast this stage's post-check as measured so far
            self.revert_in = self.gate.revert_timer(names)
        for n in names:
            self.report.devices[n].stage = stage.name
            self.progress.set(n, "backing up", stage.name)
        try:
            before = self._run(names, running_config)
        except StepInterrupted:
            for n in names:
                self._set(n, "untouched", "not started: interrupted while backing up")
            self.report.interrupted = self.stop.reason if self.stop else "interrupted"
            self.report.stopped_at = stage.name
            return False
        unread = {n: self._error(before[n]) for n in names if before[n].failed}
        if unread:   # no backup, no commit: a rollback could not be verified
            for n in names:
                self._set(n, "failed" if n in unread else "untouched",
                          f"cannot back up the running config: {unread[n]}" if n in unread
                          else "not started: a device of its stage could not be backed up")
            return False
        for n in names:
            self.records.write(f"backup/{n}.running", before[n][0].result)
        backups = {n: before[n][0].result for n in names}
        entries = {n: self.records.audit_start(n, "commit", self.report.devices[n].diff,
                                               f"{stage.name}, revert timer {self.revert_in} s") for n in names}
        started = time.monotonic()
        try:
            results = self._run_per_host(names, commit_device, lambda h: {
                "config": self.configs[h], "replace": self.replace, "revert_in": self.revert_in})
        except StepInterrupted as exc:
            self._leave_to_timers(stage, names, entries, exc.done, "commit")
            return False
        committed_at = time.monotonic()
        committed = [n for n in names if not results[n].failed]
        failures = {n: self._error(results[n]) for n in names if results[n].failed}
        for n in names:
            diff = self.report.devices[n].diff
            if n in failures:
                self.records.audit_end(entries[n], n, "commit", diff, "failed", failures[n])
                self._set(n, "failed", f"commit refused: {failures[n]}")
            else:
                self.records.audit_end(entries[n], n, "commit", diff, "committed",
                                       f"pending confirm, revert timer {self.revert_in} s")
        if not failures and self.gate is not None:
            self.progress.phase(f"{stage.name}: post-checks on the stage and its neighbours")
            for n in names:
                self.progress.set(n, "checking", stage.name)
            try:
                new, old = bounded(lambda: self.gate.stage(self.nr, names, at_intent | set(names)),  # type: ignore[union-attr]
                                   self.stop)
            except Interrupted:
                self._leave_to_timers(stage, names, {}, {n: results[n] for n in committed}, "post-check")
                return False
            self.report.checks.extend(new)
            known = {f.id for f in self.report.preexisting}
            self.report.preexisting.extend(f for f in old if f.id not in known)
            if new:
                failures["post-check"] = f"{len(new)} finding(s) failing since this stage's commit"
        elapsed = time.monotonic() - started
        if elapsed >= self.revert_in:
            # the devices' timers fired during the post-checks: they reverted themselves, nothing to confirm
            reason = (f"revert timer ({self.revert_in} s) expired before the stage could be confirmed "
                      f"(commit and post-checks took {elapsed:.0f} s); raise --confirm-timeout")
            self.report.message = f"{stage.name}: {reason}"
            self._verify_reverts(committed, backups, committed_at + self.revert_in, reason)
            return False
        if failures:
            self._rollback(committed, stage, "; ".join(f"{k}: {v}" for k, v in sorted(failures.items())), backups,
                           committed_at + self.revert_in)
            return False
        return self._confirm(stage, names, backups, committed_at + self.revert_in)

    def _confirm(self, stage: Stage, names: list[str], backups: dict[str, str], deadline: float) -> bool:
        entries = {n: self.records.audit_start(n, "confirm", self.report.devices[n].diff, stage.name) for n in names}
        try:
            confirmed = self._run(names, confirm_device)
        except StepInterrupted as exc:
            for n, multi in exc.done.items():
                if not multi.failed:
                    self.records.audit_end(entries[n], n, "confirm", self.report.devices[n].diff, "confirmed")
                    self._set(n, "confirmed")
            self._leave_to_timers(stage, exc.in_flight, entries, {}, "confirm")
            return False
        unconfirmed = []
        for n in names:
            out = self.report.devices[n]
            if confirmed[n].failed:
                unconfirmed.append(n)
                self.records.audit_end(entries[n], n, "confirm", out.diff, "failed", self._error(confirmed[n]))
            else:
                self.records.audit_end(entries[n], n, "confirm", out.diff, "confirmed")
                self._set(n, "confirmed")
        if unconfirmed:
            reason = "; ".join(f"{n}: {self._error(confirmed[n])}" for n in unconfirmed)
            self.report.message = f"{stage.name}: confirm failed ({reason}); left to the revert timer"
            self._verify_reverts(unconfirmed, backups, deadline, f"confirm failed ({reason})")
            return False
        return True

    def _rollback(self, committed: list[str], stage: Stage, reason: str, backups: dict[str, str],
                  deadline: float) -> None:
        self.report.message = f"{stage.name} failed ({reason}); rolled back {', '.join(committed) or 'nothing'}"
        entries = {n: self.records.audit_start(n, "rollback", self.report.devices[n].diff, reason) for n in committed}
        try:
            results = self._run(committed, rollback_device)
        except StepInterrupted as exc:
            results = exc.done
            self._leave_to_timers(stage, exc.in_flight, entries, {}, "rollback")
        timers: list[str] = []
        for n in committed:
            if n not in results:
                continue
            out = self.report.devices[n]
            if results[n].failed:
                timers.append(n)
                self.records.audit_end(entries[n], n, "rollback", out.diff, "failed", self._error(results[n]))
            elif results[n][0].result == backups[n]:
                self.records.audit_end(entries[n], n, "rollback", out.diff, "rolled back", reason)
                self._set(n, "rolled back", reason)
            else:
                detail = f"{reason}; rolled back, but the running config differs from the backup"
                self.records.audit_end(entries[n], n, "rollback", out.diff, "failed", detail)
                self._set(n, "failed", detail)
        if timers:
            why = "; ".join(f"{n}: {self._error(results[n])}" for n in timers)
            self._verify_reverts(timers, backups, deadline, f"{reason}; rollback failed ({why})")

    def _verify_reverts(self, names: list[str], backups: dict[str, str], deadline: float, reason: str) -> None:
        """Devices left to their revert timer: read each one until it is back on its backup. Before the
        deadline the devices are read every POLL_EARLY_S, after it every POLL_S, until REVERT_GRACE_S past it.
        A device that no longer has a commit pending and still differs from its backup (read twice) has no
        timer left to restore it (say, it restarted and lost the timer): NOT reverted, said at once. One that
        cannot be read is NOT verified, and left open in the audit log for the next deploy."""
        if not names:
            return
        left = set(names)
        last_error: dict[str, str] = {}
        stranded: dict[str, int] = {}
        entries = {n: self.records.audit_start(n, "verify revert", self.report.devices[n].diff, reason) for n in names}
        self.progress.phase(f"waiting for the revert timer of {', '.join(names)}, then reading them back")
        for n in names:
            self.progress.set(n, "waiting for revert", f"timer fires in {max(0, deadline - time.monotonic()):.0f} s")
        while left:
            try:
                status = self._run(sorted(left), device_status)
            except StepInterrupted:
                break
            for n in sorted(left):
                multi = status[n]
                if multi.failed:
                    last_error[n] = self._error(multi)
                    continue
                last_error.pop(n, None)
                pending, same = multi[0].result["pending"], multi[0].result["running"] == backups[n]
                if not pending and same:
                    left.discard(n)
                    detail = f"{reason}; reverted by its revert timer (running config verified equal to the backup)"
                    self.records.audit_end(entries[n], n, "verify revert", self.report.devices[n].diff, "reverted",
                                           detail)
                    self._set(n, "reverted", detail)
                elif not pending:
                    stranded[n] = stranded.get(n, 0) + 1
                    if stranded[n] >= 2:
                        left.discard(n)
                        detail = (f"{reason}; NOT reverted: no commit is pending on the device any more (its revert "
                                  "timer is gone) and it still runs the new config")
                        self.records.audit_end(entries[n], n, "verify revert", self.report.devices[n].diff,
                                               "not reverted", detail)
                        self._set(n, "failed", detail)
                else:
                    stranded.pop(n, None)
            now = time.monotonic()
            if not left or now > deadline + REVERT_GRACE_S or (self.stop is not None and self.stop.is_set()):
                break
            pause = POLL_S if now >= deadline or stranded else min(POLL_EARLY_S, deadline - now)
            if self.stop is not None:
                if self.stop.wait(pause):
                    break
            else:
                time.sleep(pause)
        for n in sorted(left):
            out = self.report.devices[n]
            if n in last_error:
                detail = (f"{reason}; left to its revert timer, but the revert is NOT verified: cannot read the "
                          f"device ({last_error[n]}); the next deploy reconciles it")
                self.records.audit_end(entries[n], n, "verify revert", out.diff, AWAITING_REVERT, detail)
            elif self.stop is not None and self.stop.is_set():
                detail = f"{reason}; left to its revert timer (interrupted before it was verified)"
                self.records.audit_end(entries[n], n, "verify revert", out.diff, AWAITING_REVERT, detail)
            else:
                detail = (f"{reason}; NOT reverted: still not on its backup {REVERT_GRACE_S:.0f} s after the "
                          "revert timer's deadline")
                self.records.audit_end(entries[n], n, "verify revert", out.diff, "not reverted", detail)
            self._set(n, "failed", detail)

    def _leave_to_timers(self, stage: Stage, names: list[str], entries: dict[str, str], done: dict[str, Any],
                         step: str) -> None:
        """Interrupted mid-stage: every device that may hold an unconfirmed commit is left to its revert timer
        (audited as awaiting revert, so the next deploy reads it back)."""
        self.report.interrupted = self.stop.reason if self.stop else "interrupted"
        self.report.stopped_at = stage.name
        for n in names:
            out = self.report.devices[n]
            multi = done.get(n)
            if multi is not None and multi.failed and step == "commit":
                self.records.audit_end(entries[n], n, step, out.diff, "failed", self._error(multi))
                self._set(n, "failed", f"commit refused: {self._error(multi)}")
                continue
            detail = (f"interrupted during {step} ({self.report.interrupted}): left to its revert timer "
                      f"({self.revert_in} s)")
            if n in entries:
                self.records.audit_end(entries[n], n, step, out.diff, AWAITING_REVERT, detail)
            else:
                self.records.audit(n, step, out.diff, AWAITING_REVERT, detail)
            self._set(n, "interrupted", detail)
