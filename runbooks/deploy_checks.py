"""Post-checks for one rollout stage: the stage's devices and their neighbours, judged only on what
should already hold (links and sessions whose both ends are at intent).

A finding about a link or BGP session toward a device that this rollout has not reached yet is
not the stage's fault and is left out; anything on the stage's own devices counts.
"""

from __future__ import annotations

from typing import Any

from nornir.core import Nornir

from nr_run.intent.models import FabricIntent

STAGE_CHECKS = ["interfaces", "cabling", "bgp", "pfc", "ecn", "buffers"]


def _peer_index(intent: FabricIntent) -> dict[tuple[str, str], str]:
    """(device, port or peer address) -> peer device, from the intent."""
    index: dict[tuple[str, str], str] = {}
    for dev in intent.devices.values():
        for itf in dev.interfaces:
            index[(dev.name, itf.name)] = itf.peer_device
            index[(dev.name, itf.peer_ip)] = itf.peer_device
        for nic in dev.nics:
            index[(dev.name, nic.name)] = nic.peer_device
        if dev.bgp:
            for peer in dev.bgp.peers:
                index[(dev.name, peer.address)] = peer.peer_device
    return index


def stage_scope(intent: FabricIntent, stage: list[str]) -> list[str]:
    """The stage's devices plus every device cabled to them."""
    scope = set(stage)
    for link in intent.links:
        if link.a_device in stage:
            scope.add(link.b_device)
        if link.b_device in stage:
            scope.add(link.a_device)
    return sorted(scope)


def relevant(finding: dict[str, Any], stage: set[str], at_intent: set[str], peers: dict[tuple[str, str], str]) -> bool:
    device, target = finding["device"], str(finding.get("target", ""))
    peer = peers.get((device, target.split()[0] if target else ""))
    if peer is None:
        for token in target.replace("->", " ").replace(":", " ").split():
            if token in peers.values() and token != device:
                peer = token
                break
    if peer is None:
        return device in stage
    return (device in stage or peer in stage) and device in at_intent and peer in at_intent


def stage_post_check(nr: Nornir, intent: FabricIntent, stage: list[str], at_intent: set[str],
                     checks: list[str] | None = None) -> list[dict[str, Any]]:
    """Failed findings that the stage is responsible for (empty list = the stage is healthy)."""
    from nr_run.runbooks.check import run_checks

    scope = stage_scope(intent, stage)
    servers = {n for n in scope if intent.devices[n].role == "gpu"}
    report = run_checks(nr.filter(filter_func=lambda h: h.name in scope), intent, checks or STAGE_CHECKS)
    peers = _peer_index(intent)
    ok_ends = at_intent | servers
    out = []
    for f in report.findings:
        d = f.to_dict()
        if d["passed"]:
            continue
        if relevant(d, set(stage), ok_ends, peers):
            out.append(d)
    return out
