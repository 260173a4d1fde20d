"""Community SONiC as the shared lab sees it: containerlab kinds, ports from CONFIG_DB, gNMI over the DBs."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nr_run.lab.twin.faults import KINDS
from nr_run.lab.twin.personality import API_CHANNEL, GNMI_CHANNEL, Leaf
from nr_run.lab.twin.topology import natural_key

if TYPE_CHECKING:
    from nr_run.lab.twin.fabric import Fabric

ENDPOINT = re.compile(r"eth([1-9]\d*)$")


class SonicPersonality:
    platform = "sonic"
    kinds = ("sonic-vs", "sonic-vm")
    service = "nr_run.lab.twin.sonic.service:SonicService"
    credentials = ("admin", "YourPaSsWoRd")
    channels = (API_CHANNEL, GNMI_CHANNEL)
    gnmi_models = (("sonic-db", "SONiC", ""),)
    fault_kinds = frozenset(KINDS)

    def port_name(self, endpoint: str, port_map: list[str]) -> str | None:
        """ethK is Ethernet{4(K-1)}: eth1 is Ethernet0 and each next interface the previous port + 4
        (containerlab docs/manual/kinds/sonic-vm.md and sonic-vs.md, "Interfaces mapping"), whatever the
        node's PORT table holds; a cable on a port the PORT table lacks lands on nothing configured."""
        m = ENDPOINT.match(endpoint)
        return f"Ethernet{4 * (int(m.group(1)) - 1)}" if m else None

    def port_map(self, startup: str | None) -> list[str]:
        """Front-panel ports in the order of the SKU's port_config.ini rows, from the startup config_db: by index,
        and the ports sharing a cage's index (two 400G halves of an 800G OSFP) by name number."""
        if not startup:
            return []
        try:
            ports = json.loads(startup).get("PORT") or {}
        except ValueError:
            return []

        def order(item: tuple[str, dict]) -> tuple[int, list[int | str]]:
            index = str(item[1].get("index", ""))
            return (int(index) if index.isdigit() else 1 << 30, natural_key(item[0]))

        return [name for name, _ in sorted(ports.items(), key=order)]

    def model(self, startup: str | None) -> str:
        if not startup:
            return ""
        try:
            return str(json.loads(startup)["DEVICE_METADATA"]["localhost"].get("hwsku", ""))
        except (ValueError, KeyError, TypeError, AttributeError):
            return ""

    def gnmi_values(self, fabric: Fabric, service: Any, node: str, origin: str, target: str,
                    want: list[tuple[str, dict[str, str]]], now: float) -> Mapping[Leaf, Any]:
        from nr_run.lab.twin.gnmi.paths import sonic_value

        names = [n for n, _ in want]
        value = sonic_value(fabric, node, service.devices[node].running, target or "CONFIG_DB", names, now)
        return {tuple((n, ()) for n in names): value}


PERSONALITY = SonicPersonality()
