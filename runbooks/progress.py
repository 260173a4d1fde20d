"""Per-device progress: a live table on a terminal, one line per change elsewhere (CI, cron, pipes).
Also a Nornir processor, so task starts and ends update it.

On a terminal the view is a table of the devices (a count per state plus the latest changes when the
site has more devices than fit); without one, every state change is a line `HH:MM:SS device: state (note)`
and every phase a line `HH:MM:SS == phase`, so a log shows where a run was when it stopped.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

STYLES = {"confirmed": "green", "no change": "green", "diffed": "cyan", "rolled back": "yellow",
          "reverted": "yellow", "failed": "red", "skipped": "magenta", "unreachable": "red",
          "interrupted": "red", "collected": "green"}
# Above this many devices the live view is a count per state and the latest changes, not a row per device
TABLE_ROWS = 24


def _stamp() -> str:
    return time.strftime("%H:%M:%S")


class DeviceProgress:
    """Thread-safe device -> state map, rendered live on a terminal, as lines elsewhere, or not at all
    (console=None)."""

    def __init__(self, console: Console | None, devices: list[str], title: str = "devices"):
        self.console = console
        self.title = title
        self.states: dict[str, str] = dict.fromkeys(devices, "pending")
        self.notes: dict[str, str] = {}
        self.phase_text = ""
        self.started = time.monotonic()
        self._recent: deque[str] = deque(maxlen=8)
        self._lock = threading.Lock()
        self._live: Live | None = None

    @property
    def lines(self) -> bool:
        return self.console is not None and not self.console.is_terminal

    def __enter__(self) -> DeviceProgress:
        if self.console is not None and self.console.is_terminal:
            self._live = Live(self._view(), console=self.console, refresh_per_second=8, transient=True)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)
            self._live = None

    def set(self, device: str, state: str, note: str = "") -> None:
        with self._lock:
            changed = self.states.get(device) != state or (note and self.notes.get(device) != note)
            self.states[device] = state
            if note:
                self.notes[device] = note
            if changed:
                self._recent.append(f"{device}: {state}" + (f" ({note})" if note else ""))
        if changed and self.lines and self.console is not None:
            self.console.print(Text(f"{_stamp()} {device}: {state}" + (f" ({note})" if note else "")),
                               soft_wrap=True, highlight=False)
        if self._live is not None:
            self._live.update(self._view())

    def phase(self, text: str) -> None:
        """A step of the whole run (a stage, a probe, a measurement window)."""
        with self._lock:
            self.phase_text = text
        if self.lines and self.console is not None:
            self.console.print(Text(f"{_stamp()} == {text}"), soft_wrap=True, highlight=False)
        if self._live is not None:
            self._live.update(self._view())

    def _view(self) -> Any:
        elapsed = time.monotonic() - self.started
        with self._lock:
            head = Text(f"{self.title}: {self.phase_text or 'working'} ({elapsed:.0f} s)", style="bold")
            if len(self.states) <= TABLE_ROWS:
                table = Table(show_header=True, box=None)
                table.add_column("device")
                table.add_column("state")
                table.add_column("note", overflow="fold")
                for name in sorted(self.states):
                    state = self.states[name]
                    table.add_row(name, f"[{STYLES.get(state, 'white')}]{state}[/]", self.notes.get(name, ""))
                return Group(head, table)
            counts = Counter(self.states.values())
            summary = Text("  ".join(f"{state}: {n}" for state, n in sorted(counts.items())))
            return Group(head, summary, *(Text(f"  {line}") for line in self._recent))


class ProgressProcessor:
    """Nornir processor: the running task's name becomes the device's state ('diffing', 'committing'...);
    with `done`, a finished task's label (a failed one is 'failed')."""

    def __init__(self, progress: DeviceProgress, labels: dict[str, str], done: dict[str, str] | None = None):
        self.progress, self.labels, self.done = progress, labels, done or {}

    def task_started(self, task) -> None: ...
    def task_completed(self, task, result) -> None: ...

    def task_instance_started(self, task, host) -> None:
        label = self.labels.get(task.name)
        if label:
            self.progress.set(host.name, label)

    def task_instance_completed(self, task, host, result) -> None:
        if result.failed and task.name in self.labels:
            self.progress.set(host.name, "failed")
        elif task.name in self.done:
            self.progress.set(host.name, self.done[task.name])

    def subtask_instance_started(self, task, host) -> None: ...
    def subtask_instance_completed(self, task, host, result) -> None: ...
