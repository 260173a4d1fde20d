"""Load a site into Nornir: SimpleInventory files, credentials, TLS/host-key policy, --lab overlay.

Credentials never come from the repo: NR_<PLATFORM>_USERNAME/PASSWORD, then NR_USERNAME/NR_PASSWORD,
then (for a lab site run with --lab only) the images' documented defaults.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nr_run.platforms import registry
from nr_run.platforms.registry import UnknownPlatform

if TYPE_CHECKING:      # Nornir loads with the first connection: `inventory validate` only needs site_dir
    from nornir.core import Nornir
    from nornir.core.inventory import Host

DEFAULT_INVENTORY_DIR = Path("inventory")

class CredentialsMissing(Exception):
    """No credentials for a platform and no lab default may be used."""


def site_dir(site: str, inventory_dir: Path | str | None = None) -> Path:
    return Path(inventory_dir or DEFAULT_INVENTORY_DIR) / site


def credentials(platform: str, env: Mapping[str, str], lab: bool) -> tuple[str, str]:
    """Resolve (username, password): NR_<PLATFORM>_*, then NR_*, then (lab only) the image's default."""
    transport = registry.get(platform).transport
    prefix = f"NR_{transport.env_name}_"
    user = env.get(prefix + "USERNAME") or env.get("NR_USERNAME")
    password = env.get(prefix + "PASSWORD") or env.get("NR_PASSWORD")
    if user and password:
        return user, password
    if lab:
        return transport.lab_credentials
    raise CredentialsMissing(
        f"no credentials for platform {platform!r}: set {prefix}USERNAME/{prefix}PASSWORD or NR_USERNAME/NR_PASSWORD"
    )


def _platform(host: Host) -> str:
    """The host's platform: required (set in hosts.yaml or a group), never guessed."""
    if not host.platform:
        raise UnknownPlatform(f"host {host.name} has no platform: set `platform:` on it or on one of its groups")
    return host.platform


def apply_lab_overlay(nr: Nornir, address_map: Mapping[str, Mapping[str, Any]]) -> None:
    """Point every host at its twin endpoint (a Nornir-level transform; product code stays unaware)."""
    for name, host in nr.inventory.hosts.items():
        endpoint = address_map.get(name)
        if endpoint is None:
            # not in the lab's topology: fail fast and say why, never reach the host's real address
            # (.invalid never resolves, RFC 2606)
            host.hostname = f"{name}.not-served-by-the-lab-twin.invalid"
            continue
        host.hostname = endpoint["host"]
        host.port = int(endpoint["port"])
        registry.get(_platform(host)).transport.lab_overlay(host, endpoint)


def init_nornir(site: str, inventory_dir: Path | str | None = None, *, workers: int = 20, lab: bool = False,
                insecure: bool = False, env: Mapping[str, str] | None = None,
                address_map: Mapping[str, Mapping[str, Any]] | None = None) -> Nornir:
    """Nornir for a site; with `lab`, credentials default to the images' and hosts point at the twin."""
    from nornir import InitNornir

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
        platform = _platform(host)
        host.username, host.password = credentials(platform, env, lab)
        registry.get(platform).transport.secure(host, insecure or lab)
    if lab and address_map:
        apply_lab_overlay(nr, address_map)
    return nr
