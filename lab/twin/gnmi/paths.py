"""What a switch publishes over gNMI, computed from the fabric (the same calls its show commands make).

EOS (OpenConfig, leaf per update; origin "openconfig" or none):
  /interfaces/interface[name=P]/state/oper-status                                   UP | DOWN
  /interfaces/interface[name=P]/state/counters/{out-discards, carrier-transitions}   openconfig-interfaces
  /interfaces/interface[name=P]/ethernet/state/counters/{in-mac-pause-frames, out-mac-pause-frames}
                                                                                     openconfig-if-ethernet
  /qos/interfaces/interface[interface-id=P]/output/queues/queue[name=P-Q]/state/{transmit-pkts, dropped-pkts,
      ecn-marked-pkts, max-queue-len}
      openconfig-qos (output queue state: transmit/dropped pkts and octets, ecn-marked-pkts/-octets,
      max-queue-len, avg-queue-len; the leaves as ygot generates them in openconfig/functional-translators
      ciscoxr/ciscoxrqos/yang/openconfig). EOS names its queues "<interface>-<queue>" ("Ethernet1-3",
      multicast "Ethernet1-MC-3"): openconfig/functional-translators arista/aristaqosaggregatecounters (EOS
      4.33-4.35). UNVERIFIED: that EOS fills ecn-marked-pkts and max-queue-len; the twin serves ECN marks on ECN
      queues only and max-queue-len as the LANZ peak since `clear queue-monitor length statistics`.
EOS native (origin "eos_native"), UNVERIFIED: Arista publishes its state tree under this origin (its counters
under /Smash/counters/..., e.g. /Smash/counters/ethIntf/<agent>/current/counter), but no public sample of the
per-priority PFC counters was found; this mirrors the eAPI JSON field names:
  /Smash/counters/pfc/interface[name=P]/priority[id=N]/{rxFrames, txFrames}
SONiC (target COUNTERS_DB, sonic-gnmi virtual paths, one JSON_IETF value per requested path; SONiC's
doc/system-telemetry/grpc_telemetry.md and sonic-gnmi sonic_data_client/virtual_db.go):
  COUNTERS/Ethernet*            {port alias: {SAI_PORT_STAT_PFC_n_RX_PKTS, .._TX_PKTS, .._RX_PAUSE_DURATION_US, ...}}
  COUNTERS/Ethernet*/Queues     {"<alias>:<q>": {SAI_QUEUE_STAT_PACKETS, SAI_QUEUE_STAT_DROPPED_PACKETS,
                                 SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS (only while `counterpoll wredqueue` is on)}}
  COUNTERS/Ethernet*/Pfcwd      {"<alias>:<q>": {PFC_WD_STATUS, PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED, .._RESTORED}}
  COUNTERS/<port>[/<field>], CONFIG_DB <TABLE>[/<key>]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from nr_run.lab.twin.eos.show import LANZ
from nr_run.lab.twin.fabric import Fabric, pause_totals
from nr_run.lab.twin.sonic import wred

Elem = tuple[str, tuple[tuple[str, str], ...]]
Leaf = tuple[Elem, ...]


def matches(want: list[tuple[str, dict[str, str]]], leaf: Leaf) -> bool:
    """Whether a leaf lies under a requested path (`*` matches any name or key value)."""
    if len(want) > len(leaf):
        return False
    for (name, keys), (lname, lkeys) in zip(want, leaf, strict=False):
        if name not in ("*", lname):
            return False
        have = dict(lkeys)
        if any(v != "*" and have.get(k) != v for k, v in keys.items()):
            return False
    return True


def _e(elem: str, **keys: str) -> Elem:
    return (elem, tuple(sorted(keys.items())))


def _ports(fabric: Fabric, dev: str) -> list[str]:
    st = fabric.state(dev)
    return sorted((n for n in (st.interfaces if st else {}) if n.startswith("Ethernet")),
                  key=lambda n: (len(n), n))


def eos_leaves(fabric: Fabric, dev: str, origin: str, now: float | None = None) -> dict[Leaf, int | str]:
    """Every leaf an EOS switch publishes under `origin` ("openconfig" or "eos_native") at `now`."""
    now = time.time() if now is None else now
    out: dict[Leaf, int | str] = {}
    for port in _ports(fabric, dev):
        pfc = fabric.pfc_counters(dev, port, now)
        if origin == "eos_native":
            base = (_e("Smash"), _e("counters"))
            for prio, c in pfc.items():
                at = base + (_e("pfc"), _e("interface", name=port), _e("priority", id=str(prio)))
                out[at + (_e("rxFrames"),)] = c["rx"]
                out[at + (_e("txFrames"),)] = c["tx"]
            continue
        drops = fabric.queue_drops(dev, port, now)
        marks = fabric.ecn_marks(dev, port, now)
        peaks = fabric.queue_watermarks(dev, port, now, kind=LANZ)
        intf = (_e("interfaces"), _e("interface", name=port))
        out[intf + (_e("state"), _e("oper-status"))] = "UP" if fabric.link_up(dev, port) else "DOWN"
        out[intf + (_e("state"), _e("counters"), _e("out-discards"))] = sum(drops.values())
        out[intf + (_e("state"), _e("counters"), _e("carrier-transitions"))] = fabric.link_changes(dev, port)
        eth = intf + (_e("ethernet"), _e("state"), _e("counters"))
        out[eth + (_e("in-mac-pause-frames"),)], out[eth + (_e("out-mac-pause-frames"),)] = pause_totals(pfc)
        for q, d in drops.items():
            queue: Leaf = (_e("qos"), _e("interfaces"), _e("interface", **{"interface-id": port}), _e("output"),
                           _e("queues"), _e("queue", name=f"{port}-{q}"), _e("state"))
            out[queue + (_e("name"),)] = f"{port}-{q}"
            out[queue + (_e("transmit-pkts"),)] = 0
            out[queue + (_e("dropped-pkts"),)] = d
            out[queue + (_e("max-queue-len"),)] = peaks[q]
            if marks.get(q) is not None:
                out[queue + (_e("ecn-marked-pkts"),)] = int(marks[q] or 0)
    return out


def sonic_tables(fabric: Fabric, dev: str, running: Mapping[str, Any], now: float | None = None) -> dict[str, dict[str, dict[str, str]]]:
    """COUNTERS_DB as sonic-gnmi's virtual paths see it: {"ports"|"queues"|"pfcwd": {key: {field: "n"}}},
    port keys by their PORT alias when they have one (as the virtual paths key them)."""
    now = time.time() if now is None else now
    aliases = _aliases(running)
    wred_polled = wred.polled(running)
    ports: dict[str, dict[str, str]] = {}
    queues: dict[str, dict[str, str]] = {}
    pfcwd: dict[str, dict[str, str]] = {}
    for port, alias in sorted(aliases.items()):     # every port of CONFIG_DB, as the counter tables have them
        in_octets, in_pkts, out_octets, out_pkts = fabric.traffic(dev, port)
        fields: dict[str, str] = {"SAI_PORT_STAT_IF_IN_OCTETS": str(in_octets), "SAI_PORT_STAT_IF_OUT_OCTETS":
                                  str(out_octets), "SAI_PORT_STAT_IF_IN_UCAST_PKTS": str(in_pkts),
                                  "SAI_PORT_STAT_IF_OUT_UCAST_PKTS": str(out_pkts)}
        pfc = fabric.pfc_counters(dev, port, now)
        drops = fabric.queue_drops(dev, port, now)
        fields["SAI_PORT_STAT_IF_OUT_DISCARDS"] = str(sum(drops.values()))
        for prio, c in pfc.items():
            fields[f"SAI_PORT_STAT_PFC_{prio}_RX_PKTS"] = str(c["rx"])
            fields[f"SAI_PORT_STAT_PFC_{prio}_TX_PKTS"] = str(c["tx"])
            fields[f"SAI_PORT_STAT_PFC_{prio}_RX_PAUSE_DURATION_US"] = str(c["rx_us"])
            fields[f"SAI_PORT_STAT_PFC_{prio}_TX_PAUSE_DURATION_US"] = str(c["tx_us"])
        ports[alias] = dict(sorted(fields.items()))
        counts = fabric.wred_counters(dev, port, now)
        for q in range(8):
            qf = {"SAI_QUEUE_STAT_PACKETS": "0", "SAI_QUEUE_STAT_BYTES": "0", "SAI_QUEUE_STAT_DROPPED_PACKETS":
                  str(drops[q]), "SAI_QUEUE_STAT_DROPPED_BYTES": str(drops[q] * wred.FRAME_BYTES)}
            if wred_polled:      # the WRED_ECN_QUEUE counter group writes these only while it is polled
                wred_dropped, marked = counts.get(q, (0, 0))
                qf["SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS"] = str(marked)
                qf["SAI_QUEUE_STAT_WRED_DROPPED_PACKETS"] = str(wred_dropped)
            queues[f"{alias}:{q}"] = qf
        for prio, wd in fabric.watchdog_status(dev, port, now).items():
            if wd["enabled"]:
                pfcwd[f"{alias}:{prio}"] = {
                    "PFC_WD_STATUS": "stormed" if wd["stormDetected"] else "operational",
                    "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED": str(wd["stormCount"]),
                    "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED": str(wd["restoredCount"]),
                    "PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS": str(wd["droppedPackets"])}
    return {"ports": ports, "queues": queues, "pfcwd": pfcwd}


def _aliases(running: Mapping[str, Any]) -> dict[str, str]:
    """CONFIG_DB port name -> the key the counter paths use (its PORT alias, else the name)."""
    return {p: str(f.get("alias") or p) for p, f in running.get("PORT", {}).items()}


class PathError(LookupError):
    """A path the device does not serve (gNMI NOT_FOUND)."""


def sonic_value(fabric: Fabric, dev: str, running: Mapping[str, Any], target: str, elems: list[str],
                now: float | None = None) -> Any:
    """The value sonic-gnmi returns for a path under target COUNTERS_DB or CONFIG_DB (PathError if none)."""
    if target == "CONFIG_DB":
        table = running.get(elems[0]) if elems else None
        if table is None:
            raise PathError(f"CONFIG_DB has no table {'/'.join(elems)}")
        for key in elems[1:]:
            if not isinstance(table, dict) or key not in table:
                raise PathError(f"CONFIG_DB has no {'/'.join(elems)}")
            table = table[key]
        return table
    if target != "COUNTERS_DB" or len(elems) < 2 or elems[0] != "COUNTERS":
        raise PathError(f"no virtual path {target}:{'/'.join(elems)}")
    tables = sonic_tables(fabric, dev, running, now)
    key, rest = elems[1], elems[2:]
    by_alias = _aliases(running)
    wanted: Callable[[str], bool]
    if key.endswith("*"):
        prefix = key[:-1]
        wanted = lambda alias: alias.startswith(prefix) or any(  # noqa: E731
            n.startswith(prefix) and a == alias for n, a in by_alias.items())
    else:
        alias = by_alias.get(key, key)
        if alias not in tables["ports"]:
            raise PathError(f"{key} not a valid sonic interface")
        wanted = alias.__eq__
    if rest in (["Queues"], ["Pfcwd"]):
        tbl = tables["queues" if rest == ["Queues"] else "pfcwd"]
        return {k: v for k, v in tbl.items() if wanted(k.rsplit(":", 1)[0])}
    ports = {a: f for a, f in tables["ports"].items() if wanted(a)}
    if not rest:
        return ports if key.endswith("*") else next(iter(ports.values()))
    field = rest[0]
    if key.endswith("*"):
        return {a: {field: f[field]} for a, f in ports.items() if field in f}
    value = next(iter(ports.values())).get(field)
    if value is None:
        raise PathError(f"no counter {field} on {key}")
    return value
