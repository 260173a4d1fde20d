"""Interrupts (Ctrl-C, SIGTERM): stop starting work and bound the wait for work in flight.

A `Stop` is set by the signal handler. Long steps run in a worker thread through `bounded()`: the caller
waits for the step, or, once stop is set, at most `grace` seconds more, then gets `Interrupted` and may
decide what to do with the devices (roll back, or leave them to their revert timers). A step abandoned
this way keeps running in its thread; the CLI exits the process without waiting for it.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Interrupted(Exception):
    """The run was asked to stop and a step did not finish within the grace period."""


class Stop:
    """A thread-safe stop request with the signal that set it."""

    def __init__(self, grace: float = 2.0):
        self._event = threading.Event()
        self.grace = grace
        self.reason = ""

    def set(self, reason: str = "interrupted") -> None:
        self.reason = self.reason or reason
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)

    def install(self) -> None:
        """SIGINT and SIGTERM set the stop (main thread only); a second Ctrl-C raises KeyboardInterrupt."""
        def handler(signum: int, frame: Any) -> None:
            if self.is_set() and signum == signal.SIGINT:
                raise KeyboardInterrupt
            self.set(signal.Signals(signum).name)
            print(f"nr-run: {signal.Signals(signum).name}: stopping (no new device work; "
                  f"in-flight calls get {self.grace:g} s)", file=sys.stderr, flush=True)

        if threading.current_thread() is threading.main_thread():
            self._previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}

    def restore(self) -> None:
        """Put back the handlers install() replaced (a caller embedding the CLI keeps its own)."""
        for sig, previous in getattr(self, "_previous", {}).items():
            signal.signal(sig, previous)
        self._previous = {}

    def borrowed(self) -> contextlib.AbstractContextManager[Stop]:
        """This stop as a context that installs nothing (its owner installed it for longer)."""
        return contextlib.nullcontext(self)

    def __enter__(self) -> Stop:
        self.install()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.restore()


def bounded(step: Callable[[], T], stop: Stop | None) -> T:
    """Run `step` in a worker thread; return its result, or raise Interrupted when stop is set and the step
    does not finish within the grace period. Without a stop, just run it."""
    if stop is None:
        return step()
    if stop.is_set():
        raise Interrupted(stop.reason)
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["value"] = step()
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name="nr-run-step", daemon=True).start()
    while not done.wait(0.05):
        if stop.is_set():
            if not done.wait(stop.grace):
                raise Interrupted(stop.reason)
            break
    if "error" in box:
        raise box["error"]
    return box["value"]
