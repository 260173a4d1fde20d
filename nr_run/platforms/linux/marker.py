"""GPU server deploy marker: an empty file /run/nr-run/marks/<marker name> on the host.

/run is a tmpfs, so a reboot clears a mark as it clears a switch's pending session; every client that logs in
sees it (`ls /run/nr-run/marks`). A change in progress on a server is a pending revert timer, which the deploy
checks separately (NicDriver.has_pending_commit).
"""

from __future__ import annotations

from typing import Any

from nr_run.platforms.base import Hold, is_marker, marker_time
from nr_run.platforms.linux.driver import MARKS


class LinuxMarker:
    def holds(self, driver: Any) -> list[Hold]:
        mine = driver.nr_run_marker
        return [Hold(name, True, marker_time(name)) for name in driver.list_marks()
                if is_marker(name) and name != mine]

    def place(self, driver: Any, name: str) -> None:
        if not is_marker(name):
            raise ValueError(f"{name!r} is not a deploy marker name")
        driver.checked(f"mkdir -p {MARKS}")
        driver.checked(f"echo {name} > {MARKS}/{name}")
        driver.nr_run_marker = name

    def remove(self, driver: Any, name: str) -> None:
        if not is_marker(name):
            raise ValueError(f"{name!r} is not a deploy marker name")
        driver.checked(f"rm -f {MARKS}/{name}")
        if driver.nr_run_marker == name:
            driver.nr_run_marker = None
