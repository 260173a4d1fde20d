"""Validated argparse types: a bad command-line value is a usage error (exit 3), never a traceback later.

Each type returns the value in the form the commands already use (an int, the original string), so the
commands only ever see values inside these bounds.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from nr_run.analysis.limits import FAILURES_RANGE, QPS_RANGE
from nr_run.intent.names import NAME_MAX, is_safe_name, is_site_name

MAX_WORKERS = 1000
MAX_CANARY = 10_000
MAX_PATH = 1024
CONFIRM_TIMEOUT_RANGE = (5, 3600)       # seconds a device waits before reverting a commit
EVERY_RANGE = (10, 7 * 86400)           # compliance interval: 10 s to a week
LATENCY_MS_MAX = 10_000
LAB_SHARDS_MAX = 64                     # the twin's own limit (lab.twin.shards.MAX_SHARDS)
_DURATION = re.compile(r"(\d{1,9})([smhd])", re.ASCII)      # \d alone would take other scripts' digits
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _int_in(text: str, low: int, high: int, what: str) -> int:
    try:
        value = int(text.strip(), 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what} must be a whole number, not {text[:40]!r}") from None
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"{what} must be between {low} and {high}, not {value}")
    return value


def workers(text: str) -> int:
    return _int_in(text, 1, MAX_WORKERS, "--workers")


def canary(text: str) -> int:
    return _int_in(text, 0, MAX_CANARY, "--canary")


def confirm_timeout(text: str) -> int:
    return _int_in(text, *CONFIRM_TIMEOUT_RANGE, "--confirm-timeout (seconds)")


def latency_ms(text: str) -> int:
    return _int_in(text, 0, LATENCY_MS_MAX, "--latency-ms")


def lab_shards(text: str) -> int:
    return _int_in(text, 1, LAB_SHARDS_MAX, "--shards")


def base_port(text: str) -> int:
    """0 (free ports chosen by the system) or 1024-53000: the twin listens on BASE + device index on each of
    up to three channels 4,096 ports apart (eAPI https, http, gNMI), which must all stay below 65536."""
    value = _int_in(text, 0, 53000, "--base-port")
    if 0 < value < 1024:
        raise argparse.ArgumentTypeError(f"--base-port must be 0 (free ports) or 1024-53000, not {value}")
    return value


def duration_seconds(text: str) -> int:
    """'90s', '15m', '1h', '1d' -> seconds."""
    match = _DURATION.fullmatch(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a duration: use e.g. 90s, 15m, 1h")
    return int(match.group(1)) * _UNIT[match.group(2)]


def every(text: str) -> str:
    """A compliance interval within EVERY_RANGE; returned as written (the command parses it)."""
    seconds = duration_seconds(text)
    low, high = EVERY_RANGE
    if not low <= seconds <= high:
        raise argparse.ArgumentTypeError(f"--every must be between {low}s and {high // 86400}d, not {text.strip()}")
    return text.strip()


def site(text: str) -> str:
    """A site name (a folder name under the inventory dir); that the folder exists is checked after parsing."""
    if not is_site_name(text):
        shown = text[:40] + ("..." if len(text) > 40 else "")
        raise argparse.ArgumentTypeError(
            f"site {shown!r} is not a site name (1-32 of A-Z a-z 0-9 _ -, starting with a letter or digit)")
    return text


def hosts(text: str) -> str:
    """A comma-separated list of device names; an empty list is refused (it would otherwise mean 'all')."""
    names = [h.strip() for h in text.split(",")]
    if not any(names):
        raise argparse.ArgumentTypeError("--hosts needs at least one host name (omit it to select every switch)")
    bad = [h for h in names if h and not is_safe_name(h)]
    if bad or any(not h for h in names):
        shown = bad[0][:NAME_MAX] if bad else ""
        raise argparse.ArgumentTypeError(f"--hosts: {shown!r} is not a host name")
    return text


# kernel pseudo file systems: nothing a run writes belongs there (and /proc, /sys refuse new files)
PSEUDO_FS = ("/proc", "/sys", "/dev")


def folder(text: str) -> str:
    """A folder that exists or can be created: not a file, under an existing writable folder, not on a kernel
    pseudo file system."""
    if not text or len(text) > MAX_PATH or "\x00" in text or any(len(part) > 255 for part in text.split("/")):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a usable folder path")
    try:
        return _folder(text)
    except OSError as exc:          # a loop of symlinks, a component too long for this file system, ...
        raise argparse.ArgumentTypeError(f"{text[:80]} is not a usable folder: {exc.strerror}") from None


def _folder(text: str) -> str:
    resolved = os.path.realpath(text)
    if any(resolved == top or resolved.startswith(top + "/") for top in PSEUDO_FS):
        raise argparse.ArgumentTypeError(f"{text[:80]} is on a kernel pseudo file system ({resolved})")
    path = Path(text)
    if path.exists():
        if not path.is_dir():
            raise argparse.ArgumentTypeError(f"{text} exists and is not a folder")
        if not os.access(path, os.W_OK | os.X_OK):
            raise argparse.ArgumentTypeError(f"{text} is not writable")
        return text
    parent = path.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text} cannot be created ({parent} is not a writable folder)")
    return text


def check_site_folder(site_name: str, inventory_dir: str) -> str | None:
    """Why `--site` does not name a folder under the inventory dir, or None."""
    if len(inventory_dir) > MAX_PATH or "\x00" in inventory_dir:
        return f"--inventory-dir {inventory_dir[:40]!r}... is not a usable folder path"
    directory = Path(inventory_dir) / site_name
    try:
        if not directory.is_dir():
            return f"no site {site_name!r}: {directory} is not a folder"
    except OSError as exc:          # a name too long for the file system, a loop of symlinks
        return f"no site {site_name!r}: {str(directory)[:80]} cannot be read ({exc.strerror})"
    return None


WATCH_EVERY_RANGE = (1, 86400)          # watch/exporter interval: 1 s to a day
RETENTION_RANGE = (3600, 3650 * 86400)  # history retention: an hour to ten years
MAX_COUNT = 10_000_000


def _duration_in(text: str, low: int, high: int, what: str) -> int:
    seconds = duration_seconds(text)
    if not low <= seconds <= high:
        raise argparse.ArgumentTypeError(f"{what} must be between {low}s and {high // 86400}d, not {text.strip()}")
    return seconds


def watch_every(text: str) -> int:
    """A watch or exporter interval, in seconds."""
    return _duration_in(text, *WATCH_EVERY_RANGE, "--every")


def retention(text: str) -> int:
    """How long the history keeps what it recorded, in seconds."""
    return _duration_in(text, *RETENTION_RANGE, "--retention")


def since(text: str) -> int:
    """A report window ending now ('24h'), in seconds."""
    return _duration_in(text, 1, RETENTION_RANGE[1], "--since")


def count(text: str) -> int:
    return _int_in(text, 1, MAX_COUNT, "--count")


def top(text: str) -> int:
    """Rows per ranking of a report."""
    return _int_in(text, 1, MAX_COUNT, "--top")


def failures(text: str) -> int:
    return _int_in(text, *FAILURES_RANGE, "--failures")


def qps(text: str) -> int:
    return _int_in(text, *QPS_RANGE, "--qps")


def listen(text: str) -> tuple[str, int]:
    """HOST:PORT or [IPV6]:PORT to serve on (port 0: a free one)."""
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d{1,5})|([A-Za-z0-9.-]{1,253}):(\d{1,5})", text.strip(), re.ASCII)
    if not m:
        raise argparse.ArgumentTypeError(f"--listen {text[:60]!r}: use HOST:PORT, e.g. 127.0.0.1:9464")
    host, port = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    value = int(port)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"--listen: port {value} is not 0-65535")
    return host, value


BUDGET_RANGE = (1.0, 600.0)             # job-check: seconds a Slurm prolog may spend


def budget(text: str) -> float:
    """job-check --budget seconds, within BUDGET_RANGE."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--budget must be a number of seconds, not {text[:40]!r}") from None
    low, high = BUDGET_RANGE
    if not low <= value <= high:           # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"--budget must be between {low:g} and {high:g} s, not {text[:40]}")
    return value


_CLUSTER = re.compile(r"(tcp|tls)://([A-Za-z0-9][A-Za-z0-9.-]{0,252}|\[[0-9A-Fa-f:]+\]):(\d{1,5})", re.ASCII)
MAX_SHARD = 100_000


def cluster(text: str) -> str:
    """--cluster: `local` (an embedded Dask LocalCluster) or a scheduler address tcp://HOST:PORT, tls://HOST:PORT."""
    m = _CLUSTER.fullmatch(text)
    if text != "local" and (m is None or not 1 <= int(m.group(3)) <= 65535):
        raise argparse.ArgumentTypeError(f"--cluster: {text!r} is not 'local' or tcp://HOST:PORT (tls://HOST:PORT)")
    return text


def shard_size(text: str) -> int:
    return _int_in(text, 1, MAX_SHARD, "--shard-size")
