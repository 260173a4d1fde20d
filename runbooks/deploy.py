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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nornir.core import Nornir
from nornir.core.filter import F
from nornir.core.task import Result, Task

from nr_run.intent.models import FabricIntent
from nr_run.platforms import registry
from nr_run.platforms.base import DeployPolicy
from nr_run.runbooks.plan import Stage, plan_rollout
from nr_run.runbooks.progress import DeviceProgress, ProgressProcessor
from nr_run.runbooks.records import RunRecords

# Nornir task name -> the device state shown while it runs
TASK_LABELS = {"diff_device": "diffing", "running_config": "backing up", "commit_device": "committing",
               "confirm_device": "confirming", "rollback_device": "rolling back"}


def _policy(platform: str) -> DeployPolicy:
    policy = registry.get(platform).deploy
    if policy is None:
        raise ValueError(f"platform {platform!r} is not deployed by nr-run")
    return policy


def check_policies(platforms: set[str]) -> None:
    """Read every deploy policy the run needs before touching a device (PolicyMissing fails the run)."""
    for name in sorted(platforms):
        policy = _policy(name)
        check = getattr(policy, "check", None)
        if check is not None:
            check()


class ForeignPending(Exception):
    """The device has a pending commit or config session that this run did not start."""


def _driver(task: Task) -> Any:
    """The connection the host's platform deploys through (NAPALM for the built-in switch platforms)."""
    connection = registry.get(task.host.platform or "").transport.deploy_connection
    return task.host.get_connection(connection, task.nornir.config)


def _load(device, config: str, replace: bool) -> None:
    if replace:
        device.load_replace_candidate(config=config)
    else:
        device.load_merge_candidate(config=config)


def _guard_pending(device) -> None:
    if device.has_pending_commit():
        raise ForeignPending("a commit-confirm by someone else is pending on the device; not touching it")


def _load_guarded(device, config: str, replace: bool) -> None:
    try:
        _load(device, config, replace)
    except Exception as exc:  # NAPALM's SessionLockedException has no common base we can rely on
        if type(exc).__name__ == "SessionLockedException":
            raise ForeignPending(f"another configuration session is pending on the device ({exc})") from exc
        raise


def diff_device(task: Task, config: str, replace: bool = False) -> Result:
    """Load the candidate, diff it against running, discard it."""
    device = _driver(task)
    _guard_pending(device)
    _load_guarded(device, config, replace)
    try:
        diff = device.compare_config()
        method = _apply_method(task, device) if diff else None
    finally:
        device.discard_config()
    return Result(host=task.host, diff=diff, changed=bool(diff), result=diff, method=method)


def _apply_method(task: Task, device: Any) -> tuple[str, str] | None:
    """(method, why) from the platform's deploy policy, for policies that tell (SONiC: gcu | drained apply)."""
    explain = getattr(_policy(task.host.platform or ""), "apply_method", None)
    if explain is None:
        return None
    return explain(device.get_config(retrieve="running")["running"], device.get_config(retrieve="candidate")["candidate"])


def running_config(task: Task) -> Result:
    """The running config with secrets masked (it is written to the artifacts)."""
    return Result(host=task.host, result=_driver(task).get_config(retrieve="running", sanitized=True)["running"])


def commit_device(task: Task, config: str, replace: bool = False, revert_in: int = 300) -> Result:
    """Commit with a device-side revert timer; confirm_device must follow or the device reverts itself."""
    device = _driver(task)
    _guard_pending(device)
    _load_guarded(device, config, replace)
    diff = device.compare_config()
    if not diff:
        device.discard_config()
        return Result(host=task.host, diff="", changed=False, result="no change")
    device.commit_config(revert_in=revert_in)
    return Result(host=task.host, diff=diff, changed=True, result="committed, waiting for confirm")


def confirm_device(task: Task) -> Result:
    _driver(task).confirm_commit()
    return Result(host=task.host, result="confirmed")


def rollback_device(task: Task) -> Result:
    device = _driver(task)
    device.rollback()
    return Result(host=task.host, result=device.get_config(retrieve="running", sanitized=True)["running"])


@dataclass
class DeviceOutcome:
    name: str
    platform: str
    role: str
    state: str = "pending"          # no change | diffed | confirmed | rolled back | failed | skipped | untouched
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
    checks: list[dict[str, Any]] = field(default_factory=list)
    message: str = ""
    final_check: dict[str, Any] | None = None    # whole-site post-check after the last stage

    @property
    def failed(self) -> bool:
        if self.final_check is not None and not self.final_check.get("passed", False):
            return True
        return bool(self.stopped_at) or any(d.state in ("failed", "rolled back") for d in self.devices.values())

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
                "stopped_at": self.stopped_at, "message": self.message,
                "stages": [{"name": s.name, "devices": list(s.devices)} for s in self.stages],
                "devices": [self.devices[n].as_dict() for n in sorted(self.devices)],
                "checks": self.checks, "final_check": self.final_check}


# A post-check: (nornir, stage devices, devices already at intent) -> failed findings as dicts
PostCheck = Callable[[Nornir, list[str], set[str]], list[dict[str, Any]]]


