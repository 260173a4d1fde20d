"""Rollout of GPU servers' NICs, after the switches: a canary server, then batches of whole racks.

A server batch is a set of whole racks (the inventory's `rack` where it says, else the scalable unit: the
servers cabled to one unit's RTSWs), or the nodes a job was placed on when `--hosts` selects them, never more
than `limit` servers. Every server has one NIC on
each rail, so the limit (the `--batch` share of the site's servers) bounds the share of every rail's NICs that
one batch changes; a unit larger than the limit is cut into chunks of the limit (by index).
"""

from __future__ import annotations

from nr_run.intent.models import FabricIntent


def server_batches(intent: FabricIntent, servers: list[str], limit: int) -> list[list[str]]:
    """The canary server, then the batches, for the servers with pending NIC changes."""
    if not servers:
        return []
    units: dict[tuple[int, str, int], list[str]] = {}
    for name in servers:
        d = intent.devices[name]
        units.setdefault((d.zone or 0, d.rack or "", d.su or 0), []).append(name)
    ordered = [sorted(units[u], key=lambda n: (intent.devices[n].index, n)) for u in sorted(units)]
    out = [ordered[0][:1]]
    ordered[0] = ordered[0][1:]
    batch: list[str] = []
    for unit in ordered:
        for chunk in ([unit] if len(unit) <= limit else [unit[i:i + limit] for i in range(0, len(unit), limit)]):
            if batch and len(batch) + len(chunk) > limit:
                out.append(batch)
                batch = []
            batch += chunk
    return out + ([batch] if batch else [])
