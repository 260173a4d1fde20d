"""NAPALM driver for community SONiC (202205 and later).

Transport: one SSH connection (paramiko, napalm_sonic.ssh); every command, ``cli()`` included, runs on its
own exec channel, so the driver sees each command's real exit status and opening costs one handshake (no
interactive shell to prepare).

The running config a loaded candidate was built on is kept with the candidate: ``compare_config()`` and
``get_config(retrieve="running")`` answer from it until the candidate is discarded or committed, or a
rollback runs, so a dry run (load, compare, apply-method decision) reads the switch's config once. Outside a
candidate every read goes to the switch (a revert timer changes the config on its own).

Candidate = a config_db JSON document. Commit = GCU when GCU will take the change: ``config checkpoint``,
JSON Patch from running to candidate (``config apply-patch``), ``config save -y``. A change GCU would refuse
(napalm_sonic.gcu: its field-operation rules for this HWSKU's ASIC family and release; buffer pools, whole
new QoS/buffer tables, ...) is a drained apply instead: ``TSA``, ``config reload -y <candidate>``, wait until
APPL_DB shows the changed buffer/port entries (``sonic-db-cli``, ``verify_timeout``), ``TSB``; a failure
reloads the saved config the same way. Nothing is half-applied: GCU's refusals are predicted before any
change. Every commit is guarded before the switch changes: a transient systemd timer (``systemd-run
--on-active``) is armed first, running ``config rollback <checkpoint>`` (GCU) or ``TSA; config reload -y
<backup>; TSB`` (drained: the restore drains and undrains too, so a switch left traffic-shifted by a killed
client is shifted back), then the change is applied. ``commit_config(revert_in=N)`` leaves that timer to fire N
s after it was armed unless ``confirm_commit()`` stops it; without revert_in the timer (``guard_timeout``) only
covers the apply and is stopped once the change is saved. A client that dies at any point leaves the switch
either unchanged or on a change its own timer restores; a confirm saves the change only while its timer still
waits. ``last_method`` says which path the last commit took
and why.

optional_args:
    port (int, 22); ssh_strict (bool, True): reject unknown host keys (uses ~/.ssh/known_hosts);
    insecure (bool, False): same as ssh_strict False, for labs; named as netmiko names them:
    alt_host_keys + alt_key_file (another known-hosts file), use_keys, key_file, passphrase, allow_agent,
    ssh_config_file (ProxyCommand, single-hop ProxyJump, HostName), conn_timeout, banner_timeout,
    auth_timeout (napalm_sonic.ssh.SshOptions);
    sudo (str, "sudo"): prefix for privileged commands ("" when logging in as root);
    config_cmd (str, "config"): the sonic-utilities `config` entry point (absolute path used by the timer);
    revert_unit (str, "napalm-sonic-revert"): systemd unit name of the revert timer;
    checkpoint_prefix (str, "napalm_sonic_"); tmp_dir (str, "/tmp");
    replace_preserve_tables (list[str]): tables kept from running on load_replace_candidate when the
        candidate lacks them (default: management/system tables, see PRESERVE_TABLES);
    verify_timeout (float, 480): seconds a drained apply waits for APPL_DB (sonic-mgmt allows 480 s);
    drain (bool, True): shift traffic away (TSA/TSB) around a drained apply;
    guard_timeout (float, 2 * verify_timeout + 300): seconds the timer of a commit without revert_in allows
        for the apply before it restores the switch (the client stops it once the change is in and saved).
"""

from __future__ import annotations

import copy
import json
import shlex
import time
from datetime import UTC, datetime
from typing import Any

from napalm.base import NetworkDriver
from napalm.base.exceptions import (
    CommandErrorException,
    CommandTimeoutException,
    CommitError,
    ConnectionException,
    MergeConfigException,
    ReplaceConfigException,
)

from napalm_sonic import configdb, gcu, parsers, ssh

