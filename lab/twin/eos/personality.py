"""Arista cEOS as the shared lab sees it: containerlab kinds and endpoint names, ports, gNMI models."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nr_run.lab.twin.faults import KINDS
from nr_run.lab.twin.personality import API_CHANNEL, GNMI_CHANNEL, HTTP_CHANNEL, Leaf

if TYPE_CHECKING:
    from nr_run.lab.twin.fabric import Fabric

ENDPOINT = re.compile(r"eth(\d+)((?:_\d+)*)$")     # containerlab: ethN is EthernetN, ethN_M is EthernetN/M
ALIAS = re.compile(r"Ethernet\d+(?:/\d+)*$")


class EosPersonality:
    platform = "eos"
    kinds = ("ceos", "arista_ceos")
    service = "nr_run.lab.twin.eos.service:EosService"
    credentials = ("admin", "admin")
    channels = (API_CHANNEL, HTTP_CHANNEL, GNMI_CHANNEL)
    gnmi_models = (("openconfig-interfaces", "OpenConfig working group", "3.0.0"),
                   ("openconfig-if-ethernet", "OpenConfig working group", "2.13.0"),
                   ("openconfig-qos", "OpenConfig working group", "0.7.0"),
                   ("arista-eos-native", "Arista Networks, Inc.", ""))
    fault_kinds = frozenset(KINDS) - {"appl_lag"}          # appl_lag: SONiC's swss daemons lagging CONFIG_DB

    def port_name(self, endpoint: str, port_map: list[str]) -> str | None:
        if ALIAS.match(endpoint):
            return endpoint
        m = ENDPOINT.match(endpoint)
        if not m or int(m.group(1)) == 0:
            return None
        return "Ethernet" + m.group(1) + m.group(2).replace("_", "/")

    def port_map(self, startup: str | None) -> list[str]:
        return []

    def model(self, startup: str | None) -> str:
        return "cEOSLab"

    def gnmi_values(self, fabric: Fabric, service: Any, node: str, origin: str, target: str,
                    want: list[tuple[str, dict[str, str]]], now: float) -> Mapping[Leaf, Any]:
        from nr_run.lab.twin.gnmi.paths import PathError, eos_leaves, matches

        if target:
            raise PathError(f"{node} serves no target {target!r}")
        if origin not in ("", "openconfig", "eos_native"):
            raise PathError(f"{node} serves no origin {origin!r}")
        leaves = eos_leaves(fabric, node, "eos_native" if origin == "eos_native" else "openconfig", now)
        found = {leaf: v for leaf, v in leaves.items() if matches(want, leaf)}
        if not found:
            raise PathError(f"{node} has no data at {origin or 'openconfig'}:/" + "/".join(n for n, _ in want))
        return found


PERSONALITY = EosPersonality()
