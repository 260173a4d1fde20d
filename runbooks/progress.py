"""Per-device progress shown with rich; also a Nornir processor so task starts/ends update it."""

from __future__ import annotations

import threading
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

STYLES = {"confirmed": "green", "no change": "green", "diffed": "cyan", "rolled back": "yellow",
          "failed": "red", "skipped": "magenta", "unreachable": "red"}


class DeviceProgress:
    """Thread-safe device -> state map, rendered live on a console (or silent with console=None)."""

    def __init__(self, console: Console | None, devices: list[str]):
        self.console = console
        self.states: dict[str, str] = dict.fromkeys(devices, "pending")
        self.notes: dict[str, str] = {}
        self._lock = threading.Lock()
        self._live: Live | None = None

    def __enter__(self) -> DeviceProgress:
        if self.console is not None and self.console.is_terminal:
            self._live = Live(self._table(), console=self.console, refresh_per_second=8, transient=True)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)
            self._live = None

    def set(self, device: str, state: str, note: str = "") -> None:
        with self._lock:
            self.states[device] = state
            if note:
                self.notes[device] = note
        if self._live is not None:
            self._live.update(self._table())

    def _table(self) -> Table:
        table = Table(title="devices")
        table.add_column("device")
        table.add_column("state")
        table.add_column("note")
        with self._lock:
            for name in sorted(self.states):
                state = self.states[name]
                table.add_row(name, f"[{STYLES.get(state, 'white')}]{state}[/]", self.notes.get(name, ""))
        return table


class ProgressProcessor:
    """Nornir processor: the running task's name becomes the device's state ('diffing', 'committing'...)."""

    def __init__(self, progress: DeviceProgress, labels: dict[str, str]):
        self.progress, self.labels = progress, labels

    def task_started(self, task) -> None: ...
    def task_completed(self, task, result) -> None: ...

    def task_instance_started(self, task, host) -> None:
        label = self.labels.get(task.name)
        if label:
            self.progress.set(host.name, label)

    def task_instance_completed(self, task, host, result) -> None:
        if result.failed and task.name in self.labels:
            self.progress.set(host.name, "failed")

    def subtask_instance_started(self, task, host) -> None: ...
    def subtask_instance_completed(self, task, host, result) -> None: ...
