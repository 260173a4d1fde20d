"""Linux GPU server config builder: the NICs' NicQos -> structured config -> the NIC script (templates/linux).

The structured config holds every knob explicitly (all eight priorities of PFC and of DCQCN enable, every DCQCN
parameter), so the script sets a NIC completely: applying it to a NIC in any state leaves the NIC exactly as
the intent says, and the same script rendered from a NIC's read-back state restores that state.

RDMA device names follow the mlx5 driver's enumeration on a server whose RoCE NICs are its rail ports: the
k-th rail NIC (in port order) is mlx5_k, port 1. The deploy reads the host's own `rdma link show` and refuses
a host whose names differ, so a wrong guess never writes another NIC's ToS.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from jinja2 import Environment

from nr_run.intent.errors import Finding
from nr_run.intent.models import DeviceIntent, FabricIntent, Interface
from nr_run.intent.nic import NicQos
from nr_run.platforms.base import ClabNode
from nr_run.platforms.guard import shared
from nr_run.platforms.jinja_env import platform_environment
from nr_run.platforms.qos import DeviceQos, from_intent

TEMPLATE = "nic.j2"
PRIORITIES = range(8)
# the mlx5 sysfs names of the DCQCN parameters nr-run sets (NicQos.rp / NicQos.np), in the order written
RP_KEYS = ("rpg_time_reset", "rpg_byte_reset", "rpg_threshold", "rpg_ai_rate", "rpg_hai_rate", "rpg_gd",
           "rpg_min_dec_fac", "rpg_min_rate", "rate_to_set_on_first_cnp", "dce_tcp_g", "dce_tcp_rtt",
           "rate_reduce_monitor_period", "initial_alpha_value")
NP_KEYS = ("min_time_between_cnps", "cnp_dscp", "cnp_802p_prio")


# (template folder, structured config as JSON) -> script: bounded, as a site has few distinct NIC settings
_RENDERED: dict[tuple[str, str], str] = {}
_RENDERED_MAX = 256
# (template folder, id of a structured config structured_config shares) -> (it, its script)
_RENDERED_SHARED: dict[tuple[str, int], tuple[Mapping[str, Any], str]] = {}


def rdma_device(index: int) -> str:
    return f"mlx5_{index}"


def nic_entry(name: str, rdma: str, mtu: int, qos: NicQos) -> dict[str, Any]:
    """One NIC of the structured config: every knob, explicit."""
    return {"name": name, "rdma": rdma, "port": 1, "mtu": mtu, **_qos_fields(qos)}


# id of a NicQos -> (it, its fields): a site's NICs share a few NicQos objects (one per RoCE profile), so each is
# read once; the structured config is never modified, so NICs may share the lists. Keeping the NicQos in the
# value keeps its id from being reused while the entry lives (bounded).
_QOS_FIELDS: dict[int, tuple[NicQos, dict[str, Any]]] = {}


def _qos_fields(qos: NicQos) -> dict[str, Any]:
    found = _QOS_FIELDS.get(id(qos))
    if found is not None and found[0] is qos:
        return found[1]
    rp = qos.rp.model_dump()
    np_values = {"min_time_between_cnps": qos.np.min_time_between_cnps, "cnp_dscp": qos.cnp_dscp,
                 "cnp_802p_prio": qos.cnp_priority}
    ecn = set(qos.ecn_priorities)
    fields = {"trust": [qos.trust], "dscp_prio": [[d, p] for d, p in sorted(qos.dscp_to_prio.items())],
              "pfc": [p in qos.pfc_priorities for p in PRIORITIES],
              "rp_enable": [int(p in ecn) for p in PRIORITIES], "np_enable": [int(p in ecn) for p in PRIORITIES],
              "rp": [[k, rp[k]] for k in RP_KEYS], "np": [[k, np_values[k]] for k in NP_KEYS], "tos": qos.roce_tos}
    if len(_QOS_FIELDS) >= _RENDERED_MAX:
        _QOS_FIELDS.clear()
    _QOS_FIELDS[id(qos)] = (qos, fields)
    return fields


# (name, index, mtu, id of NicQos) of each configured NIC -> (those NicQos, the structured config): servers of
# one model and profile have equal NIC settings (the script sets no address), so they share one dict, which the
# guard proves and the render lays out once; the value holds the NicQos objects, which keeps their ids from
# being reused while the entry lives (bounded)
_STRUCTURED: dict[tuple[tuple[str, int, int, int], ...], tuple[list[NicQos], dict[str, Any]]] = {}


def structured_config(device: DeviceIntent) -> dict[str, Any]:
    nics = [(nic.name, index, nic.mtu, nic.qos) for index, nic in enumerate(device.nics) if nic.qos is not None]
    key = tuple((name, index, mtu, id(qos)) for name, index, mtu, qos in nics)
    found = _STRUCTURED.get(key)
    if found is not None and all(a is b for a, b in zip(found[0], (q for *_, q in nics), strict=True)):
        return found[1]
    built = shared({"nics": [nic_entry(name, rdma_device(index), mtu, qos) for name, index, mtu, qos in nics]})
    if len(_STRUCTURED) >= _RENDERED_MAX:
        _STRUCTURED.clear()
    _STRUCTURED[key] = ([q for *_, q in nics], built)
    return built


# a NIC entry's settings -> what they make the NIC do; a site's NICs share a few settings (bounded)
_VIEWS: dict[tuple[Any, ...], dict[str, Any]] = {}


def _nic_view(nic: Mapping[str, Any]) -> dict[str, Any]:
    """The PortQos fields a NIC entry sets: trust, DSCP table (unlisted DSCPs on priority 0), PFC, MTU, DCQCN."""
    try:
        key = (tuple(nic["trust"]), tuple(tuple(pair) for pair in nic["dscp_prio"]), tuple(nic["pfc"]), nic["mtu"],
               tuple(nic["rp_enable"]), tuple(nic["np_enable"]))
        found = _VIEWS.get(key)
    except TypeError:           # a value that cannot be a key: read it each time
        return _read_nic(nic)
    if found is None:
        found = _read_nic(nic)
        if len(_VIEWS) >= _RENDERED_MAX:
            _VIEWS.clear()
        _VIEWS[key] = found
    return found


def _read_nic(nic: Mapping[str, Any]) -> dict[str, Any]:
    table = {int(d): int(p) for d, p in nic["dscp_prio"]}
    return {"trust": nic["trust"][0] if nic["trust"] else "none",
            "dscp_to_tc": {d: table.get(d, 0) for d in range(64)},
            "pfc_priorities": frozenset(p for p in PRIORITIES if nic["pfc"][p]), "mtu": int(nic["mtu"]),
            "ecn_queues": {}, "dcqcn": frozenset(p for p in PRIORITIES if nic["rp_enable"][p] and nic["np_enable"][p])}


class LinuxConfig:
    suffix = ".sh"
    bgp_neighbor_bfd = False
    clab = ClabNode(kind="linux", image="ghcr.io/hellt/network-multitool", startup_suffix="")

    def __init__(self, templates: Path | None = None) -> None:
        self._templates = templates

    def environment(self) -> Environment:
        return platform_environment("linux", self._templates)

    def structured_config(self, device: DeviceIntent, fabric: FabricIntent | None = None) -> dict[str, Any]:
        return structured_config(device)

    def render(self, structured: Mapping[str, Any]) -> str:
        """The NIC script. Servers of one hardware model share their NIC settings, so a site's scripts are a few
        distinct texts: each is rendered once per template folder and reused for an equal structured config. Equal
        means equal JSON text, which keeps 1, true and "1" apart (the template prints only scalars); the dict
        structured_config shares between equal servers is the same object, found without its text."""
        folder = str(self._templates) if self._templates is not None else ""
        same = _RENDERED_SHARED.get((folder, id(structured)))
        if same is not None and same[0] is structured:
            return same[1]
        try:
            key = json.dumps(structured, check_circular=False)
        except (TypeError, ValueError, RecursionError):
            return self._render(structured)
        found = _RENDERED.get((folder, key))
        if found is None:
            found = self._render(structured)
            if len(_RENDERED) >= _RENDERED_MAX:
                _RENDERED.clear()
            _RENDERED[(folder, key)] = found
        if any(entry[1] is structured for entry in _STRUCTURED.values()):
            if len(_RENDERED_SHARED) >= _RENDERED_MAX:
                _RENDERED_SHARED.clear()
            _RENDERED_SHARED[(folder, id(structured))] = (structured, found)
        return found

    def _render(self, structured: Mapping[str, Any]) -> str:
        return self.environment().get_template(TEMPLATE).render(**structured)

    def qos_view(self, device: DeviceIntent, structured: Mapping[str, Any]) -> DeviceQos:
        """What the rendered NIC script makes each NIC do with RoCE: its trust, DSCP table (unlisted DSCPs on
        priority 0), PFC, MTU and DCQCN priorities; the TC -> queue maps are the intent's."""
        base = from_intent(device)
        ports = dict(base.ports)
        # NICs set alike share one view (an analysis judges each distinct view once): the same settings
        # (_nic_view's shared answer) over the same intent view's maps
        alike: dict[tuple[Any, ...], Any] = {}
        for nic in structured.get("nics", []):
            pq = ports.get(nic["name"])
            if pq is None:
                continue
            fields = _nic_view(nic)
            key = (id(fields), id(pq.tc_to_queue), id(pq.tc_to_pg), id(pq.pfc_priority_to_queue), pq.lossless_pgs,
                   pq.watchdog_priorities)
            found = alike.get(key)
            if found is None or found[0] is not fields:
                found = alike[key] = (fields, replace(pq, **fields))
            ports[nic["name"]] = found[1]
        return replace(base, source=f"{device.name} rendered NIC script", ports=ports)

    def preflight(self, fabric: FabricIntent) -> list[Finding]:
        return []

    def startup_config(self, device: DeviceIntent) -> str | None:
        """A server boots as its OS image does: its NICs come up with the vendor's defaults."""
        return None

    def clab_interface(self, interface: Interface, device: DeviceIntent) -> str:
        return interface.name
