"""Render DeviceIntents into candidate configs through each device's platform plug-in.

A platform's config builder turns the intent into a structured config and formats it (EOS CLI, SONiC
config_db JSON, ...); nothing here knows a platform. Devices whose platform has no config builder (GPU
servers) are not rendered: ``render_device`` refuses them and ``render_site`` skips them.

Rendering is pure: ``render_device`` and the Nornir task ``render_config`` give the same bytes.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms import built, registry
from nr_run.platforms.base import ConfigBuilder
from nr_run.platforms.guard import check_structured, escaped_json_safe

if TYPE_CHECKING:       # Nornir is imported by the task only: `nr-run render` runs no Nornir task
    from nornir.core.task import Result, Task

# a device name usable as a file name on its own: no separators, no leading dot, no "..", printable ASCII
SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
# names Windows and some tools treat as devices; refused even where the OS would allow them
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


def builder(device: DeviceIntent) -> ConfigBuilder | None:
    """The config builder of the device's platform (None: nr-run does not configure it)."""
    return registry.get(device.platform).config


def _builder_or_raise(device: DeviceIntent) -> ConfigBuilder:
    found = builder(device)
    if found is None:
        raise ValueError(f"{device.name}: platform {device.platform!r} is not rendered (it has no config builder)")
    return found


def render_device(intent: DeviceIntent, fabric: FabricIntent | None = None) -> str:
    """Candidate config text of one device; ValueError for a device whose platform is not rendered,
    InventoryError when a structured-config value could steer the output (nr_run.platforms.guard)."""
    config = _builder_or_raise(intent)
    structured = built.take(config, intent, fabric)          # the preflight's build when render shares it
    if getattr(config, "escaped_json_output", False):
        # the text is JSON whose every string the encoder escaped: an escape-free text proves them all at once,
        # else the structured config is walked (to pass a value that is escaped but allowed, or to name it)
        text = config.render(structured)
        if not escaped_json_safe(text):
            check_structured(structured, intent.name, fabric.fabric_file if fabric else "")
        return text
    check_structured(structured, intent.name, fabric.fabric_file if fabric else "")
    return config.render(structured)


def render_config(task: Task, intent: DeviceIntent, fabric: FabricIntent | None = None) -> Result:
    """Nornir task: the candidate config of ``intent`` as the result text.

    Usable in a user's script: ``nr.run(task=render_config, intent=fabric.devices[name])`` per host.
    """
    from nornir.core.task import Result

    return Result(host=task.host, result=render_device(intent, fabric))


def select_switches(fabric: FabricIntent, hosts: list[str] | None = None,
                    role: str | None = None) -> list[DeviceIntent]:
    """Rendered devices of a site, sorted by name, filtered by host names and role."""
    if hosts:
        unknown = sorted(set(hosts) - set(fabric.devices))
        if unknown:
            raise ValueError(f"unknown hosts: {', '.join(unknown)}")
    return [d for name, d in sorted(fabric.devices.items())
            if builder(d) is not None
            and (not hosts or name in hosts)
            and (role is None or d.role == role)]


def render_site(fabric: FabricIntent, hosts: list[str] | None = None,
                role: str | None = None) -> dict[str, str]:
    """Configs of the site's rendered devices (servers are skipped), keyed and sorted by device name."""
    return {d.name: render_device(d, fabric) for d in select_switches(fabric, hosts, role)}


def safe_filename(name: str, suffix: str) -> str:
    """``name + suffix`` when the device name is a plain file name (no folder, no leading dot), else ValueError."""
    if not SAFE_NAME.fullmatch(name) or ".." in name or name.split(".")[0].lower() in _RESERVED:
        raise ValueError(f"device name {name!r} is not a safe file name")
    if not SAFE_NAME.fullmatch(name + suffix):
        raise ValueError(f"file suffix {suffix!r} is not safe")
    return name + suffix


def config_filename(intent: DeviceIntent) -> str:
    """``<device><suffix>`` with the platform's suffix (``.cfg``, ``.json``); refuses an unsafe device name."""
    return safe_filename(intent.name, _builder_or_raise(intent).suffix)


def write_configs(configs: dict[str, str], out_dir: Path, fabric: FabricIntent) -> dict[str, Path]:
    """Write each config to ``out_dir/<device><suffix>``; the paths, keyed by device name.

    A file never lands outside ``out_dir``: the name is checked by ``config_filename`` and the resolved
    path must sit directly in the folder.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    folder = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    paths: dict[str, Path] = {}
    try:
        for name in sorted(configs):
            filename = config_filename(fabric.devices[name])      # a plain name: no separator, no ".."
            path = out / filename
            try:
                # relative to the folder's descriptor, never through a symlink planted in it (O_NOFOLLOW)
                fd = os.open(filename, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o666, dir_fd=folder)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise ValueError(f"{name}: config file {path} would leave {out}") from None
                raise
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(configs[name])
            paths[name] = path
    finally:
        os.close(folder)
    return paths
