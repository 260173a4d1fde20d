"""EOS deploy policy: the regex policy (secrets, lockouts) and the config-session deploy marker."""

from __future__ import annotations

from nr_run.platforms.eos.marker import EosMarker
from nr_run.platforms.policy import RegexPolicy


class EosPolicy(RegexPolicy):
    marker = EosMarker()
