"""Queue watermarks and PFC pause history as sonic-utilities prints them (scripts/watermarkstat, scripts/pfcstat).

`show queue watermark unicast` prints the USER watermarks, `show queue persistent-watermark unicast` the
PERSISTENT ones: bytes of the shared buffer each unicast queue held at most since the set was last cleared
(`sonic-clear queue watermark unicast`, `sonic-clear queue persistent-watermark unicast`). The title line and
the all-right-aligned table follow sonic-utilities' tests/wm_input/wm_test_vectors.py; every cell reads N/A
while FLEX_COUNTER_TABLE|QUEUE_WATERMARK is not enabled (the watermark tables stay empty, as on a switch).
"""

from __future__ import annotations

from typing import Any

from nr_run.lab.twin.sonic import wred

Result = tuple[int, str, str]
KINDS = {"watermark": "user", "persistent-watermark": "persistent"}
TITLE = "Egress shared pool occupancy per unicast queue:"


def show_queue(dev: Any, ports: list[str], which: str, queues: str, table: Any) -> Result:
    """`show queue watermark|persistent-watermark unicast`."""
    if queues != "unicast":
        return 2, "", f"Error: No such command \"{queues}\".\n"
    on = wred.polled(dev.running, "QUEUE_WATERMARK")
    rows = []
    for port in ports:
        marks = dev.fabric.queue_watermarks(dev.node.name, port, kind=KINDS[which])
        rows.append([port] + [str(marks[q]) if on else "N/A" for q in range(8)])
    return 0, TITLE + "\n" + table(["Port"] + [f"UC{q}" for q in range(8)], rows, 0), ""


def clear(dev: Any, args: list[str]) -> Result:
    """`sonic-clear queue watermark|persistent-watermark unicast` (the other sonic-clear groups are not served)."""
    words = [a for a in args if not a.startswith("-")]
    if len(words) == 3 and words[0] == "queue" and words[1] in KINDS and words[2] in ("unicast", "multicast", "all"):
        dev.fabric.clear_watermarks(dev.node.name, KINDS[words[1]])
        return 0, "", ""
    return 2, "", "Usage: sonic-clear [OPTIONS] COMMAND [ARGS]...\nTry \"sonic-clear -h\" for help.\n\n" \
                  f"Error: No such command \"{words[0] if words else ''}\".\n"

