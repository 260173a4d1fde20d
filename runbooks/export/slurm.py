"""Slurm's topology files from the fabric: topology/tree (`topology.conf`) and topology/block (`topology-block.conf`).

Tree: a leaf per scalable unit (its servers are one hop apart on every rail), a switch per zone over its units
(the zone's CTSWs) and, on top, the site's spine or aggregation tier. LinkSpeed is in Gb/s (Slurm leaves the
unit to the site): a leaf's is one server's bandwidth into the unit, a zone's or the top's is the bandwidth of
one child toward it. Block: one block per scalable unit, BlockSizes up to a zone, so the block plugin keeps a
job inside a zone when it fits (topology/block exists from Slurm 23.11 on).
"""

from __future__ import annotations

from nr_run.intent.models import FabricIntent
from nr_run.runbooks.export.placement import Placement, collapse, placement

TREE_FILE = "topology.conf"
BLOCK_FILE = "topology-block.conf"


def _gbps(mbps: int) -> int:
    return mbps // 1000


def tree(p: Placement) -> str:
    lines = [f"# Slurm topology/tree for site {p.site} ({p.shape}), written by `nr-run export slurm`.",
             "# LinkSpeed: Gb/s. Leaves are scalable units (their RTSWs in the comment)."]
    for unit in p.units.values():
        lines.append(f"SwitchName={unit.name} Nodes={collapse(unit.servers)} LinkSpeed={_gbps(unit.server_mbps)}"
                     f"  # RTSWs {', '.join(unit.rtsws)}")
    if p.shape == "clos" and len(p.units) > 0:
        speed = min((u.uplink_mbps for u in p.units.values()), default=0)
        lines.append(f"SwitchName={p.site}-spine Switches={collapse(list(p.units))} LinkSpeed={_gbps(speed)}"
                     f"  # CTSWs {', '.join(p.spines)}")
    if p.shape == "multi-zone":
        for zone in p.zones.values():
            speed = min((p.units[u].uplink_mbps for u in zone.units), default=0)
            lines.append(f"SwitchName={zone.name} Switches={collapse(zone.units)} LinkSpeed={_gbps(speed)}"
                         f"  # CTSWs {', '.join(zone.ctsws)}")
        speed = min((z.uplink_mbps for z in p.zones.values()), default=0)
        lines.append(f"SwitchName={p.site}-aggregation Switches={collapse(list(p.zones))} LinkSpeed={_gbps(speed)}"
                     f"  # ATSWs {', '.join(p.aggregation)}")
    return "\n".join(lines) + "\n"


def block_sizes(p: Placement) -> list[int]:
    """BlockSizes (topology.conf(5)): the planning base size (the smallest unit's servers, so every block has at
    least that many nodes), then each size twice the last. Slurm builds a higher-level block from contiguous
    blocks in file order, so on a multi-zone site a level stops before it could join units of two zones: it
    spans at most as many units as the largest power of two dividing every zone's unit count."""
    base = min((len(u.servers) for u in p.units.values()), default=0)
    if not base:
        return []
    if p.zones:
        counts = [len(z.units) for z in p.zones.values()]
        span = 1
        while all(c % (span * 2) == 0 for c in counts):
            span *= 2
    else:
        span = 1
        while span * 2 <= len(p.units):
            span *= 2
    sizes, size = [base], base
    while size * 2 <= base * span:
        size *= 2
        sizes.append(size)
    return sizes


def block(p: Placement) -> str:
    lines = [f"# Slurm topology/block (Slurm 23.11+) for site {p.site} ({p.shape}), written by `nr-run export slurm`.",
             "# Install as topology.conf with TopologyPlugin=topology/block. A block per scalable unit, zone by zone;",
             "# BlockSizes double from the smallest unit up to what one zone holds."]
    for unit in p.units.values():
        lines.append(f"BlockName={unit.name} Nodes={collapse(unit.servers)}")
    if sizes := block_sizes(p):
        lines.append(f"BlockSizes={','.join(str(s) for s in sizes)}")
    return "\n".join(lines) + "\n"


def export_slurm(intent: FabricIntent) -> dict[str, str]:
    p = placement(intent)
    return {TREE_FILE: tree(p), BLOCK_FILE: block(p)}
