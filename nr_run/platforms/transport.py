"""Shared helpers for platform transports: merging Nornir connection options without losing earlier ones."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nornir.core.inventory import ConnectionOptions, Host


def set_options(host: Host, connection: str, *, port: int | None = None, platform: str | None = None,
                extras: Mapping[str, Any] | None = None) -> None:
    """Merge `extras` (one level deep for dict values such as NAPALM's optional_args) into the host's options."""
    current = host.connection_options.get(connection)
    merged: dict[str, Any] = dict(current.extras or {}) if current and current.extras else {}
    for key, value in (extras or {}).items():
        merged[key] = {**merged.get(key, {}), **value} if isinstance(value, dict) else value
    host.connection_options[connection] = ConnectionOptions(
        hostname=current.hostname if current else None,
        port=port or (current.port if current else None),
        username=current.username if current else None,
        password=current.password if current else None,
        platform=platform or (current.platform if current else None),
        extras=merged,
    )


def secure_netmiko(host: Host, insecure: bool) -> None:
    """SSH host-key checking for netmiko sessions (known_hosts) unless insecure."""
    set_options(host, "netmiko", extras={"ssh_strict": not insecure, "system_host_keys": not insecure})


def netmiko_lab_overlay(host: Host, endpoint: Mapping[str, Any], device_type: str = "linux") -> None:
    """A twin endpoint for netmiko: its port, no host-key check (the twin's keys are per lab)."""
    set_options(host, "netmiko", port=int(endpoint["port"]), platform=device_type,
                extras={"ssh_strict": False, "system_host_keys": False})


def drop_connection(task: Any, name: str) -> None:
    """Forget a connection that failed mid-command so the next run opens a fresh one."""
    try:
        task.host.close_connection(name)
    except Exception:
        task.host.connections.pop(name, None)
