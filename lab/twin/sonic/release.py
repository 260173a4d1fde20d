"""Which SONiC release a node runs (its containerlab image tag), and the commands that arrived after 202305.

The release is the image tag's YYYYMM (`vrnetlab/sonic_sonic-vs:202305` -> 202305); an untagged, `latest` or
`master` image is the newest. A feature's first release is the release branch cut after its merge; backports
to older branches are not modelled (UNVERIFIED for each):
  APPL_DB PORT_TABLE flap_count         sonic-swss PR #3052 (2024-03): every oper status change counts
  show interfaces flap                  sonic-utilities PR #3724 (2025-01)
  show pfc counters --history           sonic-utilities PR #3778 (2025-08)
"""

from __future__ import annotations

import re

NEWEST = 999999
FLAP_COUNT = 202405
SHOW_FLAP = 202505
PFC_HISTORY = 202511


def release(image: str) -> int:
    """YYYYMM of the image's tag (NEWEST when it names no release)."""
    m = re.search(r":(\d{6})(?:\b|$)", image)
    return int(m.group(1)) if m else NEWEST


def version_string(image: str) -> str:
    """What `show version` prints as SONiC Software Version, in the form SONiC's release builds carry
    (SONiC.<YYYYMMDD build date>.<build number>, e.g. SONiC.20240510.12; GCU reads the date to gate rules);
    the twin's build is dated the 15th of the tag's month, build 1. A master image has no date
    (SONiC.master.<build>-<commit>), so GCU applies master's rules without a release gate."""
    rel = release(image)
    return "SONiC.master.1-twin" if rel == NEWEST else f"SONiC.{rel}15.1"
