"""One emulated EOS device: running/startup config, configuration sessions, commit timers.

`EosDevice.run(cmds, fmt)` executes one eAPI runCmds request as the EOS CLI would: commands in
order, exec mode -> `configure [session NAME]` -> config lines -> `end`; the first failing command
stops the request (CommandFailed with the outputs so far).
"""

from __future__ import annotations

import difflib
import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from nr_run.lab.twin.eos.config import ConfigError, ConfigTree, parse
from nr_run.lab.twin.eos.interp import interpret
from nr_run.lab.twin.fabric import Fabric
from nr_run.lab.twin.state import DeviceState

VERSION = "4.32.1F"          # a node whose containerlab image names no EOS release
_RELEASE = re.compile(r"(\d+\.\d+\.\d+[A-Z]*(?:\.\d+)?)$")
MODEL = "cEOSLab"


class CommandFailed(Exception):
    """A command EOS rejects: `errors` as EOS lists them, `code` the eAPI error code."""

    def __init__(self, errors: list[str], code: int = 1002, reason: str = "invalid command") -> None:
        super().__init__(errors[0] if errors else reason)
        self.errors = errors
        self.code = code
        self.reason = reason


@dataclass
class Session:
    name: str
    tree: ConfigTree
    state: str = "pending"           # pending | completed | pendingCommitTimer
    completed_at: float = 0.0
    description: str = ""


@dataclass
class CommitTimer:
    session: str
    expires: float
    before: str                      # running config to restore on expiry


def day0_config(hostname: str, mgmt_prefix: str, ports: list[str]) -> str:
    """What a fresh cEOS boots with in containerlab (its ceos.cfg), plus the cabled ports."""
    lines = [f"hostname {hostname}", "username admin privilege 15 role network-admin secret admin",
             "service routing protocols model multi-agent", "management api http-commands", "no shutdown", "exit"]
    for p in ports:
        lines += [f"interface {p}", "exit"]
    lines += ["interface Management0"] + ([f"ip address {mgmt_prefix}"] if mgmt_prefix else []) + ["exit"]
    return "\n".join(lines)


def image_version(image: str) -> str:
    """The EOS release a containerlab cEOS image runs: its tag ("ceos:4.32.0F" -> "4.32.0F"), else VERSION."""
    m = _RELEASE.search(image.rsplit(":", 1)[-1]) if ":" in image else None
    return m.group(1) if m else VERSION


def commit_timer_at_top(version: str) -> bool:
    """Whether an EOS release reports a pending commit timer at the top of `show configuration sessions
    detail` (4.32 and later) rather than in the session's state."""
    m = re.match(r"(\d+)\.(\d+)", version)
    return m is None or (int(m.group(1)), int(m.group(2))) >= (4, 32)


def system_mac(name: str, salt: str = "") -> str:
    """A cEOS node's system MAC (salt: one interface's burned-in MAC), stable per node name, Arista's OUI."""
    h = hashlib.sha1((name + salt).encode()).hexdigest()
    return "00:1c:73:" + ":".join(h[i:i + 2] for i in (0, 2, 4))


