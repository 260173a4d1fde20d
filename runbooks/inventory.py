"""Load a site into Nornir: SimpleInventory files, credentials, TLS/host-key policy, --lab overlay.

Credentials never come from the repo: NR_<PLATFORM>_USERNAME/PASSWORD, then NR_USERNAME/NR_PASSWORD,
then (for a lab site run with --lab only) the images' documented defaults.

Credentials, TLS policy and the lab overlay are one Nornir transform function, `nr_run` (entry point
`nornir.plugins.transform_function`), so a user's own script gets what nr-run's commands get:

    nr = InitNornir(inventory={"plugin": "SimpleInventory", "options": {...},
                               "transform_function": "nr_run",
                               "transform_function_options": {"lab": True, "address_map": addresses}})
    nr.run(task=collect_state, fabric=load_site("inventory/dc1").intent, sections_by_host=...)

(`addresses`: the twin's endpoints, `nr_run.lab.twin.status.lab_status(state_dir)["addresses"]`.)
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


def lab_overlay(host: Host, address_map: Mapping[str, Mapping[str, Any]]) -> None:
    """Point the host at its twin endpoint. A host the lab does not serve fails fast and says why; it never
    reaches its real address (.invalid never resolves, RFC 2606)."""
    endpoint = address_map.get(host.name)
    if endpoint is None:
        host.hostname = f"{host.name}.not-served-by-the-lab-twin.invalid"
        return
    host.hostname = endpoint["host"]
    host.port = int(endpoint["port"])
    registry.get(_platform(host)).transport.lab_overlay(host, endpoint)


def apply_lab_overlay(nr: Nornir, address_map: Mapping[str, Mapping[str, Any]]) -> None:
    """Point every host of `nr` at its twin endpoint."""
    for host in nr.inventory.hosts.values():
        lab_overlay(host, address_map)


TRANSFORM = "nr_run"


def transform(host: Host, **options: Any) -> None:
    """The Nornir transform function `nr_run` (its options: those of `prepare_host`; an unknown one is a
    TypeError naming it)."""
    prepare_host(host, **options)


def prepare_host(host: Host, *, lab: bool = False, insecure: bool = False,
                 address_map: Mapping[str, Mapping[str, Any]] | None = None,
                 env: Mapping[str, str] | None = None) -> None:
    """The host's credentials (from `env`, default the process environment; the lab image's default only with
    `lab`), its platform's TLS / host-key policy (verification on unless `insecure` or `lab`) and, with `lab` and
    an `address_map`, its twin endpoint. A host without a platform, or without credentials, raises
    (UnknownPlatform, CredentialsMissing)."""
    platform = _platform(host)
    host.username, host.password = credentials(platform, os.environ if env is None else env, lab)
    registry.get(platform).transport.secure(host, insecure or lab)
    if lab and address_map:
        lab_overlay(host, address_map)


def register_transform() -> None:
    """Make `nr_run` known to Nornir in this process (the entry point does it for an installed copy)."""
    from nornir.core.plugins.inventory import TransformFunctionRegister

    if TransformFunctionRegister.available.get(TRANSFORM) is None:
        TransformFunctionRegister.register(TRANSFORM, transform)


def init_nornir(site: str, inventory_dir: Path | str | None = None, *, workers: int = 20, lab: bool = False,
                insecure: bool = False, env: Mapping[str, str] | None = None,
                address_map: Mapping[str, Mapping[str, Any]] | None = None) -> Nornir:
    """Nornir for a site, through the `nr_run` transform; with `lab`, credentials default to the images' and
    hosts point at the twin."""
    from nornir import InitNornir

    directory = site_dir(site, inventory_dir)
    register_transform()
    options: dict[str, Any] = {"lab": lab, "insecure": insecure}
    if address_map:
        options["address_map"] = {k: dict(v) for k, v in address_map.items()}
    if env is not None:
        options["env"] = dict(env)
    return InitNornir(
        runner={"plugin": "threaded", "options": {"num_workers": workers}},
        inventory={"plugin": "SimpleInventory", "options": {
            "host_file": str(directory / "hosts.yaml"),
            "group_file": str(directory / "groups.yaml"),
            "defaults_file": str(directory / "defaults.yaml"),
        }, "transform_function": TRANSFORM, "transform_function_options": options},
        logging={"enabled": False},
    )
