"""GPU servers over SSH: commands on exec channels of a plain SSH connection (nr_run_ssh), the NIC deploy driver on
one of its own (nr_run_nic), netmiko `linux` kept configured for a user's own tasks; host keys checked unless
--insecure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nr_run.platforms.transport import (
    netmiko_lab_overlay,
    secure_netmiko,
    secure_ssh_exec,
    set_options,
    ssh_exec_lab_overlay,
)

if TYPE_CHECKING:
    from nornir.core.inventory import Host

NIC_CONNECTION = "nr_run_nic"


def register_nic_connection() -> None:
    """Make the NIC deploy driver known to Nornir (also an entry point, for a user's own InitNornir); called
    when a host is set up to use it, so that loading the plug-in imports no Nornir."""
    from nornir.core.plugins.connections import ConnectionPluginRegister

    from nr_run.platforms.linux.driver import NicConnection

    if ConnectionPluginRegister.available.get(NIC_CONNECTION) is None:
        ConnectionPluginRegister.register(NIC_CONNECTION, NicConnection)


class LinuxTransport:
    env_name = "LINUX"
    lab_credentials = ("admin", "admin")           # the twin's and the clab linux nodes' login
    deploy_connection = NIC_CONNECTION

    def secure(self, host: Host, insecure: bool) -> None:
        secure_netmiko(host, insecure)
        secure_ssh_exec(host, insecure)
        register_nic_connection()
        set_options(host, NIC_CONNECTION, extras={"ssh_strict": not insecure})

    def lab_overlay(self, host: Host, endpoint: Mapping[str, Any]) -> None:
        netmiko_lab_overlay(host, endpoint)
        ssh_exec_lab_overlay(host, endpoint)
        register_nic_connection()
        set_options(host, NIC_CONNECTION, port=int(endpoint["port"]), extras={"ssh_strict": False})
