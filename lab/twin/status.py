"""A lab's state folder read without starting or importing the twin: its default place and its status.

Light on purpose (standard library and the plain-data faults only): the CLI reads a running lab's addresses on
every --lab run, and importing the twin's servers (aiohttp, asyncssh) would cost more than the read itself.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from nr_run.lab.twin.faults import Faults


def default_state_dir(site: str) -> Path:
    """The twin's state folder when none is given: under the working folder's artifacts, never the package."""
    return Path.cwd() / ".nr-run" / "lab" / site


def read_json(path: Path) -> dict:
    """A state file's JSON object; {} when it is missing or unreadable (a lab that is stopping or never ran)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie or our own exited child does not)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:     # our own child that exited: reap it
            return False
    except ChildProcessError:
        pass                                           # not our child (another shell started it)
    try:
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    try:                                               # a zombie is not a running lab
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def lab_status(state_dir: str | Path) -> dict:
    """{"running": bool, "pid", "addresses", "faults", "control_port"} of a (background) lab."""
    sd = Path(state_dir)
    ctl = read_json(sd / "control.json")
    pid = int(ctl.get("pid", 0) or 0)
    running = bool(pid) and alive(pid)
    faults = Faults.load(sd / "faults.json").to_json()
    info = read_json(sd / "lab.json")
    return {"running": running, "pid": pid if running else None, "state_dir": str(sd),
            "control_port": ctl.get("control_port") if running else None, "site": info.get("site"),
            "note": info.get("note", "") if running else "", "topology": info.get("topology"),
            "addresses": read_json(sd / "addresses.json"), "faults": faults}
