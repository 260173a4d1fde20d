"""Formatting helpers that more than one platform's structured config needs (pure, no defaults)."""

from __future__ import annotations

from dataclasses import dataclass

from nr_run.intent.models import Roce, Scheduler


@dataclass(frozen=True)
class TxQueue:
    """One configured egress queue: its scheduler (None: the platform default) and whether it marks ECN."""

    queue: int
    scheduler: Scheduler | None
    ecn: bool


def tx_queues(roce: Roce) -> list[TxQueue]:
    """The egress queues the RoCE profile configures (a scheduler or ECN marking), sorted by queue."""
    scheds = {s.queue: s for s in roce.schedulers}
    queues = set(scheds) | ({roce.ecn.queue} if roce.ecn.enabled else set())
    return [TxQueue(q, scheds.get(q), roce.ecn.enabled and q == roce.ecn.queue) for q in sorted(queues)]
