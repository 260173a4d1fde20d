"""EOS deploy marker: a pending, empty configuration session named after the deploy.

`configure session <name>` then `end` leaves a session in state "pending" that holds a copy of the running
config and changes nothing; every client sees it in `show configuration sessions`. EOS drops an uncommitted
session after 24 hours or a reboot, so a marker left by a killed run does not outlive a day. NAPALM's EOS
driver refuses to load a candidate while any other session is pending (its lock), our marker included; the
deploy reads the sessions here instead (the same read) and reports every pending session other than ours as
a hold, so NAPALM's check is turned off on the drivers this hook has read.
"""

from __future__ import annotations

from typing import Any

from nr_run.platforms.base import Hold, PlacedMarkers, is_marker, marker_time

# session states that say a change is in progress ("completed" ones are history)
_ACTIVE = ("pending", "pendingCommitTimer")


def _sessions(driver: Any) -> dict[str, dict[str, Any]]:
    out = driver.device.run_commands(["show configuration sessions"], encoding="json")
    return dict(out[0].get("sessions", {}))


class EosMarker:
    def __init__(self) -> None:
        self.mine = PlacedMarkers()

    def holds(self, driver: Any) -> list[Hold]:
        """Pending sessions: nr-run markers (time from their name, EOS does not report a session's creation)
        and any other tool's pending session or pending commit. This read is the deploy's session check:
        NAPALM's own (the same read, which would count our marker as foreign) is turned off on the driver."""
        driver.lock_disable = True
        mine = self.mine.of(driver)
        out = []
        for name, session in sorted(_sessions(driver).items()):
            if name == mine or session.get("state") not in _ACTIVE:
                continue
            # NAPALM's own session of this very driver (a candidate being loaded) is not a hold
            if name == driver.config_session:
                continue
            # a pending session that only looks like a marker is another tool's: refused, never removed
            out.append(Hold(name, is_marker(name), marker_time(name)))
        return out

    def place(self, driver: Any, name: str) -> None:
        driver.device.run_commands([f"configure session {name}", "end"], encoding="json")
        self.mine.placed(driver, name)
        driver.lock_disable = True       # NAPALM's lock would see our marker as someone else's session

    def remove(self, driver: Any, name: str) -> None:
        if name in _sessions(driver):
            driver.device.run_commands([f"configure session {name} abort"], encoding="json")
        self.mine.removed(driver, name)
