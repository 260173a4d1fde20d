"""What every command shares: exit codes, the usage error, JSON output and the console."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Iterable, Iterator

TYPE_CHECKING = False   # no typing import at start-up (a tenth of `nr-run --help`)
if TYPE_CHECKING:
    from typing import Any

EXIT_OK, EXIT_FAIL, EXIT_DIFF, EXIT_INVALID = 0, 1, 2, 3
# could not check: a device did not answer or could not be read, and nothing that was read failed
EXIT_UNKNOWN = 4
# Width used when no terminal is attached (cron, CI, pipes): lines are not wrapped at 80 columns
PIPE_WIDTH = 200


class UsageError(Exception):
    """Bad combination of options: exit 3."""


def verbosity(args: Any) -> int:
    """-q -> -1, default 0, -v -> 1, -vv -> 2 (the options may be flags or counts)."""
    if getattr(args, "quiet", False):
        return -1
    return int(getattr(args, "verbose", 0) or 0)


def terminal_width() -> int | None:
    """The width of the user's terminal even when stdout is piped (stderr or stdin may still be one)."""
    if os.environ.get("COLUMNS", "").isdigit():
        return int(os.environ["COLUMNS"])
    for stream in (sys.stdout, sys.stderr, sys.stdin):
        try:
            if stream is not None and stream.isatty():
                return os.get_terminal_size(stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            continue
    return None


def make_console(stderr: bool = False) -> Any:
    """A rich console at the full terminal width; without a terminal, wide plain lines."""
    from rich.console import Console

    width = terminal_width()
    console = Console(stderr=stderr, width=width or PIPE_WIDTH, soft_wrap=False)
    return console


# The cyclic collector's first-generation threshold for a run: a check or deploy holds many short-lived objects
# in flight at once (each device's replies, state and findings while it is judged); at Python's default of 700
# allocations they outlive young collections only to be freed by reference counting soon after, and the
# promotions trigger full passes over the whole heap (about a fifth of a 1,000-device deploy's client CPU).
GC_YOUNG_THRESHOLD = 50_000


def gc_for_runs() -> None:
    """Collect young objects less often, so those of one device's judging die before they are promoted."""
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Compile and render build a large, long-lived object graph and almost no cyclic garbage; Python's
    cyclic collector would re-scan the growing heap again and again (cost growing faster than the site).
    Pause it, then freeze what was built so later collections skip it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def emit_text(pieces: Iterable[str]) -> None:
    """Text written to stdout piece by piece (a large report's JSON: runbooks.json_stream)."""
    try:
        for piece in pieces:
            sys.stdout.write(piece)
        sys.stdout.flush()
    except BrokenPipeError:
        quiet_broken_pipe()


def emit_json(payload: dict[str, Any]) -> None:
    try:
        import json

        json.dump(payload, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:
        quiet_broken_pipe()


def quiet_broken_pipe() -> None:
    """The reader went away (`| head`): stop writing without a traceback at interpreter exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
