"""Where a device sits in the site's address plan: the numbers its addresses, ASN and ports are drawn from.

With a `plan:` (fixed capacities), a device's numbers are a function of its own place (zone, unit, index)
only, so adding a unit, a zone, a CTSW or an ATSW inside the capacities renumbers nothing that exists. A site
without a plan (the original two-tier format) numbers devices by their position among the ones present, which
is the same as long as units and switches are added at the end and no cable is removed.
"""

from __future__ import annotations

from dataclasses import dataclass

from nr_run.intent.schema import Plan


def next_pow2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


@dataclass(frozen=True)
class Place:
    """The identity fields of a host that the plan reads."""

    role: str
    zone: int | None
    su: int | None
    index: int
    ordinal: int          # position within its role (sites without a plan)


class Slots:
    """The plan's numbering; `plan` None gives the position-based numbering of sites without one."""

    def __init__(self, plan: Plan | None) -> None:
        self.plan = plan
        # leaves of one zone occupy a power-of-two run of slots, so a zone's host blocks form one prefix
        self.leaves_per_zone = next_pow2(plan.units_per_zone * plan.rtsw_per_unit) if plan else 0

    def leaf(self, p: Place) -> int:
        """RTSW slot: its ASN offset, loopback offset and host block number."""
        if self.plan is None:
            return p.ordinal
        return ((p.zone or 1) - 1) * self.leaves_per_zone + self.leaf_in_zone(p)

    def leaf_in_zone(self, p: Place) -> int:
        """The RTSW's downlink position on every CTSW of its zone."""
        if self.plan is None:
            return p.ordinal
        return ((p.su or 1) - 1) * self.plan.rtsw_per_unit + p.index - 1

    def spine(self, p: Place) -> int:
        """CTSW slot: its loopback offset and its downlink position on every ATSW."""
        if self.plan is None:
            return p.ordinal
        return ((p.zone or 1) - 1) * self.plan.ctsw_per_zone + p.index - 1

    def spine_in_zone(self, p: Place) -> int:
        """The uplink of every RTSW of the zone that goes to this CTSW."""
        return p.ordinal if self.plan is None else p.index - 1

    def aggregation(self, p: Place) -> int:
        return p.ordinal if self.plan is None else p.index - 1

    def leaf_spine_p2p(self, leaf: Place, spine: Place) -> int:
        """The /31 number (in pools.fabric_p2p) of a leaf's uplink to a spine of its zone."""
        assert self.plan is not None
        return self.leaf(leaf) * self.plan.ctsw_per_zone + self.spine_in_zone(spine)

    def spine_aggregation_p2p(self, spine: Place, agg: Place) -> int:
        """The /31 number of a spine's uplink to an ATSW: after every leaf-spine /31 the plan can hold."""
        assert self.plan is not None
        base = self.plan.zones * self.leaves_per_zone * self.plan.ctsw_per_zone
        return base + self.spine(spine) * self.plan.atsw + self.aggregation(agg)

    def fabric_p2p_capacity(self) -> int:
        assert self.plan is not None
        return (self.plan.zones * self.leaves_per_zone * self.plan.ctsw_per_zone
                + self.plan.zones * self.plan.ctsw_per_zone * self.plan.atsw)

    def leaf_capacity(self) -> int:
        assert self.plan is not None
        return self.plan.zones * self.leaves_per_zone
