"""EOS configuration sessions in one read: which sessions are open and which commit waits for its confirmation.

`show configuration sessions detail` is the one form that carries both on every release. Before EOS 4.32 a
commit waiting for its confirmation is a session in state "pendingCommitTimer"; from 4.32 on that session
shows "committed" at once, and the pending commit is named only at the top level of the detail form
(commitTimerSessionName, commitTimerExpireTime: napalm issue #2166). A reader of the plain form, or of the
session states alone, would see no pending commit on 4.32 and let a deploy run over another's unconfirmed
change: both syntaxes are read here, and an answer with neither shape is refused rather than read as "none".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DETAIL = "show configuration sessions detail"
# session states that say a change is in progress (completed and committed ones are history)
OPEN_STATES = ("pending", "pendingCommitTimer")


class SessionsUnreadable(Exception):
    """`show configuration sessions detail` answered in a shape this reader does not know."""


@dataclass(frozen=True)
class Sessions:
    open: tuple[str, ...]            # sessions holding a change: open, or committed and waiting for confirmation
    pending_commit: str | None       # the session whose commit waits for its confirmation (its timer runs)


def parse_sessions(reply: Mapping[str, Any]) -> Sessions:
    """Sessions from one `show configuration sessions detail` reply (JSON), either syntax."""
    sessions = reply.get("sessions")
    if not isinstance(sessions, Mapping):
        raise SessionsUnreadable(f"{DETAIL}: no 'sessions' in the reply (keys: {sorted(reply)[:8]})")
    pending = reply.get("commitTimerSessionName") or None          # EOS 4.32 and later
    waiting = sorted(n for n, s in sessions.items() if s.get("state") == "pendingCommitTimer")   # before 4.32
    if pending is None and waiting:
        pending = waiting[0]
    names = {n for n, s in sessions.items() if s.get("state") in OPEN_STATES}
    if pending is not None:
        names.add(str(pending))
    return Sessions(tuple(sorted(names)), None if pending is None else str(pending))


def read_sessions(driver: Any) -> Sessions:
    """One eAPI request through the NAPALM driver's pyeapi node."""
    return parse_sessions(driver.device.run_commands([DETAIL], encoding="json")[0])
