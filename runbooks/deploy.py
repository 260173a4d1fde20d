"""Deploy runbook: dry-run diffs, then staged commits with revert timers, post-checks and rollback.

The device-level steps are plain Nornir tasks (usable from a user's own script):

    nr.run(task=diff_device, config=text, replace=False)
    nr.run(task=commit_device, config=text, replace=False, revert_in=300)
    nr.run(task=confirm_device) / nr.run(task=rollback_device)

`Deployment` composes them into the rollout. A device is changed only through NAPALM's
load -> compare -> commit(revert_in) -> confirm_commit | rollback, so a failed stage leaves each device
with its full old or full new config, and a process that dies before confirming is reverted by the
device's own timer. A platform whose policy batches these steps (platforms.base.BatchedCommit: EOS over
eAPI) sends the same commands with the same checks in fewer requests.
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
from nr_run.platforms.base import (
    COMMIT,
    ApplyMethod,
    BatchedCommit,
    CommitSteps,
    DeployPolicy,
    LeftUntouched,
    ReplaceCandidate,
    ShiftsTraffic,
    marker_time,
)
from nr_run.runbooks.deploy_marker import (
    ForeignPending,
    MarkerHeld,
    SessionPending,
    age_text,
    claim_device,
    earlier_markers,
    guard,
    judge_holds,
    release_device,
    release_earlier,
)
from nr_run.runbooks.failures import result_cause, result_traceback
from nr_run.runbooks.interrupt import Interrupted, Stop, bounded
from nr_run.runbooks.lock import dead_markers, register_marker, unregister_marker
from nr_run.runbooks.plan import Stage, plan_rollout
from nr_run.runbooks.progress import DeviceProgress, ProgressProcessor
from nr_run.runbooks.records import AWAITING_REVERT, RunRecords, state_hash, unfinished
from nr_run.validators.base import Finding

if TYPE_CHECKING:
    from nr_run.runbooks.check import CheckReport
    from nr_run.runbooks.deploy_checks import StageGate

# Nornir task name -> the device state shown while it runs
TASK_LABELS = {"diff_device": "diffing", "running_config": "backing up", "commit_device": "committing",
               "confirm_device": "confirming", "rollback_device": "rolling back", "device_status": "reading",
               "claim_device": "marking", "release_device": "unmarking", "restore_traffic": "restoring traffic"}
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


def _steps(task: Task, device: Any) -> CommitSteps | None:
    """The platform's batched commit steps, when they serve this driver (None: the driver's own calls)."""
    policy = _policy(task.host.platform or "")
    return policy.steps if isinstance(policy, BatchedCommit) and policy.steps.applies(device) else None


def _guard_pending(task: Task, device, break_lock: bool = False, earlier: Collection[str] = ()) -> list[Any]:
    """Refuse a device with a foreign pending commit or hold; the device's holds (deploy markers) read. Batched
    steps read both at once."""
    steps = _steps(task, device)
    if steps is None:
        pending, holds = bool(device.has_pending_commit()), None
    else:
        commit, holds = steps.guard(device)
        pending = commit is not None
    if pending:
        raise ForeignPending("a commit-confirm by someone else is pending on the device; not touching it")
    if holds is None:
        return guard(device, task.host.platform or "", break_lock, earlier)
    return judge_holds(holds, break_lock, earlier)


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
    holds = _guard_pending(task, device, break_lock, earlier)
    # read back, no commit pending: markers a dead run of ours left here are released (changed or not)
    released = release_earlier(device, task.host.platform or "", earlier, holds)
    candidate = _candidate(task, device, config, replace)
    steps = _steps(task, device)
    if steps is not None and not isinstance(_policy(task.host.platform or ""), ApplyMethod):
        diff, method = steps.load_diff(device, candidate, replace, keep=False), None
        return Result(host=task.host, diff=diff, changed=bool(diff), result=diff, method=method, released=released)
    _load_guarded(device, candidate, replace)
    try:
        diff = device.compare_config()
        method = _apply_method(task, device) if diff else None
    finally:
        device.discard_config()
    return Result(host=task.host, diff=diff, changed=bool(diff), result=diff, method=method, released=released)


def _apply_method(task: Task, device: Any) -> tuple[str, str] | None:
    """(method, why) from the platform's deploy policy, for policies that tell (SONiC: gcu | drained apply)."""
    policy = _policy(task.host.platform or "")
    if not isinstance(policy, ApplyMethod):
        return None
    return policy.apply_method(device.get_config(retrieve="running")["running"],
                               device.get_config(retrieve="candidate")["candidate"])


