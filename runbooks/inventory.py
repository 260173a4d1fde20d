"""Load a site into Nornir: SimpleInventory files, credentials, TLS/host-key policy, --lab overlay.

Credentials never come from the repo: NR_<PLATFORM>_USERNAME/PASSWORD, then NR_USERNAME/NR_PASSWORD,
then (for a lab site run with --lab only) the images' documented defaults.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nornir import InitNornir
from nornir.core import Nornir
from nornir.core.inventory import ConnectionOptions, Host

DEFAULT_INVENTORY_DIR = Path("inventory")

# Lab images' defaults (cEOS admin/admin, SONiC admin/YourPaSsWoRd); used only with --lab.
LAB_CREDENTIALS: dict[str, tuple[str, str]] = {
    "eos": ("admin", "admin"),
    "sonic": ("admin", "YourPaSsWoRd"),
    "linux": ("admin", "admin"),
}


class CredentialsMissing(Exception):
    """No credentials for a platform and no lab default may be used."""


def site_dir(site: str, inventory_dir: Path | str | None = None) -> Path:
    return Path(inventory_dir or DEFAULT_INVENTORY_DIR) / site


def credentials(platform: str, env: Mapping[str, str], lab: bool) -> tuple[str, str]:
    """Resolve (username, password) for a platform."""
    prefix = f"NR_{platform.upper()}_"
    user = env.get(prefix + "USERNAME") or env.get("NR_USERNAME")
    password = env.get(prefix + "PASSWORD") or env.get("NR_PASSWORD")
    if user and password:
        return user, password
    if lab and platform in LAB_CREDENTIALS:
        return LAB_CREDENTIALS[platform]
    raise CredentialsMissing(
        f"no credentials for platform {platform!r}: set {prefix}USERNAME/{prefix}PASSWORD or NR_USERNAME/NR_PASSWORD"
    )


def _set_extras(host: Host, name: str, platform: str | None, port: int | None, hostname: str | None,
                extras: dict[str, Any]) -> None:
    current = host.connection_options.get(name)
    merged = dict(current.extras or {}) if current and current.extras else {}
    for key, value in extras.items():
        if isinstance(value, dict):
            merged[key] = {**merged.get(key, {}), **value}
        else:
            merged[key] = value
    host.connection_options[name] = ConnectionOptions(
        hostname=hostname or (current.hostname if current else None),
        port=port or (current.port if current else None),
        username=current.username if current else None,
        password=current.password if current else None,
        platform=platform or (current.platform if current else None),
        extras=merged,
    )


def secure_transport(host: Host, insecure: bool) -> None:
    """TLS verification and SSH host-key checks on for real devices unless --insecure."""
    napalm_opts = (host.get_connection_parameters("napalm").extras or {}).get("optional_args", {})
    if host.platform == "eos":
        _set_extras(host, "napalm", None, None, None,
                    {"optional_args": {**napalm_opts, "enforce_verification": not insecure}})
    elif host.platform == "sonic":
        _set_extras(host, "napalm", None, None, None, {"optional_args": {**napalm_opts, "ssh_strict": not insecure}})
    _set_extras(host, "netmiko", None, None, None, {"ssh_strict": not insecure, "system_host_keys": not insecure})


def apply_lab_overlay(nr: Nornir, address_map: Mapping[str, Mapping[str, Any]]) -> None:
    """Point every host at its twin endpoint (a Nornir-level transform; product code stays unaware)."""
    for name, host in nr.inventory.hosts.items():
        endpoint = address_map.get(name)
        if endpoint is None:
            continue
        host.hostname = endpoint["host"]
        port = int(endpoint["port"])
        host.port = port
        if host.platform == "eos":
            _set_extras(host, "napalm", None, port, None, {"optional_args": {
                "transport": endpoint.get("protocol", "https"), "port": port, "enforce_verification": False}})
        elif host.platform == "sonic":
            _set_extras(host, "napalm", None, port, None, {"optional_args": {"port": port, "ssh_strict": False}})
        _set_extras(host, "netmiko", "linux", port, None, {"ssh_strict": False, "system_host_keys": False})


def init_nornir(site: str, inventory_dir: Path | str | None = None, *, workers: int = 20, lab: bool = False,
                insecure: bool = False, env: Mapping[str, str] | None = None,
                address_map: Mapping[str, Mapping[str, Any]] | None = None) -> Nornir:
    """Nornir for a site; with `lab`, credentials default to the images' and hosts point at the twin."""
    directory = site_dir(site, inventory_dir)
    nr = InitNornir(
        runner={"plugin": "threaded", "options": {"num_workers": workers}},
        inventory={"plugin": "SimpleInventory", "options": {
            "host_file": str(directory / "hosts.yaml"),
            "group_file": str(directory / "groups.yaml"),
            "defaults_file": str(directory / "defaults.yaml"),
        }},
        logging={"enabled": False},
    )
    env = os.environ if env is None else env
    for host in nr.inventory.hosts.values():
        platform = host.platform or "linux"
        host.username, host.password = credentials(platform, env, lab)
        secure_transport(host, insecure or lab)
    if lab and address_map:
        apply_lab_overlay(nr, address_map)
    return nr
