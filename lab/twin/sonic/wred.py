"""`show queue wredcounters`: WRED drops and ECN marks per unicast queue, as sonic-utilities prints them.

The counts come from the fabric model (a `congestion` fault marks packets on a queue whose QUEUE entry has
a wred_profile, drops them otherwise) and are polled only when FLEX_COUNTER_TABLE|WRED_ECN_QUEUE is enabled
(`counterpoll wredqueue enable`); without polling every cell reads N/A, as on a switch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

HEADERS = ["Port", "TxQ", "WredDrp/pkts", "WredDrp/bytes", "EcnMarked/pkts", "EcnMarked/bytes"]
FRAME_BYTES = 1500        # byte counters (here and over gNMI) assume full-size RoCE frames


def polled(running: Mapping[str, Any], group: str = "WRED_ECN_QUEUE") -> bool:
    """Whether FLEX_COUNTER_TABLE|<group> is enabled (what `counterpoll wredqueue|watermark enable` sets)."""
    entry = running.get("FLEX_COUNTER_TABLE", {}).get(group, {})
    return isinstance(entry, dict) and entry.get("FLEX_COUNTER_STATUS") == "enable"


def wredcounters(dev: Any, ports: list[str], only: str | None, table: Any) -> tuple[int, str, str]:
    on = polled(dev.running)
    rows = []
    for port in ports:
        if only and port != only:
            continue
        counts = dev.fabric.wred_counters(dev.node.name, port)
        for q in range(8):
            if not on:
                rows.append([port, f"UC{q}", "N/A", "N/A", "N/A", "N/A"])
                continue
            d, m = counts.get(q, (0, 0))        # WRED drops and marks only where WRED runs
            rows.append([port, f"UC{q}", f"{d:,}", f"{d * FRAME_BYTES:,}", f"{m:,}", f"{m * FRAME_BYTES:,}"])
    return 0, table(HEADERS, rows, 0), ""