# Tables a switch needs but an intent-rendered candidate usually omits; replacing them away would
# cut management access or disable system features.
PRESERVE_TABLES = (
    "AAA", "AUTO_TECHSUPPORT", "AUTO_TECHSUPPORT_FEATURE", "BANNER_MESSAGE", "CONSOLE_SWITCH", "CRM",
    "DHCP_SERVER", "FEATURE", "KDUMP", "LOGGER", "MGMT_INTERFACE", "MGMT_PORT", "MGMT_VRF_CONFIG", "NTP",
    "NTP_SERVER", "PASSW_HARDENING", "RESTAPI", "SNMP", "SNMP_COMMUNITY", "SSH_SERVER", "SYSLOG_CONFIG",
    "SYSLOG_SERVER", "SYSTEM_DEFAULTS", "TACPLUS", "TACPLUS_SERVER", "TELEMETRY", "VERSIONS",
)
GCU_OK = "Patch applied successfully"
# APPL_DB keys read per command when a change is verified, and the line that names each one's output
APPL_BATCH = 64
APPL_MARK = "nr-run-appl-db "
APPLY_MARK = "nr-run-apply-patch "           # followed by apply-patch's exit status (or the write's)
TIMER_MARK = "nr-run-revert-timer "          # followed by `systemctl is-active` of the revert timer's exit status
ARMED_MARK = "nr-run-revert-timer-armed"     # the timer still waited when a confirm saved the change