def _masked_running(task: Task, device: Any) -> str:
    """The running config as backups and read-backs keep it: the driver's sanitizing, then the platform
    policy's secret masks, the very ones diffs get (SNMP communities and keys, NTP keys, ...)."""
    return _policy(task.host.platform or "").redact(device.get_config(retrieve="running", sanitized=True)["running"])


def running_config(task: Task) -> Result:
    """The running config with secrets masked (it is written to the artifacts)."""
    return Result(host=task.host, result=_masked_running(task, _driver(task)))


def commit_device(task: Task, config: str, replace: bool = False, revert_in: int = 300) -> Result:
    """Commit with a device-side revert timer; confirm_device must follow or the device reverts itself."""
    device = _driver(task)
    _guard_pending(task, device)
    candidate = _candidate(task, device, config, replace)
    steps = _steps(task, device)
    if steps is not None:
        diff = steps.load_diff(device, candidate, replace, keep=True)
    else:
        _load_guarded(device, candidate, replace)
        diff = device.compare_config()
    if not diff:
        device.discard_config()
        return Result(host=task.host, diff="", changed=False, result="no change")
    if steps is not None:
        steps.commit(device, revert_in)
    else:
        device.commit_config(revert_in=revert_in)
    return Result(host=task.host, diff=diff, changed=True, result="committed, waiting for confirm")


def confirm_device(task: Task) -> Result:
    device = _driver(task)
    steps = _steps(task, device)
    if steps is not None:
        steps.confirm(device)
    else:
        device.confirm_commit()
    return Result(host=task.host, result="confirmed")


def device_status(task: Task) -> Result:
    """The running config (masked, as backed up) and whether a commit-confirm is pending on the device."""
    device = _driver(task)
    running = _masked_running(task, device)
    policy = _policy(task.host.platform or "")
    shifted = policy.traffic.shifted(device) if isinstance(policy, ShiftsTraffic) else None
    steps = _steps(task, device)
    pending = steps.pending(device) if steps is not None else bool(device.has_pending_commit())
    return Result(host=task.host, result={"running": running, "pending": pending, "shifted": shifted})


def restore_traffic(task: Task) -> Result:
    """Shift traffic back to a switch an interrupted drained apply left shifted away."""
    policy = _policy(task.host.platform or "")
    if not isinstance(policy, ShiftsTraffic):
        return Result(host=task.host, result="no traffic shift on this platform")
    policy.traffic.restore(_driver(task))
    return Result(host=task.host, result="traffic shifted back")


