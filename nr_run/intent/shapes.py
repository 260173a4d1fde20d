"""The shapes a site can declare, as data: which roles form which tier, and which cabling rules join them.

Tier 0 holds the servers; every tier above connects only to the tiers next to it. The compiler, the analyses
and the rollout read a device's tier from here (DeviceIntent.tier), so none of them needs a role name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ShapeSpec:
    tiers: tuple[str, ...]          # role of tier 0 (servers), 1 (leaves), 2 (spines), 3 (aggregation)
    rules: tuple[str, ...]          # cabling rule types the shape uses
    zoned: bool                     # devices below the top tier belong to a zone
    what: str                       # one line for messages and docs


SHAPES: dict[str, ShapeSpec] = {
    "star": ShapeSpec(("gpu", "rtsw"), ("rail",), False,
                      "every server on one or a few switches, no spine tier"),
    "clos": ShapeSpec(("gpu", "rtsw", "ctsw"), ("rail", "leaf-spine"), False,
                      "a two-tier Clos: RTSWs (leaves) and CTSWs (spines)"),
    "multi-zone": ShapeSpec(("gpu", "rtsw", "ctsw", "atsw"), ("rail", "leaf-spine", "spine-aggregation"), True,
                            "zones of two-tier Clos joined by an aggregation tier (ATSWs) over the zones' CTSWs"),
}

TIER_NAMES = ("server", "leaf", "spine", "aggregation")


def tier_of(shape: str, role: str) -> int | None:
    """The role's tier in the shape (0 = servers), or None when the shape has no such role."""
    tiers = SHAPES[shape].tiers
    return tiers.index(role) if role in tiers else None


def top_tier(shape: str) -> int:
    return len(SHAPES[shape].tiers) - 1