class SonicDriver(NetworkDriver):
    """NAPALM driver for community SONiC over SSH with GCU-based commits."""

    platform = "sonic"

    def __init__(self, hostname: str, username: str, password: str, timeout: int = 60,
                 optional_args: dict[str, Any] | None = None) -> None:
        self.hostname, self.username, self.password, self.timeout = hostname, username, password, timeout
        args = dict(optional_args or {})
        self.port = int(args.pop("port", 22) or 22)
        strict = bool(args.pop("ssh_strict", True)) and not bool(args.pop("insecure", False))
        self.sudo = str(args.pop("sudo", "sudo"))
        self.config_cmd = str(args.pop("config_cmd", "config"))
        self.revert_unit = str(args.pop("revert_unit", "napalm-sonic-revert"))
        self.cp_prefix = str(args.pop("checkpoint_prefix", "napalm_sonic_"))
        self.tmp_dir = str(args.pop("tmp_dir", "/tmp")).rstrip("/")
        self.preserve = tuple(args.pop("replace_preserve_tables", PRESERVE_TABLES))
        self.verify_timeout = float(args.pop("verify_timeout", 480))
        self.drain = bool(args.pop("drain", True))
        self.guard_timeout = float(args.pop("guard_timeout", 2 * self.verify_timeout + 300))
        self.ssh_options = ssh.SshOptions.pop_from(args, strict, self.port)
        self.device: Any = None         # the paramiko SSHClient once open
        self.candidate: configdb.ConfigDb | None = None
        self._base: configdb.ConfigDb | None = None      # the running config the candidate was built on
        self._last_checkpoint: str | None = None
        self._last_backup: str | None = None           # drained apply: the config to reload on rollback
        self.last_method: tuple[str, str] = ("", "")    # (method, why) of the last commit
        self._version: dict[str, str] | None = None      # `show version` of this connection (ASIC, release)

    # ---------------------------------------------------------------- connection
    def open(self) -> None:
        self._version = None
        try:
            self.device = ssh.connect(self.hostname, self.username, self.password, self.ssh_options)
        except Exception as exc:  # paramiko and sockets raise many types; NAPALM callers expect one
            raise ConnectionException(f"{self.hostname}:{self.port}: {exc}") from exc

    def close(self) -> None:
        self._forget_candidate()
        self._version = None
        if self.device is not None:
            ssh.close(self.device)
            self.device = None

    def is_alive(self) -> dict[str, bool]:
        transport = self.device.get_transport() if self.device is not None else None
        return {"is_alive": bool(transport is not None and transport.is_active())}

    # ---------------------------------------------------------------- primitives
    def _run(self, command: str, stdin: str | None = None, timeout: float | None = None) -> tuple[int, str]:
        """Run one command on an exec channel; return (exit status, stdout+stderr)."""
        if self.device is None:
            raise ConnectionException("not connected; call open() first")
        try:
            return ssh.run(self.device, command, stdin, timeout or self.timeout)
        except TimeoutError as exc:
            raise CommandTimeoutException(str(exc)) from exc

    def _priv(self, command: str) -> str:
        return f"{self.sudo} {command}".strip()

    def _put_file(self, path: str, text: str) -> None:
        rc, out = self._run(f"cat > {path}", stdin=text)
        if rc != 0:
            raise CommitError(f"cannot write {path}: {out.strip()}")

    def _running(self) -> configdb.ConfigDb:
        rc, out = self._run("show runningconfiguration all")
        if rc != 0:
            raise CommandErrorException(f"show runningconfiguration all failed: {out.strip()}")
        try:
            return configdb.normalize(json.loads(out))
        except json.JSONDecodeError as exc:
            raise CommandErrorException(f"unparsable running configuration: {exc}") from exc

    # ---------------------------------------------------------------- candidate
    @staticmethod
    def _read_candidate(filename: str | None, config: str | dict | None) -> configdb.ConfigDb:
        if filename:
            with open(filename, encoding="utf-8") as fh:
                config = fh.read()
        if config is None:
            raise ValueError("filename or config is required")
        doc = json.loads(config) if isinstance(config, str) else config
        if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
            raise ValueError("a config_db document is a JSON object of tables")
        return configdb.normalize(doc)

    def _forget_candidate(self) -> None:
        """Drop the candidate and the running config it was built on (the switch's config may change now)."""
        self.candidate, self._base = None, None

    def _set_candidate(self, base: configdb.ConfigDb, candidate: configdb.ConfigDb) -> None:
        self._base, self.candidate = base, candidate

    def load_merge_candidate(self, filename: str | None = None, config: str | dict | None = None) -> None:
        try:
            fragment = self._read_candidate(filename, config)
            running = self._running()
            _refuse_other_hardware(running, fragment)
            self._set_candidate(running, configdb.deep_merge(running, fragment))
        except (ValueError, OSError, CommandErrorException) as exc:
            self._forget_candidate()
            raise MergeConfigException(str(exc)) from exc

    def load_replace_candidate(self, filename: str | None = None, config: str | dict | None = None) -> None:
        try:
            doc = self._read_candidate(filename, config)
            running = self._running()
            _refuse_other_hardware(running, doc)
            for table in self.preserve:
                if table in running and table not in doc:
                    doc[table] = copy.deepcopy(running[table])
            self._set_candidate(running, doc)
        except (ValueError, OSError, CommandErrorException) as exc:
            self._forget_candidate()
            raise ReplaceConfigException(str(exc)) from exc

    def _running_now(self) -> configdb.ConfigDb:
        """The running config the loaded candidate was built on, else a fresh read."""
        return self._base if self._base is not None and self.candidate is not None else self._running()

    def compare_config(self) -> str:
        if self.candidate is None:
            return ""
        return configdb.diff_text(self._running_now(), self.candidate)

    def discard_config(self) -> None:
        self._forget_candidate()

    # ---------------------------------------------------------------- commit
    def _checkpoint(self) -> str:
        name = self.cp_prefix + datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        rc, out = self._run(self._priv(f"config checkpoint {name}"))
        if rc != 0:
            raise CommitError(f"config checkpoint failed: {out.strip()}")
        return name

    def _apply(self, ops: list[dict[str, Any]], tag: str) -> None:
        """Write the patch file, apply it and remove it in one command (one round trip, where a command each
        costs three): `cat` takes the patch from stdin, and apply-patch runs only once it is written; its exit
        status comes back on a marker line, since the removal runs after it whatever it returned."""
        path = f"{self.tmp_dir}/napalm_sonic_{tag}.json-patch"
        apply = self._priv(f"config apply-patch {path}")
        script = f"cat > {path} && {apply} 2>&1; echo {APPLY_MARK}$?; rm -f {path}"
        rc, out = self._run(script, stdin=json.dumps(ops, indent=2), timeout=max(self.timeout, 300))
        marks = [ln for ln in out.splitlines() if ln.startswith(APPLY_MARK)]
        status = marks[-1][len(APPLY_MARK):].strip() if marks else ""
        rc = int(status) if status.isdigit() else (rc or 1)
        if rc != 0 or GCU_OK not in out:
            raise CommitError(_gcu_reason(out) or f"apply-patch of {path} exited {rc}: {out.strip()[-300:]}")

    def _save(self) -> None:
        rc, out = self._run(self._priv("config save -y"))
        if rc != 0:
            raise CommitError(f"config save failed: {out.strip()}")

    def _show_version(self) -> dict[str, str]:
        """`show version`, read once per connection: the ASIC and the release change only with a reboot or an
        image upgrade, and either ends the SSH session this driver holds."""
        if self._version is None:
            _, text = self._run("show version")
            self._version = parsers.parse_show_version(text)
        return self._version

    def apply_method(self, running: configdb.ConfigDb, candidate: configdb.ConfigDb) -> tuple[str, str]:
        """("gcu", why) when GCU takes the change on this switch, else ("drained apply", why)."""
        ver = self._show_version()
        return gcu.apply_method(running, candidate, gcu.hwsku_of(running, candidate), ver.get("ASIC", "vs"),
                                ver.get("SONiC Software Version", ""))

    def _guard_seconds(self, revert_in: int | None) -> int:
        """How long the timer armed before a change waits: the confirm window, else the apply's own bound."""
        return max(1, int(revert_in)) if revert_in is not None else max(1, int(self.guard_timeout))

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        if message:
            raise NotImplementedError("Commit message not implemented for this platform")
        if self.candidate is None:
            raise CommitError("no candidate configuration loaded")
        # a commit already pending confirmation is refused by the switch itself, before any change: the revert
        # timer's unit exists, so arming this commit's timer fails ("Unit ... already exists"; _arm_revert)
        # the change is computed from the running config the candidate was loaded on, the one compare_config
        # diffed: what is applied is the diff that was shown (read again only without it)
        running = self._running_now()
        self._base = None         # the config changes from here on
        self.last_method = self.apply_method(running, self.candidate)
        if self.last_method[0] != "gcu":
            self._drained_apply(running, self.candidate, revert_in)
            return
        phases = configdb.make_patch_phases(running, self.candidate)
        checkpoint = self._checkpoint()
        config = _abs_config(self.config_cmd)
        # restored and saved: a switch the timer restores boots into the same config
        restore = f"/bin/sh -c {shlex.quote(f'{config} rollback {checkpoint} && {config} save -y')}"
        try:
            self._arm_revert(restore, self._guard_seconds(revert_in))
        except CommitError:
            self._run(self._priv(f"config delete-checkpoint {checkpoint}"))
            raise
        try:
            for n, ops in enumerate(phases, 1):
                self._apply(ops, f"{checkpoint}_{n}")
            behind = self.verify_applied(running, self.candidate, self.verify_timeout, guarded=True)
            if behind:           # CONFIG_DB took it, the daemons did not: do not leave it half in effect
                raise CommitError(f"change not in APPL_DB after {self.verify_timeout:g} s, rolled back: "
                                  f"{', '.join(behind[:5])}")
        except (CommitError, CommandTimeoutException):
            # restored while the timer still stands guard, then the timer goes (it would restore the same)
            self._run(self._priv(f"config rollback {checkpoint}"), timeout=max(self.timeout, 300))
            self._stop_timer()
            self._run(self._priv(f"config delete-checkpoint {checkpoint}"))
            raise
        self._last_checkpoint, self._last_backup = checkpoint, None
        self._forget_candidate()
        if revert_in is None:
            self._keep()

    # ---------------------------------------------------------------- drained apply
    def _reload(self, path: str) -> None:
        rc, out = self._run(self._priv(f"config reload -y {path}"), timeout=max(self.timeout, 600))
        if rc != 0:
            raise CommitError(f"config reload {path} failed: {out.strip()}")

    def _shift(self, command: str) -> None:
        if not self.drain:
            return
        rc, out = self._run(self._priv(command))
        if rc != 0:
            raise CommitError(f"{command} failed: {out.strip()}")

    def _appl_entries(self, keys: list[str]) -> dict[str, dict[str, str]]:
        """APPL_DB entries of `keys` (_appl_read)."""
        return self._appl_read(keys, timer=False)[0]

    def _appl_read(self, keys: list[str], timer: bool) -> tuple[dict[str, dict[str, str]], bool | None]:
        """APPL_DB entries of `keys`, read by one command per APPL_BATCH keys (one SSH round trip each, where
        a command per key costs a round trip per key): each HGETALL's output follows a marker line naming
        its key. A key whose marker or output is missing reads as absent ({}). timer: the last command also
        reads, after the entries, whether the revert timer still waits (None when not asked, or unreadable)."""
        out: dict[str, dict[str, str]] = {}
        armed: bool | None = None
        chunks = [keys[i:i + APPL_BATCH] for i in range(0, len(keys), APPL_BATCH)] or [[]]
        for n, chunk in enumerate(chunks, 1):
            parts = [f"echo {shlex.quote(APPL_MARK + k)}; sonic-db-cli APPL_DB HGETALL {shlex.quote(k)}" for k in chunk]
            if timer and n == len(chunks):
                parts.append(f"systemctl is-active --quiet {self.revert_unit}.timer; echo {TIMER_MARK}$?")
            _, text = self._run("; ".join(parts))
            current: str | None = None
            lines: dict[str, list[str]] = {}
            for line in text.splitlines():
                if timer and line.startswith(TIMER_MARK):
                    status = line[len(TIMER_MARK):].strip()
                    armed = status == "0" if status.isdigit() else None
                    current = None
                elif line.startswith(APPL_MARK) and line[len(APPL_MARK):] in chunk:
                    current = line[len(APPL_MARK):]
                    lines[current] = []
                elif current is not None:
                    lines[current].append(line)
            out.update({k: parsers.parse_db_hash("\n".join(lines[k])) if k in lines else {} for k in chunk})
        return out, armed

    def verify_applied(self, running: configdb.ConfigDb, target: configdb.ConfigDb, timeout: float,
                       guarded: bool = False) -> list[str]:
        """Wait until APPL_DB carries every changed buffer/port entry of `target`; the keys still behind.
        guarded: the change's revert timer is armed; once it has fired (the switch restored itself) there is
        nothing left to wait for."""
        behind = configdb.appl_db_changes(running, target)
        deadline = time.monotonic() + timeout
        while True:
            # every key still behind in one read, and (guarded) the timer in the same command, read after the
            # entries: a change seen applied is only in effect while its timer waits. A key that has caught up
            # is not read again.
            now, armed = self._appl_read(sorted(behind), timer=guarded) if behind or guarded else ({}, None)
            behind = {k: fields for k, fields in behind.items() if now[k] != fields}
            if guarded and armed is None:        # the timer's line did not come back: read it on its own
                armed = self.has_pending_commit()
            if guarded and not armed:
                raise CommitError("the revert timer fired before the change was in APPL_DB (the confirm window "
                                  "is shorter than the apply): the switch restored its config")
            if not behind or time.monotonic() >= deadline:
                return list(behind)
            time.sleep(min(1.0, max(0.05, timeout / 50)))

    def _restore_script(self, backup: str) -> str:
        """What the timer of a drained apply runs: the backup reloaded the way it was applied, drained (TSA
        first, TSB whatever the reload's outcome), so the timer also undrains a switch a client left shifted."""
        config = _abs_config(self.config_cmd)
        reload = f"{config} reload -y {shlex.quote(backup)} && {config} save -y"
        script = f"TSA; {reload}; TSB" if self.drain else reload
        return f"/bin/sh -c {shlex.quote(script)}"

    def _drained_apply(self, running: configdb.ConfigDb, candidate: configdb.ConfigDb, revert_in: int | None) -> None:
        """Timer (restore + undrain) -> TSA -> config reload (candidate) -> APPL_DB verify -> TSB; on failure
        the saved config, the same way, before the timer is stopped."""
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        backup = f"{self.tmp_dir}/{self.cp_prefix}backup_{stamp}.json"
        target = f"{self.tmp_dir}/{self.cp_prefix}candidate_{stamp}.json"
        self._put_file(backup, configdb.dumps(running))
        self._put_file(target, configdb.dumps(candidate))
        self._arm_revert(self._restore_script(backup), self._guard_seconds(revert_in))
        try:
            self._shift("TSA")
            self._reload(target)
            behind = self.verify_applied(running, candidate, self.verify_timeout, guarded=True)
            if behind:
                raise CommitError(f"change not in APPL_DB after {self.verify_timeout:g} s: {', '.join(behind[:5])}")
        except (CommitError, CommandTimeoutException) as exc:
            try:
                self._reload(backup)
                self.verify_applied(candidate, running, self.verify_timeout)
            finally:
                self._shift("TSB")
            self._stop_timer()
            raise CommitError(f"drained apply failed, saved config reloaded: {exc}") from exc
        self._shift("TSB")
        self._run(f"rm -f {target}")
        self._last_backup, self._last_checkpoint = backup, None
        self._forget_candidate()
        if revert_in is None:
            self._keep()

    def _arm_revert(self, command: str, seconds: int) -> None:
        """Arm the timer that runs `command` (restoring the switch) in `seconds` unless it is stopped first.
        Called before a change: a timer that cannot be armed means nothing is changed."""
        cmd = (f"systemd-run --on-active={seconds}s --unit={self.revert_unit} "
               f"--description='napalm_sonic revert' {command}")
        rc, out = self._run(self._priv(cmd))
        if rc != 0:
            raise CommitError(f"cannot arm the revert timer, nothing changed: {out.strip()}")

    def traffic_shifted(self) -> bool:
        """TSA in effect (`TSC`: "System Mode: Maintenance")."""
        rc, out = self._run(self._priv("TSC"))
        if rc != 0:
            raise CommandErrorException(f"TSC failed: {out.strip()}")
        return "Maintenance" in out

    def undrain(self) -> None:
        """Shift traffic back (TSB)."""
        rc, out = self._run(self._priv("TSB"))
        if rc != 0:
            raise CommandErrorException(f"TSB failed: {out.strip()}")

    def has_pending_commit(self) -> bool:
        rc, _ = self._run(f"systemctl is-active --quiet {self.revert_unit}.timer")
        return rc == 0

    def _stop_timer(self) -> None:
        self._run(self._priv(f"systemctl stop {self.revert_unit}.timer"))

    def _keep(self, no_timer: str = "the revert timer is gone: the switch restored its config, nothing kept") -> None:
        """Save the change, then stop its timer, in one command, and only while the timer still waits: once sent,
        the switch runs the three even if this client dies, so it never keeps an unsaved change without a timer
        (a failed save leaves the timer), and never saves a config the timer has already restored (`no_timer`:
        the CommitError then)."""
        unit = f"{self.revert_unit}.timer"
        script = (f"systemctl is-active --quiet {unit} && echo {ARMED_MARK} && {self.config_cmd} save -y "
                  f"&& systemctl stop {unit}")
        rc, out = self._run(self._priv(f"sh -c {shlex.quote(script)}"))
        if ARMED_MARK not in out.splitlines():
            raise CommitError(no_timer)
        if rc != 0:
            raise CommitError(f"config save failed, the revert timer still runs: {out.strip()}")

    def confirm_commit(self) -> None:
        self._base = None
        self._keep("no pending commit to confirm")

    # ---------------------------------------------------------------- named checkpoints
    def list_checkpoints(self) -> list[tuple[str, datetime | None]]:
        """(name, last modified) of every GCU checkpoint on the switch (`config list-checkpoints --time`)."""
        rc, out = self._run(self._priv("config list-checkpoints --time"))
        if rc != 0 and "no such option" in out.lower():     # a release before --time: names only
            rc, out = self._run(self._priv("config list-checkpoints"))
        if rc != 0:
            raise CommandErrorException(f"config list-checkpoints failed: {out.strip()}")
        try:
            rows = json.loads(out)
        except json.JSONDecodeError as exc:
            raise CommandErrorException(f"unparsable checkpoint list: {exc}") from exc
        listed: list[tuple[str, datetime | None]] = []
        for row in rows if isinstance(rows, list) else []:
            if isinstance(row, dict) and isinstance(row.get("name"), str):
                try:
                    when: datetime | None = datetime.fromisoformat(str(row.get("time", "")))
                except ValueError:
                    when = None
                if when is not None and when.tzinfo is None:     # no offset given: taken as UTC, so an age can be told
                    when = when.replace(tzinfo=UTC)
                listed.append((row["name"], when))
            elif isinstance(row, str):          # a release whose --time is ignored lists names only
                listed.append((row, None))
        return listed

    def create_checkpoint(self, name: str) -> None:
        """A GCU checkpoint of the running config named `name` (replaced if it exists)."""
        _check_name(name)
        rc, out = self._run(self._priv(f"config checkpoint {name}"))
        if rc != 0:
            raise CommandErrorException(_gcu_reason(out) or f"config checkpoint {name} exited {rc}")

    def delete_checkpoint(self, name: str) -> None:
        _check_name(name)
        rc, out = self._run(self._priv(f"config delete-checkpoint {name}"))
        if rc != 0:
            raise CommandErrorException(_gcu_reason(out) or f"config delete-checkpoint {name} exited {rc}")

    def _latest_checkpoint(self) -> str | None:
        if self._last_checkpoint:
            return self._last_checkpoint
        rc, out = self._run(self._priv("config list-checkpoints"))
        try:
            names = json.loads(out) if rc == 0 else []
        except json.JSONDecodeError:
            names = []
        # names come from the switch and go back into a command line: only well-formed ones are ours
        ours = sorted(n for n in names if isinstance(n, str) and n.startswith(self.cp_prefix) and _is_name(n))
        return ours[-1] if ours else None

    def rollback(self) -> None:
        self._forget_candidate()
        if self._last_backup is not None:               # the last commit was a drained apply: undo it likewise
            running = self._running()
            backup = self._last_backup
            rc, text = self._run(f"cat {backup}")
            if rc != 0:
                raise CommitError(f"drained-apply backup {backup} is gone: {text.strip()}")
            self._shift("TSA")
            try:
                self._reload(backup)
                self.verify_applied(running, configdb.normalize(json.loads(text)), self.verify_timeout)
            finally:
                self._shift("TSB")
            self._stop_timer()
            self._save()
            return
        checkpoint = self._latest_checkpoint()
        if checkpoint is None:
            raise CommitError("no napalm_sonic checkpoint to roll back to")
        # the pending timer (if any) stays armed until the rollback is in: it restores the same checkpoint
        rc, out = self._run(self._priv(f"config rollback {checkpoint}"), timeout=max(self.timeout, 300))
        if rc != 0:
            raise CommitError(_gcu_reason(out) or f"config rollback exited {rc}")
        self._stop_timer()
        self._save()

    # ---------------------------------------------------------------- getters
    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False,
                   format: str = "text") -> dict[str, str]:
        out = {"running": "", "startup": "", "candidate": ""}
        if retrieve in ("all", "running"):
            running = self._running_now()
            out["running"] = configdb.dumps(configdb.sanitize(running) if sanitized else running)
        if retrieve in ("all", "startup"):
            rc, text = self._run("cat /etc/sonic/config_db.json")
            if rc == 0:
                try:
                    out["startup"] = configdb.dumps(configdb.normalize(json.loads(text)))
                except json.JSONDecodeError:
                    out["startup"] = text
        if retrieve in ("all", "candidate") and self.candidate is not None:
            out["candidate"] = configdb.dumps(self.candidate)
        return out

    def get_facts(self) -> dict[str, Any]:
        _, ver = self._run("show version")
        v = parsers.parse_show_version(ver)
        running = self._running()
        meta = running.get("DEVICE_METADATA", {}).get("localhost", {})
        _, up = self._run("cat /proc/uptime")
        ports = sorted(running.get("PORT", {}), key=_port_sort)
        return {
            "hostname": meta.get("hostname", ""),
            "fqdn": meta.get("hostname", ""),
            "vendor": "SONiC",
            "model": v.get("HwSKU", meta.get("hwsku", "")),
            "os_version": v.get("SONiC Software Version", ""),
            "serial_number": v.get("Serial Number", ""),
            "uptime": parsers.parse_uptime_seconds(up),
            "interface_list": ports,
        }

    def get_interfaces(self) -> dict[str, dict[str, Any]]:
        rc, text = self._run("show interfaces status")
        if rc != 0:
            raise CommandErrorException(text.strip())
        ports = self._running().get("PORT", {})
        out: dict[str, dict[str, Any]] = {}
        for name, row in sorted(parsers.parse_interfaces_status(text).items(), key=lambda kv: _port_sort(kv[0])):
            mtu = row.get("MTU", "")
            out[name] = {
                "is_up": row.get("Oper") == "up",
                "is_enabled": row.get("Admin") == "up",
                "description": ports.get(name, {}).get("description", ""),
                "last_flapped": -1.0,
                "speed": parsers.parse_speed_mbps(row.get("Speed", "")),
                "mtu": int(mtu) if mtu.isdigit() else 0,
                "mac_address": "",
            }
        return out

    def get_lldp_neighbors(self) -> dict[str, list[dict[str, str]]]:
        rc, text = self._run("show lldp table")
        if rc != 0:
            raise CommandErrorException(text.strip())
        return parsers.parse_lldp_table(text)

    def get_bgp_neighbors(self) -> dict[str, Any]:
        rc, text = self._run(self._priv("vtysh -c 'show bgp summary json'"))
        if rc != 0:
            raise CommandErrorException(text.strip())
        summary = json.loads(text or "{}")
        bgp_cfg = self._running().get("BGP_NEIGHBOR", {})
        router_id = ""
        peers: dict[str, dict[str, Any]] = {}
        for afi_key, afi in (("ipv4Unicast", "ipv4"), ("ipv6Unicast", "ipv6")):
            af = summary.get(afi_key) or {}
            router_id = router_id or af.get("routerId", "")
            for ip, p in sorted(af.get("peers", {}).items()):
                cfg = bgp_cfg.get(ip, {})
                state = str(p.get("state", ""))
                peer = peers.setdefault(ip, {
                    "local_as": int(p.get("localAs", af.get("as", 0))),
                    "remote_as": int(p.get("remoteAs", 0)),
                    "remote_id": p.get("remoteRouterId", p.get("hostname", "")) or "",
                    "is_up": state == "Established",
                    "is_enabled": cfg.get("admin_status", "up") != "down" and "Admin" not in state,
                    "description": cfg.get("name", p.get("desc", "")) or "",
                    "uptime": parsers.parse_frr_uptime(str(p.get("peerUptime", ""))),
                    "address_family": {},
                })
                received = int(p.get("pfxRcd", 0) or 0)
                peer["address_family"][afi] = {
                    "received_prefixes": received,
                    "accepted_prefixes": received,
                    "sent_prefixes": int(p.get("pfxSnt", 0) or 0),
                }
        return {"global": {"router_id": router_id, "peers": peers}}

    def cli(self, commands: list[str], encoding: str = "text") -> dict[str, str]:
        """Each command's output (stdout, then stderr, as a terminal shows them), run on an exec channel."""
        if encoding != "text":
            raise NotImplementedError(f"{encoding} is not a supported encoding")
        return {c: self._run(c)[1] for c in commands}


