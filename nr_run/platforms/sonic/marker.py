"""SONiC deploy marker: a GCU checkpoint named after the deploy.

`config checkpoint <name>` saves a copy of the running CONFIG_DB under /etc/sonic/checkpoints and changes
nothing; `config list-checkpoints --time` shows it to every client with its time. Other checkpoints (GCU's
own, napalm_sonic's) are history, not holds: a change in progress on SONiC is a pending revert timer, which
the deploy checks separately.
"""

from __future__ import annotations

from typing import Any

from nr_run.platforms.base import Hold, PlacedMarkers, is_marker, marker_time


class SonicMarker:
    def __init__(self) -> None:
        self.mine = PlacedMarkers()

    def holds(self, driver: Any) -> list[Hold]:
        mine = self.mine.of(driver)
        # checkpoints not named exactly as markers are history (GCU's, napalm_sonic's), never holds
        return [Hold(name, True, when or marker_time(name)) for name, when in sorted(driver.list_checkpoints(),
                                                                                     key=lambda nw: nw[0])
                if is_marker(name) and name != mine]

    def place(self, driver: Any, name: str) -> None:
        driver.create_checkpoint(name)
        self.mine.placed(driver, name)

    def remove(self, driver: Any, name: str) -> None:
        try:
            driver.delete_checkpoint(name)
        except Exception as exc:          # gone already (removed by hand, or by --break-lock elsewhere)
            if "does not exist" not in str(exc):
                raise
        self.mine.removed(driver, name)
