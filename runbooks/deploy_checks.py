"""Post-checks for one rollout stage: the stage's devices and their neighbours, judged only on what
should already hold (links and sessions whose both ends are at intent).

A finding about a link, BGP session or path toward a device that this rollout has not reached yet
is not the stage's fault and is left out; anything else on the stage's own devices counts. The
decision reads the findings' structured fields (device, peer_device), never their wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nornir.core import Nornir

from nr_run.intent.models import FabricIntent
from nr_run.validators.base import Finding

# Checks tagged "stage" judge configuration and sessions right after a commit (no measurement windows).
STAGE_CHECKS = ["stage"]


def stage_scope(intent: FabricIntent, stage: list[str]) -> list[str]:
    """The stage's devices plus every device cabled to them."""
    scope = set(stage)
    for link in intent.links:
        if link.a_device in stage:
            scope.add(link.b_device)
        if link.b_device in stage:
            scope.add(link.a_device)
    return sorted(scope)


def relevant(finding: Finding, stage: set[str], at_intent: set[str]) -> bool:
    """Whether the stage answers for this finding. One about a link, session or path (it names a peer
    device) counts when either end is in the stage and both ends are at intent; any other finding counts
    when it is on a stage device."""
    if not finding.peer_device:
        return finding.device in stage
    ends = {finding.device, finding.peer_device}
    return bool(ends & stage) and ends <= at_intent


def stage_post_check(nr: Nornir, intent: FabricIntent, stage: list[str], at_intent: set[str],
                     checks: list[str] | None = None,
                     options: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Failed findings that the stage is responsible for, as Finding.to_dict() (empty list = the stage is
    healthy). `options` are check options as for run_checks."""
    from nr_run.runbooks.check import run_checks

    scope = set(stage_scope(intent, stage))
    servers = {n for n in scope if intent.devices[n].role == "gpu"}
    report = run_checks(nr.filter(filter_func=lambda h: h.name in scope), intent, checks or STAGE_CHECKS, options)
    ok_ends = at_intent | servers
    return [f.to_dict() for f in report.findings if not f.passed and relevant(f, set(stage), ok_ends)]