def _refuse_other_hardware(running: configdb.ConfigDb, candidate: configdb.ConfigDb) -> None:
    """A config rendered for another HWSKU or port table is refused before anything is pushed (ValueError)."""
    found = configdb.hardware_mismatches(running, candidate)
    if found:
        raise ValueError("config does not match the switch's hardware: " + "; ".join(found[:5])
                         + (f" (and {len(found) - 5} more)" if len(found) > 5 else ""))


def _gcu_reason(output: str) -> str:
    """The device's failure text: GCU's 'Failed to ...' block, else click's 'Error:' line, else all."""
    lines = [ln for ln in output.strip().splitlines() if ln.strip()]
    for i, line in enumerate(lines):
        if line.startswith("Failed to "):
            return "\n".join(lines[i:])
    errors = [ln for ln in lines if ln.startswith("Error:")]
    return errors[-1] if errors else output.strip()


def _is_name(name: str) -> bool:
    """A checkpoint name is a file name on the switch and a word on its command line."""
    return (0 < len(name) <= 128 and name[0] != "." and name.isascii()
            and all(ch.isalnum() or ch in "-_." for ch in name))


def _check_name(name: str) -> None:
    if not _is_name(name):
        raise ValueError(f"invalid checkpoint name {name!r}")


def _abs_config(cmd: str) -> str:
    """systemd-run wants an absolute path; sonic-utilities installs `config` in /usr/local/bin."""
    return cmd if cmd.startswith("/") else f"/usr/local/bin/{cmd}"


def _port_sort(name: str) -> tuple[str, int]:
    digits = "".join(ch for ch in name if ch.isdigit())
    return (name.rstrip("0123456789"), int(digits) if digits else -1)
