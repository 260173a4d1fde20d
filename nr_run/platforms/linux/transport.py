"""GPU servers over SSH: commands on exec channels of a plain SSH connection (nr_run_ssh), netmiko `linux` kept
configured for a user's own tasks; host keys checked unless --insecure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nr_run.platforms.transport import (
    netmiko_lab_overlay,
    secure_netmiko,
    secure_ssh_exec,
    ssh_exec_lab_overlay,
)

if TYPE_CHECKING:
    from nornir.core.inventory import Host


class LinuxTransport:
    env_name = "LINUX"
    lab_credentials = ("admin", "admin")           # the twin's and the clab linux nodes' login
    deploy_connection = "netmiko"

    def secure(self, host: Host, insecure: bool) -> None:
        secure_netmiko(host, insecure)
        secure_ssh_exec(host, insecure)

    def lab_overlay(self, host: Host, endpoint: Mapping[str, Any]) -> None:
        netmiko_lab_overlay(host, endpoint)
        ssh_exec_lab_overlay(host, endpoint)
