"""A stage's revert timer, from how long its post-check is measured to take.

A commit's revert timer must outlast the stage's post-checks, or the devices revert before they can be
confirmed (and a big stage, a CTSW with thousands of neighbours, never can be). The operator's
--confirm-timeout is the floor; above it the timer is

    MARGIN x (measured post-check seconds per device in scope) x (devices in this stage's scope)

where the measurement is the latest one: the baseline (the whole site) before the first stage, then each
stage's own post-check. Seconds per device assume the devices are read one after another, which overstates a
parallel run's time: the timer errs long, never short. MARGIN 2 covers a post-check that runs twice as slow as
the last one (a loaded automation host, slower devices) and the confirm round trip after it (one call per
device, against a post-check's several). The timer never exceeds MAX_S (the longest --confirm-timeout).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MARGIN = 2.0
MAX_S = 3600


@dataclass
class RevertTimer:
    floor_s: int                            # --confirm-timeout
    per_device_s: float | None = None       # the latest measured post-check seconds per device

    def observe(self, seconds: float, devices: int) -> None:
        """A check over `devices` devices took `seconds`."""
        if devices > 0 and seconds >= 0:
            self.per_device_s = seconds / devices

    def for_scope(self, devices: int) -> int:
        """The revert timer (s) of a stage whose post-check reads `devices` devices."""
        if self.per_device_s is None:
            return self.floor_s
        need = math.ceil(MARGIN * self.per_device_s * devices)
        return max(self.floor_s, min(MAX_S, need))