class Deployment:
    """One deploy run over the selected switches."""

    def __init__(self, nr: Nornir, intent: FabricIntent, configs: dict[str, str], records: RunRecords,
                 progress: DeviceProgress, *, replace: bool = False, revert_in: int = 300,
                 post_check: PostCheck | None = None):
        self.nr, self.intent, self.configs, self.records = nr, intent, configs, records
        self.progress, self.replace, self.revert_in, self.post_check = progress, replace, revert_in, post_check
        self.report = DeployReport(site=intent.site, commit=False, devices={
            n: DeviceOutcome(n, intent.devices[n].platform, intent.devices[n].role) for n in sorted(configs)})

    def _run(self, names: list[str], task, **kwargs):
        self.nr.data.reset_failed_hosts()
        if not names:
            return {}
        # per-device progress comes from Nornir itself (thread-safe processor events)
        nr = self.nr.filter(F(name__in=names)).with_processors([ProgressProcessor(self.progress, TASK_LABELS)])
        return nr.run(task=task, **kwargs)

    def _run_per_host(self, names: list[str], task, per_host: Callable[[str], dict]) -> dict:
        """Nornir runs one kwargs set for all hosts; per-host configs go through a wrapper task."""
        def wrapper(t: Task) -> Result:
            return task(t, **per_host(t.host.name))
        wrapper.__name__ = task.__name__
        return self._run(names, wrapper)

    @staticmethod
    def _error(multi) -> str:
        for result in multi:
            if result.exception is not None and type(result.exception).__name__ != "NornirSubTaskError":
                return f"{type(result.exception).__name__}: {result.exception}"
        return (str(multi[0].result or "failed").strip().splitlines() or ["failed"])[-1]

    def dry_run(self) -> None:
        names = sorted(self.configs)
        for n in names:
            self.progress.set(n, "diffing")
        results = self._run_per_host(names, diff_device, lambda h: {"config": self.configs[h], "replace": self.replace})
        for name in names:
            out = self.report.devices[name]
            multi = results[name]
            if multi.failed:
                exc = multi[0].exception
                out.state = "skipped" if isinstance(exc, ForeignPending) else "failed"
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
            self.progress.set(name, out.state, out.detail[:80])

    def plan(self, canary: int, batch: str) -> list[Stage]:
        """The rollout stages over the devices with pending changes."""
        pending = [n for n, d in self.report.devices.items() if d.state == "diffed"]
        self.report.stages = plan_rollout(self.intent, pending, canary=canary, batch=batch)
        return self.report.stages

    def commit(self, canary: int, batch: str) -> None:
        self.report.commit = True
        if not self.report.stages:
            self.plan(canary, batch)
        at_intent = {n for n, d in self.report.devices.items() if d.state == "no change"}
        for stage in self.report.stages:
            if not self._stage(stage, at_intent):
                self.report.stopped_at = stage.name
                for later in self.report.stages[self.report.stages.index(stage) + 1:]:
                    for n in later.devices:
                        self.report.devices[n].state = "untouched"
                        self.report.devices[n].detail = f"not started: rollout stopped at {stage.name}"
                        self.progress.set(n, "untouched")
                return
            at_intent |= set(stage.devices)

    def _stage(self, stage: Stage, at_intent: set[str]) -> bool:
        names = list(stage.devices)
        for n in names:
            self.report.devices[n].stage = stage.name
            self.progress.set(n, "committing", stage.name)
        before = self._run(names, running_config)
        for n in names:
            if not before[n].failed:
                self.records.write(f"backup/{n}.running", before[n][0].result)
        results = self._run_per_host(names, commit_device, lambda h: {
            "config": self.configs[h], "replace": self.replace, "revert_in": self.revert_in})
        committed = [n for n in names if not results[n].failed]
        failures = {n: self._error(results[n]) for n in names if results[n].failed}
        for n, err in failures.items():
            self.report.devices[n].state, self.report.devices[n].detail = "failed", err
            self.records.audit(n, "commit", self.report.devices[n].diff, "failed", err)
            self.progress.set(n, "failed", err[:80])
        if not failures and self.post_check is not None:
            for n in names:
                self.progress.set(n, "checking", stage.name)
            failed_checks = self.post_check(self.nr, names, at_intent | set(names))
            self.report.checks.extend(failed_checks)
            if failed_checks:
                failures["post-check"] = f"{len(failed_checks)} post-check finding(s) failed"
        if failures:
            self._rollback(committed, stage, "; ".join(f"{k}: {v}" for k, v in sorted(failures.items())), before)
            return False
        confirmed = self._run(names, confirm_device)
        ok = True
        for n in names:
            out = self.report.devices[n]
            if confirmed[n].failed:
                ok = False
                out.state, out.detail = "failed", f"confirm failed, the device reverts by its timer: {self._error(confirmed[n])}"
            else:
                out.state = "confirmed"
            self.records.audit(n, "commit", out.diff, out.state, out.detail)
            self.progress.set(n, out.state)
        return ok

    def _rollback(self, committed: list[str], stage: Stage, reason: str, before) -> None:
        self.report.message = f"{stage.name} failed ({reason}); rolled back {', '.join(committed) or 'nothing'}"
        results = self._run(committed, rollback_device)
        for n in committed:
            out = self.report.devices[n]
            self.progress.set(n, "rolling back")
            if results[n].failed:
                out.state = "failed"
                out.detail = f"rollback failed ({self._error(results[n])}); the device's revert timer restores it"
            else:
                restored = results[n][0].result == before[n][0].result if not before[n].failed else None
                out.state = "rolled back"
                out.detail = reason if restored is not False else f"{reason}; running config differs from backup"
            self.records.audit(n, "rollback", out.diff, out.state, out.detail)
            self.progress.set(n, out.state, out.detail[:80])
