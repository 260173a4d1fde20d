"""Personalities: everything the shared lab (topology reader, ports, gNMI, faults) needs to know about a platform.

The shared code never names a platform: it asks the node's personality. One personality per platform lives in
that platform's package (eos/personality.py, sonic/personality.py, linux/personality.py) and is registered here
by dotted path; a personality (or a service) that fails to import is an error of the lab, never a silent skip.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from nr_run.lab.twin.fabric import Fabric

Leaf = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]

# listener channels: a node listens on base + channel * CHANNEL_STRIDE + index (platforms.LabContext.port)
API_CHANNEL = 0             # eAPI https / SSH
HTTP_CHANNEL = 1            # EOS plain-http eAPI
GNMI_CHANNEL = 2            # gNMI over TLS


class Personality(Protocol):
    """How one platform looks to the shared lab."""

    platform: str                       # the Node.platform value, e.g. "eos"
    kinds: tuple[str, ...]              # containerlab kinds served with this personality
    service: str                        # "module:Class" of its PlatformService
    credentials: tuple[str, str]        # the image's default (user, password)
    channels: tuple[int, ...]           # listener channels of each node (0: the CLI/API; see platforms.py)
    gnmi_models: tuple[tuple[str, str, str], ...]   # (name, organization, version); empty: no gNMI
    fault_kinds: frozenset[str]         # the fault kinds that apply to its nodes

    def port_name(self, endpoint: str, port_map: list[str]) -> str | None:
        """The device's interface for a containerlab endpoint name (None: not a data interface)."""

    def port_map(self, startup: str | None) -> list[str]:
        """Front-panel ports in the order containerlab numbers ethN, from the startup config (or [])."""

    def model(self, startup: str | None) -> str:
        """The hardware model the device reports."""

    def gnmi_values(self, fabric: Fabric, service: Any, node: str, origin: str, target: str,
                    want: list[tuple[str, dict[str, str]]], now: float) -> Mapping[Leaf, Any]:
        """gNMI leaves at a requested path (raises gnmi.paths.PathError where the device serves nothing)."""


PERSONALITIES: dict[str, str] = {
    "eos": "nr_run.lab.twin.eos.personality:PERSONALITY",
    "sonic": "nr_run.lab.twin.sonic.personality:PERSONALITY",
    "linux": "nr_run.lab.twin.linux.personality:PERSONALITY",
}
_LOADED: dict[str, Personality] = {}


class PersonalityError(ImportError):
    """A registered personality or service cannot be loaded."""


def load_object(entry: str) -> Any:
    """The object a "module:attribute" path names; an import failure is an error naming the entry."""
    module, _, attr = entry.partition(":")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise PersonalityError(f"cannot load {entry}: {exc}") from exc


def personality(platform: str) -> Personality:
    if platform not in _LOADED:
        if platform not in PERSONALITIES:
            raise PersonalityError(f"no personality for platform {platform!r}")
        _LOADED[platform] = load_object(PERSONALITIES[platform])
    return _LOADED[platform]


def all_personalities() -> list[Personality]:
    return [personality(p) for p in sorted(PERSONALITIES)]


def kind_platforms() -> dict[str, str]:
    """containerlab kind -> platform, over every registered personality."""
    return {kind: p.platform for p in all_personalities() for kind in p.kinds}
