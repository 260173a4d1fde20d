"""GPU server deploy policy: the regex policy of templates/linux/policy.yaml plus the host's deploy marker."""

from __future__ import annotations

from nr_run.platforms.linux.marker import LinuxMarker
from nr_run.platforms.policy import RegexPolicy


class LinuxPolicy(RegexPolicy):
    marker = LinuxMarker()

    def classify(self, diff: str) -> str:
        return "NIC script with revert timer"
