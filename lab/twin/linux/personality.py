"""Linux GPU servers as the shared lab sees them: interfaces named as written, no gNMI."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nr_run.lab.twin.faults import KINDS
from nr_run.lab.twin.personality import API_CHANNEL, Leaf

if TYPE_CHECKING:
    from nr_run.lab.twin.fabric import Fabric


class LinuxPersonality:
    platform = "linux"
    kinds = ("linux",)
    service = "nr_run.lab.twin.linux.service:LinuxService"
    credentials = ("admin", "admin")
    channels = (API_CHANNEL,)
    gnmi_models: tuple[tuple[str, str, str], ...] = ()
    fault_kinds = frozenset(KINDS) - {"appl_lag", "commit_rejected"}   # a server has no config commits

    def port_name(self, endpoint: str, port_map: list[str]) -> str | None:
        return endpoint

    def port_map(self, startup: str | None) -> list[str]:
        return []

    def model(self, startup: str | None) -> str:
        return ""

    def gnmi_values(self, fabric: Fabric, service: Any, node: str, origin: str, target: str,
                    want: list[tuple[str, dict[str, str]]], now: float) -> Mapping[Leaf, Any]:
        from nr_run.lab.twin.gnmi.paths import PathError

        raise PathError(f"{node} serves no gNMI")


PERSONALITY = LinuxPersonality()
