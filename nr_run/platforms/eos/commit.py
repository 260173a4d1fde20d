"""EOS commit steps over eAPI in the fewest requests that keep NAPALM's checks and its driver state.

NAPALM's EOS driver spends 8 requests on a guarded commit with a revert timer (pending-commit check: the
session detail and `show version`; the deploy's session read; the load; the diff; the same pending-commit
check again inside commit_config; the commit) and 3 on a confirm. Here:

- guard: one `show configuration sessions detail` gives both the pending commit and the open sessions
  (platforms.eos.sessions reads both EOS syntaxes); `show version` only served NAPALM's seconds-left figure.
- load and diff: one runCmds request, `configure session`, the candidate, `end`, `show session-config named
  .. diffs` (and `configure session .. abort` for a dry run). eAPI stops at the first failing command, so a
  refused line never reaches the diff; the session is then aborted as NAPALM's load does.
- commit: `copy startup-config flash:rollback-0` and `configure session .. commit timer`, as NAPALM sends
  them, without its second pending-commit read: the guard read it one request earlier, and EOS itself refuses
  to commit any session while another session's commit timer runs (napalm PR #1266), so a commit-confirm that
  starts in between stops this commit on the device instead of being overrun.
- confirm: the session detail (this driver's session must still wait for its confirmation, else NAPALM's
  CommitError: a timer that fired is never "confirmed" by committing again), then commit and `write memory`.

The driver's config_session is set and cleared as NAPALM sets it, so its discard_config, rollback and
confirm_commit still work on a driver these steps used. Over SSH (NAPALM's transport "ssh") the driver sends
commands one by one anyway: `applies` says no and the deploy takes NAPALM's own calls.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from nr_run.platforms.base import Hold
from nr_run.platforms.eos.marker import EosMarker
from nr_run.platforms.eos.sessions import DETAIL, parse_sessions, read_sessions


def _napalm() -> Any:
    from napalm.eos.eos import EOSDriver

    return EOSDriver


def _load_error(replace: bool, message: str) -> Exception:
    from napalm.base.exceptions import MergeConfigException, ReplaceConfigException

    return ReplaceConfigException(message) if replace else MergeConfigException(message)


def _commit_error(message: str) -> Exception:
    from napalm.base.exceptions import CommitError

    return CommitError(message)


class EosCommit:
    def __init__(self, marker: EosMarker) -> None:
        self.marker = marker

    def applies(self, driver: Any) -> bool:
        return getattr(driver, "transport", "") != "ssh" and isinstance(driver, _napalm())

    def guard(self, driver: Any) -> tuple[str | None, list[Hold]]:
        """(the session whose commit waits for confirmation, or None; the holds besides this run's): one read."""
        sessions = read_sessions(driver)
        return sessions.pending_commit, self.marker.holds_in(driver, sessions)

    def pending(self, driver: Any) -> bool:
        return read_sessions(driver).pending_commit is not None

    def _commands(self, driver: Any, config: str, replace: bool) -> list[Any]:
        """What NAPALM's load sends (its session name, clean-config for a replace, comments dropped, banners
        as eAPI input, mode comments), built with the driver's own conversions."""
        if driver.config_session is None:
            driver.config_session = f"napalm_{datetime.now().microsecond}"
        commands: list[Any] = [f"configure session {driver.config_session}"]
        if replace:
            commands.append("rollback clean-config")
        for line in config.splitlines():
            line = line.strip()
            if line.startswith("!") and not line.startswith("!!"):
                continue
            commands.append(line)
        for start, depth in [(s, d) for s, d in driver.HEREDOC_COMMANDS if s in commands]:
            commands = driver._multiline_convert(commands, start=start, depth=depth)
        commands = driver._mode_comment_convert(commands)
        if not any(cmd == "end" for cmd in commands):
            commands.append("end")
        return commands

    def load_diff(self, driver: Any, config: str, replace: bool, keep: bool) -> str:
        """Load the candidate into the driver's session and return its diff (NAPALM's compare_config text), in
        one request. keep=False also aborts the session in that request (a dry run)."""
        import pyeapi

        commands = self._commands(driver, config, replace)
        diff_at = len(commands)
        commands.append(f"show session-config named {driver.config_session} diffs")
        if not keep:
            commands.append(f"configure session {driver.config_session} abort")
        options = {"autoComplete": driver.eos_autoComplete} if driver.eos_autoComplete is not None else {}
        try:
            out = driver._run_commands(commands, encoding="text", **options)
        except pyeapi.eapilib.CommandError as exc:
            driver.discard_config()         # a refused line: the session goes, the running config never changed
            raise _load_error(replace, str(exc)) from exc
        if not keep:
            driver.config_session = None
        return "\n".join(out[diff_at]["output"].splitlines()[2:]).strip()

    def commit(self, driver: Any, revert_in: int) -> None:
        """Commit the loaded session with a revert timer (confirm must follow)."""
        timer = time.strftime("%H:%M:%S", time.gmtime(revert_in))
        driver._run_commands(["copy startup-config flash:rollback-0",
                              f"configure session {driver.config_session} commit timer {timer}"], encoding="text")

    def confirm(self, driver: Any) -> None:
        """Confirm this driver's commit, refused (CommitError) when it no longer waits for confirmation."""
        reply = driver._run_commands([DETAIL], encoding="json")[0]
        if driver.config_session is None or parse_sessions(reply).pending_commit != driver.config_session:
            raise _commit_error("No pending commit-confirm found!")
        driver._run_commands([f"configure session {driver.config_session} commit", "write memory"], encoding="text")
        driver.config_session = None
