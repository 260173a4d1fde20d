"""Community SONiC over SSH (napalm_sonic: one paramiko connection, commands on exec channels): host keys checked
unless --insecure. The netmiko options are set too, for a user's own netmiko tasks on the same hosts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nr_run.platforms.telemetry import gnmi_lab_overlay, secure_gnmi
from nr_run.platforms.transport import netmiko_lab_overlay, secure_netmiko, set_options

if TYPE_CHECKING:
    from nornir.core.inventory import Host


class SonicTransport:
    env_name = "SONIC"
    lab_credentials = ("admin", "YourPaSsWoRd")    # sonic-vs image default
    deploy_connection = "napalm"

    def secure(self, host: Host, insecure: bool) -> None:
        set_options(host, "napalm", extras={"optional_args": {"ssh_strict": not insecure}})
        secure_netmiko(host, insecure)
        secure_gnmi(host, insecure)

    def lab_overlay(self, host: Host, endpoint: Mapping[str, Any]) -> None:
        port = int(endpoint["port"])
        set_options(host, "napalm", port=port, extras={"optional_args": {"port": port, "ssh_strict": False}})
        netmiko_lab_overlay(host, endpoint)
        gnmi_lab_overlay(host, endpoint)
