"""Platform registry: plug-ins come from the `nr_run.platforms` entry-point group.

A distribution registers a platform with
    [project.entry-points."nr_run.platforms"]
    myos = "my_package.platform:platform"      # a nr_run.platforms.base.Platform instance
so a platform from another distribution works without editing this one. An unknown name is an error.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points

from nr_run.platforms.base import Platform

GROUP = "nr_run.platforms"


class UnknownPlatform(LookupError):
    """No installed plug-in provides this platform."""


@cache
def _all() -> dict[str, Platform]:
    found: dict[str, Platform] = {}
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        plugin = ep.load()
        if not isinstance(plugin, Platform):
            raise TypeError(f"entry point {ep.name} = {ep.value} is not a nr_run Platform")
        if plugin.name != ep.name:
            raise ValueError(f"entry point {ep.name} provides a platform named {plugin.name!r}")
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
