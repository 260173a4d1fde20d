"""EOS deploy marker: a pending, empty configuration session named after the deploy.

`configure session <name>` then `end` leaves a session in state "pending" that holds a copy of the running
config and changes nothing; every client sees it in `show configuration sessions`. EOS drops an uncommitted
session after 24 hours or a reboot, so a marker left by a killed run does not outlive a day. NAPALM's EOS
driver refuses to load a candidate while any other session is pending (its lock), our marker included; the
deploy reads the sessions here instead (the detail form, which also names a commit waiting for its
confirmation on every release: platforms.eos.sessions) and reports every pending session other than ours as a
hold, so NAPALM's check is turned off on the drivers this hook has read.
"""

from __future__ import annotations

from typing import Any

from nr_run.platforms.base import Hold, PlacedMarkers, is_marker, marker_time
from nr_run.platforms.eos.sessions import Sessions, read_sessions


class EosMarker:
    def __init__(self) -> None:
        self.mine = PlacedMarkers()

    def holds(self, driver: Any) -> list[Hold]:
        """Pending sessions and commits (one `show configuration sessions detail`): see holds_in."""
        return self.holds_in(driver, read_sessions(driver))

    def holds_in(self, driver: Any, sessions: Sessions) -> list[Hold]:
        """The holds in a sessions read: nr-run markers (time from their name, EOS does not report a session's
        creation) and any other tool's pending session or commit waiting for its confirmation. This read is
        the deploy's session check: NAPALM's own (the plain form, which would count our marker as foreign and
        miss a 4.32 pending commit) is turned off on the driver."""
        driver.lock_disable = True
        mine = self.mine.of(driver)
        out = []
        for name in sessions.open:
            # our marker, and NAPALM's own session of this very driver (a candidate being loaded), hold nothing
            if name in (mine, driver.config_session):
                continue
            # a pending session that only looks like a marker is another tool's: refused, never removed
            out.append(Hold(name, is_marker(name), marker_time(name)))
        return out

    def place(self, driver: Any, name: str) -> None:
        driver.device.run_commands([f"configure session {name}", "end"], encoding="json")
        self.mine.placed(driver, name)
        driver.lock_disable = True       # NAPALM's lock would see our marker as someone else's session

    def remove(self, driver: Any, name: str) -> None:
        if name in read_sessions(driver).open:
            driver.device.run_commands([f"configure session {name} abort"], encoding="json")
        self.mine.removed(driver, name)
