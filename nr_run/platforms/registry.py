"""Platform registry: plug-ins come from the `nr_run.platforms` entry-point group.

A distribution registers a platform with
    [project.entry-points."nr_run.platforms"]
    myos = "my_package.platform:platform"      # a nr_run.platforms.base.Platform instance
so a platform from another distribution works without editing this one. An unknown name is an error.

Loading a plug-in checks its parts against the protocols of nr_run.platforms.base (a part missing a member is
refused, naming it) and records which optional capabilities (base.CAPABILITIES) it offers; `require` fails
closed, in one line naming the platform and the capability, when a command needs one the platform lacks.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from importlib.metadata import entry_points

from nr_run.platforms.base import (
    CAPABILITIES,
    Capability,
    Collector,
    ConfigBuilder,
    DeployPolicy,
    Platform,
    Transport,
    members,
)

GROUP = "nr_run.platforms"


class UnknownPlatform(LookupError):
    """No installed plug-in provides this platform."""


class MissingCapability(RuntimeError):
    """A command needs an optional capability the platform does not offer (fail closed)."""


_PARTS: tuple[tuple[str, type, bool], ...] = (      # attribute, protocol, may be None
    ("transport", Transport, False), ("collector", Collector, False),
    ("config", ConfigBuilder, True), ("deploy", DeployPolicy, True))


def check_parts(ep_name: str, plugin: Platform) -> None:
    """Refuse a plug-in whose part lacks a member of its protocol (named), at load rather than mid-deploy."""
    for attr, protocol, optional in _PARTS:
        part = plugin.parts()[attr]
        if part is None and optional:
            continue
        missing = [m for m in members(protocol) if not hasattr(part, m)]
        if part is None or missing:
            raise TypeError(f"platform {ep_name}: its {attr} is not a {protocol.__name__} "
                            f"(missing: {', '.join(missing) or attr})")


@cache
def _all() -> dict[str, Platform]:
    found: dict[str, Platform] = {}
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        plugin = ep.load()
        if not isinstance(plugin, Platform):
            raise TypeError(f"entry point {ep.name} = {ep.value} is not a nr_run Platform")
        if plugin.name != ep.name:
            raise ValueError(f"entry point {ep.name} provides a platform named {plugin.name!r}")
        check_parts(ep.name, plugin)
        found[ep.name] = plugin
    return found


def names() -> list[str]:
    """Names of every installed platform, sorted."""
    return sorted(_all())


def get(name: str) -> Platform:
    """The platform plug-in called `name`."""
    try:
        return _all()[name]
    except KeyError:
        raise UnknownPlatform(f"no platform plug-in named {name!r} is installed (known: {', '.join(names())})") from None


def reload() -> None:
    """Forget the loaded plug-ins (a test that installs one re-reads the entry points)."""
    _all.cache_clear()


def offers(platform: Platform, capability: Capability) -> bool:
    """Whether the platform's part carries the optional capability."""
    part = platform.parts()[capability.part]
    return part is not None and isinstance(part, capability.protocol)


def capabilities(name: str) -> list[str]:
    """Names of the optional capabilities platform `name` offers (base.CAPABILITIES order)."""
    plugin = get(name)
    return [c.name for c in CAPABILITIES if offers(plugin, c)]


def missing(name: str, command: str) -> list[Capability]:
    """The capabilities `command` needs that platform `name` lacks. A part the platform has none of (a GPU
    host has no config builder) needs none of its capabilities: the command does not act on it there."""
    plugin = get(name)
    return [c for c in CAPABILITIES if command in c.needed_by and plugin.parts()[c.part] is not None
            and not offers(plugin, c)]


def refusal(name: str, capability: Capability, command: str) -> str:
    """The one line a command fails closed with."""
    return f"platform {name} lacks capability {capability.name} ({capability.part}), needed by {command}: " \
           f"{capability.without}"


def require(names: Iterable[str], command: str) -> None:
    """Fail closed (MissingCapability, one line) when `command` needs a capability one of the platforms lacks."""
    for name in sorted(set(names)):
        for capability in missing(name, command):
            raise MissingCapability(refusal(name, capability, command))
