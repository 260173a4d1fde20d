"""Deploy gating: a baseline check before the first commit, then each stage judged on what it broke.

A stage fails on findings that are failing now, were not failing in the baseline (new since the
deploy started), and that the stage answers for: on the stage's devices, or about a link, session or
path with an end in the stage and both ends at intent. Findings that already failed in the baseline
are reported separately as pre-existing and never roll a stage back. Findings are matched by their id
(validators.base.Finding.id: check, device, port, peer, kind, index), never by their wording, and stay
typed Finding objects until the report is written. Stages run the checks
tagged "stage" plus the lossless counters, so a canary that starts dropping lossless traffic fails.

A stage reads its own devices whole, and of their neighbours only what the stage can change: the checks
that judge links, sessions and paths (a neighbour holds the far end of every link and session the stage
touched), with findings kept for the links toward the stage. A neighbour's own configuration (checks whose
sections are all own config: QoS, buffers) cannot change through a commit elsewhere, so it is read by the
baseline and the final whole-site check, not once per stage.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nornir.core import Nornir

from nr_run.intent.models import FabricIntent
from nr_run.runbooks.revert_timer import RevertTimer
from nr_run.validators.base import Check, Finding, Selection, select

# Configuration and sessions right after a commit, and the lossless counters over a short interval
STAGE_CHECKS = ["stage", "counters"]

def stage_scope(intent: FabricIntent, stage: list[str]) -> list[str]:
    """The stage's devices plus every device cabled to them."""
    scope = set(stage)
    for link in intent.links:
        if link.a_device in stage:
            scope.add(link.b_device)
        if link.b_device in stage:
            scope.add(link.a_device)
    return sorted(scope)


def stage_selection(intent: FabricIntent, stage: list[str], checks: list[Check]) -> dict[str, Selection]:
    """Per device of the stage's scope, what its post-check reads and judges: every check on the stage's own
    devices; on a neighbour, the checks a change on the stage can affect (not those judging only its own
    configuration), findings limited to its links, sessions and paths toward the stage."""
    every = frozenset(c.name for c in checks)
    linked = frozenset(c.name for c in checks if not c.judges_own_config())
    members = frozenset(stage)
    return {n: Selection(every) if n in members else Selection(linked, members) for n in stage_scope(intent, stage)}


def relevant(finding: Finding, stage: set[str], at_intent: set[str]) -> bool:
    """Whether the stage answers for this finding. One about a link, session or path (it names a peer
    device) counts when either end is in the stage and both ends are at intent; any other finding counts
    when it is on a stage device."""
    if not finding.peer_device:
        return finding.device in stage
    ends = {finding.device, finding.peer_device}
    return bool(ends & stage) and ends <= at_intent


@dataclass
class StageGate:
    """Baseline and per-stage verdicts for one deploy. `options` are check options as for run_checks."""

    intent: FabricIntent
    options: Mapping[str, Mapping[str, Any]] | None = None
    stage_checks: list[str] = field(default_factory=lambda: list(STAGE_CHECKS))
    baseline_failed: set[str] | None = None          # ids of the findings failing before the first commit
    baseline_summary: dict[str, Any] | None = None
    # what runs the checks (runbooks.check.run_checks' signature; None: run_checks itself, here): a distributed
    # run passes its workers' (runbooks.distributed.DistributedChecks)
    run: Callable[..., Any] | None = None
    # how long checks take here, for each stage's revert timer (runbooks.revert_timer); floor: --confirm-timeout
    timer: RevertTimer = field(default_factory=lambda: RevertTimer(300))
    clock: Callable[[], float] = time.monotonic
    # called with the baseline's CheckReport and "deploy-baseline" (the CLI records it in the site's history)
    recorder: Callable[[Any, str], Any] | None = None

    def take_baseline(self, nr: Nornir) -> dict[str, Any]:
        """Every check over the whole site before anything is committed; remembers what already fails and
        returns its summary."""
        from nr_run.runbooks.check import run_checks

        t0 = self.clock()
        checked = (self.run or run_checks)(nr, self.intent, None, self.options)
        self.timer.observe(self.clock() - t0, checked.devices)
        if self.recorder is not None:
            self.recorder(checked, "deploy-baseline")
        # ids and counts are all a deploy compares; grouping failures by cause (most of a big site's baseline
        # time) stays with `check`, whose report shows it
        self.baseline_failed = {f.id for f in checked.findings if not f.passed}
        self.baseline_summary = {"passed": checked.passed, "failed": len(self.baseline_failed),
                                 "summary": checked.summary()}
        return self.baseline_summary

    def is_new(self, finding: Finding) -> bool:
        return self.baseline_failed is None or finding.id not in self.baseline_failed

    def split(self, failed: list[Finding]) -> tuple[list[Finding], list[Finding]]:
        """(new since the baseline, pre-existing) of failed findings."""
        return [f for f in failed if self.is_new(f)], [f for f in failed if not self.is_new(f)]

    def revert_timer(self, stage: list[str]) -> int:
        """The revert timer (s) a stage's commits get: long enough for its post-check as last measured."""
        return self.timer.for_scope(len(stage_selection(self.intent, stage, select(self.stage_checks, self.options))))

    def stage(self, nr: Nornir, stage: list[str], at_intent: set[str]) -> tuple[list[Finding], list[Finding]]:
        """(new, pre-existing) failed findings the stage answers for; no new ones = the stage is healthy."""
        from nr_run.runbooks.check import run_checks

        selection = stage_selection(self.intent, stage, select(self.stage_checks, self.options))
        servers = {n for n in selection if self.intent.devices[n].role == "gpu"}
        t0 = self.clock()
        report = (self.run or run_checks)(nr.filter(filter_func=lambda h: h.name in selection) if nr is not None
                                          else None, self.intent, self.stage_checks, self.options,
                                          selection=selection)
        self.timer.observe(self.clock() - t0, len(selection))
        ok_ends = at_intent | servers
        failed = [f for f in report.findings if not f.passed and relevant(f, set(stage), ok_ends)]
        return self.split(failed)


def stage_post_check(nr: Nornir, intent: FabricIntent, stage: list[str], at_intent: set[str],
                     checks: list[str] | None = None,
                     options: Mapping[str, Mapping[str, Any]] | None = None) -> list[Finding]:
    """Failed findings that the stage is responsible for, without a baseline (every failure counts)."""
    gate = StageGate(intent, options, checks or list(STAGE_CHECKS))
    new, _ = gate.stage(nr, stage, at_intent)
    return new
