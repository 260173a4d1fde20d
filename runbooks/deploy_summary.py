"""What a deploy did, and what it will do, in the operator's words (pure: reads a DeployReport and the intent).

`verdict(report, commit)` is the one line a deploy ends with: the devices confirmed, the final whole-site
check's verdict and counts, and when a rollout stopped, what is left partly deployed and how to finish or undo
it. `apply_paths(report, intent)` explains per switch whose platform says how a change is applied (SONiC: a
live GCU patch, or a drained apply) what that path means for its traffic and how long it takes; the dry run
and the commit prompt print it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nr_run.intent.models import FabricIntent

# the SONiC driver's defaults (napalm_sonic.sonic: verify_timeout): how long a drained apply waits for APPL_DB
VERIFY_TIMEOUT_S = 480
# a SONiC `config reload` restarts the switch's containers (swss, syncd, bgp): minutes on a real switch
RELOAD_TYPICAL = "2-5 min"

_CHANGED = ("confirmed", "rolled back", "reverted", "failed", "interrupted", "skipped", "diffed")


def _names(names: list[str], limit: int = 6) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _by_state(report: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name in sorted(report.devices):
        out.setdefault(report.devices[name].state, []).append(name)
    return out


def final_check_words(final: dict[str, Any] | None) -> str:
    """The final whole-site check as verdict and counts: 'final check PASS (428 passed, 0 failed)'."""
    if not final:
        return ""
    s = final.get("summary") or {}
    new, old = len(final.get("new") or []), len(final.get("preexisting") or [])
    known = int(s.get("declared", 0) or 0)
    failed = max(0, int(s.get("failed", 0) or 0) - known)
    word = "PASS" if not new else "FAIL"
    parts = [f"{s.get('passed', 0)} passed", f"{failed} failed"]
    if failed:
        parts.append(f"{new} new, {old} pre-existing")
    if known:
        parts.append(f"{known} known degradation(s)")
    return f"final check {word} ({', '.join(parts)})"


def verdict(report: Any, commit: bool) -> str:
    """The last line of a deploy: what happened, in one line."""
    states = _by_state(report)
    site = report.site
    total = len(report.devices)
    if not commit:
        pending = states.get("diffed", [])
        if not pending:
            return f"dry run {site}: all {total} device(s) at intent; nothing to commit"
        return (f"dry run {site}: {len(pending)} of {total} device(s) would change ({_names(pending)}); "
                "nothing committed: rerun with --commit to apply")
    confirmed = states.get("confirmed", [])
    unchanged = states.get("no change", [])
    if report.interrupted or report.failed:
        return _stopped(report, states)
    if not confirmed:
        return f"deploy {site}: nothing to change, all {total} device(s) already at intent"
    final = final_check_words(report.final_check)
    line = f"deploy {site}: {len(confirmed)} device(s) confirmed"
    if report.stages:
        line += f" in {len(report.stages)} stage(s)"
    if unchanged:
        line += f", {len(unchanged)} already at intent"
    return line + (f"; {final}" if final else "; final check skipped")


def _stopped(report: Any, states: dict[str, list[str]]) -> str:
    """A rollout that stopped: where, what is confirmed, what is back or unknown, how to finish or undo it."""
    site = report.site
    confirmed = states.get("confirmed", [])
    back = states.get("rolled back", []) + states.get("reverted", [])
    broken = states.get("failed", []) + states.get("interrupted", [])
    left = sorted(states.get("diffed", []) + states.get("pending", []) + states.get("skipped", [])
                  + states.get("untouched", []))
    why = "interrupted" if report.interrupted else "stopped"
    if report.stopped_at:
        parts = [f"deploy {site}: {why} at {report.stopped_at}"]
    elif report.final_check and not report.interrupted:
        parts = [f"deploy {site}: rollout confirmed, {final_check_words(report.final_check)}"]
    elif not confirmed and not back:
        parts = [f"deploy {site}: {why} before the first commit"]
    else:
        parts = [f"deploy {site}: {why}"]
    if confirmed:
        parts.append(f"{len(confirmed)} confirmed ({_names(confirmed)})")
    if back:
        parts.append(f"{len(back)} rolled back ({_names(back)})")
    if broken:
        parts.append(f"{len(broken)} failed or unfinished ({_names(broken)})")
    if left:
        parts.append(f"{len(left)} not deployed ({_names(left)})")
    if not confirmed and not back and broken and not report.stages:
        return "; ".join(parts) + ": nothing committed; fix what failed (the table above) and rerun"
    line = "; ".join(parts)
    if confirmed and (left or back or broken):
        line += (": the site is partly deployed. Finish: fix the cause above and rerun deploy --commit (confirmed "
                 "devices show no change); undo: deploy --commit the previous inventory revision")
    elif confirmed:
        line += ": the change stays; look at the new findings above"
    else:
        line += ": nothing stays changed"
    return line


# ---------------------------------------------------------------- how each change is applied


@dataclass(frozen=True)
class ApplyPath:
    device: str
    method: str           # gcu | drained apply | ...
    why: str
    traffic: str          # what happens to the traffic through the device
    duration: str         # expected time


def _rail_servers(intent: FabricIntent | None, device: str) -> int:
    if intent is None or device not in intent.devices:
        return 0
    return sum(1 for i in intent.devices[device].interfaces if i.role == "host")


def _uplink_peers(intent: FabricIntent | None, device: str) -> int:
    if intent is None or device not in intent.devices:
        return 0
    return len({i.peer_device for i in intent.devices[device].interfaces if i.role == "fabric"})


def apply_paths(report: Any, intent: FabricIntent | None) -> list[ApplyPath]:
    """Per device with a pending change whose platform names its apply method: what the path means."""
    out = []
    for name in sorted(report.devices):
        d = report.devices[name]
        if not d.method or d.state not in _CHANGED:
            continue
        method, _, why = d.method.partition(":")
        method, why = method.strip(), why.strip()
        if method == "gcu":
            out.append(ApplyPath(name, method, why, "applied live by a GCU patch (config apply-patch), traffic keeps "
                                 "flowing; the revert timer rolls back to a checkpoint", "seconds"))
        elif method == "drained apply":
            hosts = _rail_servers(intent, name)
            role = intent.devices[name].role if intent is not None and name in intent.devices else d.role
            if role == "rtsw":
                hit = (f"its {hosts} server NIC(s) on this rail lose the fabric meanwhile (no other path on the "
                       "rail: drain their jobs first)" if hosts else "no server behind it")
            else:
                peers = _uplink_peers(intent, name)
                hit = (f"ECMP carries its share over the other spine paths meanwhile ({peers} RTSW(s) lose one "
                       "path each)" if peers else "its peers route around it")
            out.append(ApplyPath(
                name, method, why,
                f"traffic shifted away (TSA), config reload with the candidate, wait until APPL_DB shows the change, "
                f"traffic shifted back (TSB); {hit}",
                f"about {RELOAD_TYPICAL}; at most reload + {VERIFY_TIMEOUT_S} s before it reloads the saved config"))
        else:
            out.append(ApplyPath(name, method, why, "see the platform's driver", "unknown"))
    return out


def prompt_note(paths: list[ApplyPath]) -> str:
    """The part of the commit prompt that says which switches leave the fabric for a while."""
    drained = [p.device for p in paths if p.method == "drained apply"]
    if not drained:
        return ""
    return (f"{len(drained)} switch(es) take a drained apply ({_names(drained)}): each is shifted away, "
            f"config-reloaded and shifted back, about {RELOAD_TYPICAL} each with its traffic moved off it. ")
