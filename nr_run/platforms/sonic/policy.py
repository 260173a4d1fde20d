"""SONiC deploy policy: the regex policy (secrets, lockouts) plus how each change is applied.

A change GCU would refuse on the switch's HWSKU (napalm_sonic.gcu: the field-operation rules of
sonic-utilities, ASIC family from the HWSKU) or that is unsafe to patch live is a "drained apply"
(TSA, config reload, verify in APPL_DB, TSB); everything else is a "gcu" patch. The dry run shows this per
device; the driver decides again at commit time with the image's release from `show version`.
"""

from __future__ import annotations

import json
from typing import Any

from nr_run.platforms.policy import RegexPolicy
from nr_run.platforms.sonic.marker import SonicMarker


class SonicTraffic:
    """TSC tells the traffic shift, TSB shifts traffic back (napalm_sonic's driver runs them)."""

    def shifted(self, driver: Any) -> bool:
        return bool(driver.traffic_shifted())

    def restore(self, driver: Any) -> None:
        driver.undrain()


class SonicPolicy(RegexPolicy):
    marker = SonicMarker()
    traffic = SonicTraffic()

    def apply_method(self, running: str, candidate: str) -> tuple[str, str]:
        """(method, why) for turning the running config_db into the candidate on this switch."""
        # the driver's own prediction and normalisation (the same inputs as at commit), imported on use:
        # napalm_sonic's package import loads NAPALM
        from napalm_sonic import configdb, gcu

        try:
            old, new = configdb.normalize(json.loads(running or "{}")), configdb.normalize(json.loads(candidate or "{}"))
        except json.JSONDecodeError as exc:
            return "unknown", f"unreadable config_db: {exc}"
        return gcu.apply_method(old, new, gcu.hwsku_of(old, new))
