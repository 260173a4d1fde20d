"""Per-port event counts of later SONiC releases: `show interfaces flap` and `show pfc counters --history`.

`show interfaces flap` (sonic-utilities show/interfaces/__init__.py, expected output in tests/flap_test.py):
Interface, Flap Count, Admin, Oper, Link Down/Up TimeStamp(UTC) from APPL_DB PORT_TABLE flap_count,
last_down_time, last_up_time (sonic-swss portsorch updateDbPortFlapCount: every oper status change counts, so
the first link up is 1, as EOS' linkStatusChanges). `show pfc counters --history` (sonic-utilities
scripts/pfcstat, tests/pfcstat_input/assert_show_output.py): per port and priority, RX pause transitions and
total RX pause time (SAI_PORT_STAT_PFC_n_ON2OFF_RX_PKTS, ..._RX_PAUSE_DURATION_US); the recent pause columns
come from the watchdog's estimator (EST_ counters) on some platforms only, N/A here. A release before the
command's (lab/twin/sonic/release.py) refuses it as click does.
"""

from __future__ import annotations

import time
from typing import Any

from nr_run.lab.twin.sonic import release
from nr_run.lab.twin.sonic.tables import row_format

Result = tuple[int, str, str]
HISTORY_HEADERS = ["Port", "Priority", "RX Pause Transitions", "Total RX Pause Time US", "Recent RX Pause Time US",
                   "Recent RX Pause Timestamp"]


def _stamp(t: float | None) -> str:
    return "Never" if t is None else time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(t))


def _layout(headers: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max([len(h)] + [len(r[i]) for r in rows if r]) for i, h in enumerate(headers)]

    fmt = row_format(widths, right)
    return [fmt(headers).rstrip(), "  ".join("-" * w for w in widths)] + [fmt(r).rstrip() if r else "" for r in rows]


def flap(dev: Any, ports: list[str], only: str | None) -> Result:
    rel = release.release(dev.node.image)
    if rel < release.SHOW_FLAP:
        return 2, "", "Usage: show interfaces [OPTIONS] COMMAND [ARGS]...\nTry \"show interfaces -h\" for help.\n\n" \
                      "Error: No such command \"flap\".\n"
    if only and only not in ports:
        return 2, "", f"Usage: show interfaces flap [OPTIONS] [INTERFACENAME]\n\nError: Invalid interface name {only}\n"
    rows = []
    name = dev.node.name
    for port in ports:
        if only and port != only:
            continue
        down, up = dev.fabric.link_times(name, port)
        up = up if up is not None else dev.boot_time            # the first link up after boot counts too
        admin = dev.running["PORT"][port].get("admin_status", "down")
        oper = "up" if dev.fabric.link_up(name, port) else "down"
        rows.append([port, str(dev.fabric.link_changes(name, port)), admin.capitalize(), oper.capitalize(),
                     _stamp(down), _stamp(up)])
    headers = ["Interface", "Flap Count", "Admin", "Oper", "Link Down TimeStamp(UTC)", "Link Up TimeStamp(UTC)"]
    return 0, "\n".join(_layout(headers, rows, {1})) + "\n", ""


def pfc_history(dev: Any, ports: list[str]) -> Result:
    if release.release(dev.node.image) < release.PFC_HISTORY:
        return 2, "", ("Usage: show pfc counters [OPTIONS]\nTry \"show pfc counters -h\" for help.\n\n"
                       "Error: No such option: --history\n")
    rows: list[list[str]] = []
    name = dev.node.name
    for port in ports:
        pfc = dev.fabric.pfc_counters(name, port)
        transitions = dev.fabric.pause_transitions(name, port)
        rows += [[port, f"PFC{p}", f"{transitions[p]:,}", f"{pfc[p]['rx_us']:,}", "N/A", "N/A"] for p in range(8)]
        rows.append([])
    return 0, "\n".join(_layout(HISTORY_HEADERS, rows, set(range(6)))) + "\n", ""