def rollback_device(task: Task) -> Result:
    device = _driver(task)
    device.rollback()
    return Result(host=task.host, result=_masked_running(task, device))


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
    markers_released: list[dict[str, str]] = field(default_factory=list)   # markers of dead runs taken off
    interrupted: str = ""
    message: str = ""
    host_fault: str = ""     # a write this host refused during the rollout (full disk): the records are incomplete
    final_check: dict[str, Any] | None = None    # whole-site post-check after the last stage

    @property
    def failed(self) -> bool:
        # the final check fails the deploy only on what is new since the baseline (pre-existing is reported)
        if self.final_check is not None and not self.final_check.get("passed", False):
            return True
        return bool(self.stopped_at or self.interrupted or self.host_fault) or any(
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
                "reconciled": self.reconciled, "markers_released": self.markers_released,
                "host_fault": self.host_fault, "final_check": self.final_check}


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
        # markers a dead run left on devices: this folder's earlier deploys, and deploys on this host whose
        # process is gone (any operator's); the run releases them once it has read the device back
        self.dead = dead_markers(intent.site) if marker else {}
        self.earlier = (earlier_markers(records.artifacts, intent.site) | frozenset(self.dead)) - {marker} \
            if marker else frozenset()
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
        """Every device an earlier run of this site left unsettled, whatever its last audit line (it died between
        a "start" and its "end", after a commit nobody confirmed, or left it to a revert timer): read back,
        traffic restored if an interrupted drained apply left it shifted away, then judged against the config
        recorded before the change (reverted, or kept: stated) or left open while its revert timer runs."""
        lines = [ln for ln in unfinished(self.records.artifacts, self.intent.site)
                 if ln["device"] in self.nr.inventory.hosts]
        if not lines:
            return []
        names = sorted({ln["device"] for ln in lines})
        self.progress.phase(f"reading back {len(lines)} device(s) earlier runs left unfinished")
        try:
            status = self._run(names, device_status)
        except StepInterrupted:
            return []
        shifted = [n for n in names if not status[n].failed and status[n][0].result["shifted"]
                   and not status[n][0].result["pending"]
                   and any(ln["device"] == n and ln.get("method", "").startswith("drained") for ln in lines)]
        try:
            restored = self._run(shifted, restore_traffic)
        except StepInterrupted:
            restored = {}
        for ln in lines:
            self.report.reconciled.append(self._reconciled(ln, status[ln["device"]], restored.get(ln["device"])))
        return self.report.reconciled

    def _reconciled(self, ln: dict[str, Any], multi: Any, restored: Any) -> dict[str, Any]:
        """The verdict on one unfinished device (and its audit lines closed, unless its timer still decides)."""
        n, run = ln["device"], str(ln.get("run", ""))
        traffic = ""
        if restored is not None:
            traffic = ("traffic shifted back (TSB): the interrupted drained apply had left it shifted away; "
                       if not restored.failed else
                       f"STILL SHIFTED AWAY: shifting traffic back failed ({self._error(restored)}); ")
        backup = Path(self.records.artifacts) / "runs" / self.intent.site / run / "backup" / f"{n}.running"
        before = ln.get("before") if isinstance(ln.get("before"), str) else None
        if multi.failed:
            state, verdict = "unknown", f"still unknown: cannot read the device ({self._error(multi)})"
        elif multi[0].result["pending"]:
            state, verdict = "pending", "a commit-confirm is still pending on the device; its revert timer decides"
        else:
            running = multi[0].result["running"]
            if before is None and backup.is_file():
                before = state_hash(backup.read_text(encoding="utf-8", errors="replace"))
            if before is None:
                state, verdict = "no record", "read back; no record of its config before the change to compare with"
            elif state_hash(running) == before:
                state, verdict = "reverted", "reverted: the running config equals the one recorded before the change"
            else:
                state, verdict = "kept", (
                    "kept, not reverted: no commit is pending and the running config differs from the one "
                    "recorded before the change (the change stayed, or the device was changed since); this run's "
                    "diff against the intent shows where it stands")
        if restored is not None and restored.failed:
            state = "unknown"
        verdict = traffic + verdict
        item = {"device": n, "action": ln.get("action", ""), "run": run, "since": ln.get("time", ""),
                "user": ln.get("user", ""), "last": ln.get("last", ""), "state": state, "outcome": verdict,
                "traffic": "restored" if restored is not None and not restored.failed else
                ("still shifted" if restored is not None else "")}
        if state not in ("unknown", "pending"):
            detail = f"unfinished since {ln.get('time', '?')} (run {run or '?'}, last: {ln.get('last', '?')})"
            for entry in ln.get("open", []):
                self.records.audit_end(entry, n, ln.get("action", ""), "", f"reconciled: {verdict}", detail, run=run)
            self.records.audit(n, "reconcile", "", f"reconciled: {verdict}", detail, run=run)
        return item

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
                for marker in getattr(multi[0], "released", None) or []:
                    self._released(name, marker)
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

    def _released(self, device: str, marker: str) -> None:
        """Say (report, log, audit) that a dead run's marker was taken off a device after reading it back."""
        whose = self.dead.get(marker)
        owner = (f"pid {whose.get('pid')} of {whose.get('user', '?')} on this host, no longer running"
                 if whose else "an earlier deploy of this artifacts folder, no longer running")
        detail = (f"marker {marker} ({age_text(marker_time(marker))}) of a dead run ({owner}) removed after "
                  "reading the device back: no commit pending")
        self.report.markers_released.append({"device": device, "marker": marker, "detail": detail})
        self.records.log(f"{device}: {detail}")
        self.records.audit(device, "release marker", "", "released", detail)

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
        self.report.final_check = {"passed": not failed, "summary": checks.summary(),
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
            if self.records.fault:
                self.report.host_fault = self.records.fault
                self.report.message = self.report.message or (
                    f"the rollout finished, but the host could not write all its records ({self.records.fault}): "
                    "the next deploy reads back every device the audit log leaves unfinished")

    def _claim(self) -> bool:
        """Mark every device of the rollout as held by this run; devices another deploy (or tool) holds are
        refused (skipped: no longer pending). False when the rollout was interrupted."""
        names = [n for stage in self.report.stages for n in stage.devices]
        self.progress.phase(f"marking {len(names)} device(s) as held by this deploy ({self.marker})")
        # listed on this host before any device carries it: if this process dies, the next run of any
        # operator here knows the marker's run is dead
        register_marker(self.intent.site, str(self.marker))
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
        """Take this run's markers off the devices (not after an interrupt: the process is about to exit, and the
        next run, seeing this one dead, releases them once it has read the devices back)."""
        if self.marker is None or (self.stop is not None and self.stop.is_set()):
            return
        if not self.claimed:
            unregister_marker(self.intent.site, str(self.marker))
            return
        try:
            results = self._run(self.claimed, release_device, marker_name=self.marker)
        except StepInterrupted:
            return
        for n, multi in results.items():
            if multi.failed:
                self.records.log(f"{n}: marker {self.marker} not removed: {self._error(multi)}")
        self.claimed = [n for n, multi in results.items() if multi.failed]
        if not self.claimed:
            unregister_marker(self.intent.site, str(self.marker))

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
            if self.records.fault and i + 1 < len(self.report.stages):
                # the stage finished safely (confirmed); nothing more is changed while records cannot be kept
                self.report.stopped_at = self.report.stages[i + 1].name
                self.report.message = (f"stopped after {stage.name} (confirmed): the host cannot write its records "
                                       f"({self.records.fault}); later stages untouched")
                self._stop_before(i + 1, f"{stage.name}: host cannot write its records")
                return

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
        backups = {n: before[n][0].result for n in names}
        try:        # no backup or audit line on disk, no commit: the next run could not reconcile the devices
            for n in names:
                self.records.write(f"backup/{n}.running", backups[n])
            entries = {n: self.records.audit_start(n, "commit", self.report.devices[n].diff,
                                                   f"{stage.name}, revert timer {self.revert_in} s",
                                                   before=backups[n], method=self.report.devices[n].method,
                                                   strict=True)
                       for n in names}
        except OSError as exc:
            why = self.records.refused(exc)
            self.report.message = f"{stage.name}: not started, the host cannot write its records ({why})"
            for n in names:
                self._set(n, "untouched", f"not started: {why}")
            return False
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