class EosDevice:
    def __init__(self, name: str, fabric: Fabric, running: str, startup: str | None = None,
                 files: dict[str, str] | None = None, boot_time: float | None = None,
                 on_change: Callable[[EosDevice], None] | None = None) -> None:
        self.name = name
        self.fabric = fabric
        node = fabric.topology.nodes.get(name)
        self.version = image_version(node.image if node else "")
        self.running = parse(running)
        self.startup = startup if startup is not None else self.render_running()
        self.files: dict[str, str] = dict(files or {})
        self.sessions: dict[str, Session] = {}
        self.timer: CommitTimer | None = None
        self.boot_time = boot_time or time.time()
        self.on_change = on_change
        self.install()

    # ---- state ---------------------------------------------------------------------------------
    def install(self) -> None:
        """Re-interpret the running config into the fabric."""
        st = interpret(self.running, self.name)
        st.system_mac = system_mac(self.name)
        self.fabric.set_state(self.name, st)

    def state(self) -> DeviceState:
        return self.fabric.states[self.name]

    def _changed(self) -> None:
        self.install()
        if self.on_change:
            self.on_change(self)

    def uptime(self) -> float:
        return time.time() - self.boot_time

    def render_running(self) -> str:
        return self.running.render()

    def tick(self) -> None:
        """Revert a commit whose timer expired unconfirmed."""
        if self.timer and time.time() >= self.timer.expires:
            self.running = parse(self.timer.before)
            self.sessions.pop(self.timer.session, None)
            self.timer = None
            self._changed()

    def reboot(self, booted: str) -> None:
        """Boot again: `booted` (the startup config as booted) runs; sessions and a pending commit timer are gone."""
        self.running = parse(booted)
        self.sessions.clear()
        self.timer = None
        self.boot_time = time.time()
        self._changed()

    def apply_drift(self, lines: list[str]) -> None:
        """Out-of-band change: lines applied straight to the running config."""
        self.running.reset_cursor()
        try:
            for line in lines:
                self.running.apply(line)
        finally:                # a refused line stops there; the lines before it are in the running config
            self.running.reset_cursor()
            self._changed()

    # ---- sessions ------------------------------------------------------------------------------
    def _open_session(self, name: str) -> Session:
        if name not in self.sessions or self.sessions[name].state == "completed":
            if len([s for s in self.sessions.values() if s.state == "pending"]) >= 5:
                raise CommandFailed(["Maximum number of pending sessions has been reached"], 1000,
                                    "could not run command")
            self.sessions[name] = Session(name, self.running.copy())
        sess = self.sessions[name]
        if sess.state != "pending":
            raise CommandFailed([f"Cannot enter session {name} (session has been committed)"], 1000,
                                "could not run command")
        sess.tree.reset_cursor()
        return sess

    def commit_session(self, name: str, timer_s: int | None) -> None:
        sess = self.sessions.get(name)
        if sess is None:
            raise CommandFailed([f"Cannot commit session {name}: session does not exist"], 1000,
                                "could not run command")
        if self.fabric.faults.commit_rejected(self.name):
            raise CommandFailed([f"% Failed to commit session {name}: configuration rejected by the system"],
                                1000, "could not run command")
        if self.timer and self.timer.session != name:
            raise CommandFailed([f"Cannot commit session {name}: session {self.timer.session} has a pending "
                                 "commit timer"], 1000, "could not run command")
        if sess.state == "pendingCommitTimer":          # confirmation
            if timer_s is not None:
                self.timer = CommitTimer(name, time.time() + timer_s, self.timer.before if self.timer else "")
                return
            self.timer = None
            sess.state, sess.completed_at = "completed", time.time()
            return
        if sess.state != "pending":
            raise CommandFailed([f"Cannot commit session {name}: session already committed"], 1000,
                                "could not run command")
        before = self.render_running()
        self.running = sess.tree.copy()
        if timer_s is not None:
            self.timer = CommitTimer(name, time.time() + timer_s, before)
            sess.state, sess.completed_at = "pendingCommitTimer", time.time()
        else:
            sess.state, sess.completed_at = "completed", time.time()
        self._changed()

    def abort_session(self, name: str) -> None:
        sess = self.sessions.pop(name, None)
        if sess is None:
            return
        if self.timer and self.timer.session == name:
            self.running = parse(self.timer.before)
            self.timer = None
            self._changed()

    def session_diff(self, name: str) -> str:
        sess = self.sessions.get(name)
        if sess is None:
            raise CommandFailed([f"Session {name} does not exist"], 1000, "could not run command")
        old = self.render_running().splitlines()
        new = sess.tree.render().splitlines()
        diff = list(difflib.unified_diff(old, new, "system:/running-config", f"session:/{name}-session-config",
                                         lineterm=""))
        return "\n".join(diff) + ("\n" if diff else "")

    def sessions_json(self, detail: bool) -> dict:
        """`show configuration sessions [detail]`. A commit waiting for its confirmation shows as the release
        shows it: before 4.32 the session's state is "pendingCommitTimer" with its deadline (commitBy, relative
        to uptime) in the detail form; from 4.32 on the session shows "committed" at once, and only the detail
        form names the pending commit, at top level (commitTimerSessionName, commitTimerExpireTime), so a
        client that reads the plain form or the session states sees no pending commit (napalm issue #2166)."""
        timer_syntax = commit_timer_at_top(self.version)
        out: dict = {"maxSavedSessions": 1, "maxOpenSessions": 5, "sessions": {}}
        for name, s in sorted(self.sessions.items()):
            waiting = s.state == "pendingCommitTimer"
            entry: dict = {"state": "committed" if waiting and timer_syntax else s.state,
                           "completedTime": s.completed_at if s.completed_at else 0,
                           "commitUser": "", "description": s.description, "instances": {}}
            if detail:
                entry["mergeOnCommit"] = False
                if waiting and not timer_syntax and self.timer and self.timer.session == name:
                    entry["commitBy"] = round(self.timer.expires - self.boot_time, 3)
            out["sessions"][name] = entry
        if self.timer and detail and timer_syntax:
            out["commitTimerSessionName"] = self.timer.session
            out["commitTimerExpireTime"] = round(self.timer.expires - self.boot_time, 3)
        return out

    # ---- persistence of sessions and the commit timer -----------------------------------------
    def sessions_state(self) -> dict:
        """Configuration sessions and the pending commit timer, as the device keeps them across a restart."""
        completed = sorted((x for x in self.sessions.values() if x.state == "completed"),
                           key=lambda x: x.completed_at)[-1:]          # EOS keeps one saved session
        kept = [x for x in self.sessions.values() if x.state != "completed"] + completed
        return {"sessions": [{"name": x.name, "config": x.tree.render(), "state": x.state,
                              "completed_at": x.completed_at, "description": x.description} for x in kept],
                "timer": None if self.timer is None else {"session": self.timer.session,
                                                          "expires": self.timer.expires, "before": self.timer.before}}

    def restore_sessions(self, data: dict) -> None:
        """Bring back what sessions_state() saved; a timer that expired meanwhile reverts at the next tick."""
        for x in data.get("sessions", []):
            self.sessions[x["name"]] = Session(x["name"], parse(x["config"]), x["state"], x["completed_at"],
                                               x.get("description", ""))
        t = data.get("timer")
        if t:
            self.timer = CommitTimer(t["session"], float(t["expires"]), t["before"])

    # ---- file operations ---------------------------------------------------------------------
    def copy(self, src: str, dst: str) -> None:
        text = {"startup-config": self.startup, "running-config": self.render_running()}.get(src)
        if text is None:
            text = self.files.get(src)
        if text is None:
            raise CommandFailed([f"Error copying {src} to {dst} (No such file or directory)"], 1000,
                                "could not run command")
        if dst == "startup-config":
            self.startup = text
        else:
            self.files[dst] = text
        if self.on_change:
            self.on_change(self)

    def configure_replace(self, src: str) -> None:
        text = self.files.get(src) if src != "startup-config" else self.startup
        if text is None:
            raise CommandFailed([f"File {src} does not exist"], 1000, "could not run command")
        try:
            tree = parse(text)
        except ConfigError as e:
            raise CommandFailed([str(e)], 1000, "could not run command") from None
        self.running = tree
        self._changed()

    def write_memory(self) -> str:
        self.startup = self.render_running()
        if self.on_change:
            self.on_change(self)
        return "Copy completed successfully.\n"


_SESSION = re.compile(r"configure session (\S+)(?: (commit(?: timer (\d+):(\d\d):(\d\d))?|abort))?$")
_DESC = re.compile(r"description (.*)$")
