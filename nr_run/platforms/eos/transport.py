"""EOS over eAPI (NAPALM eos driver, pyeapi): HTTPS with certificate verification unless --insecure, one kept-alive
connection per device (nr_run.platforms.eos.eapi)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nr_run.platforms.telemetry import gnmi_lab_overlay, secure_gnmi
from nr_run.platforms.transport import netmiko_lab_overlay, secure_netmiko, set_options

if TYPE_CHECKING:
    from nornir.core.inventory import Host


class EosTransport:
    env_name = "EOS"
    lab_credentials = ("admin", "admin")           # cEOS image default
    deploy_connection = "napalm"

    def secure(self, host: Host, insecure: bool) -> None:
        set_options(host, "napalm", extras={"optional_args": {"enforce_verification": not insecure,
                                                              "transport": _eapi_transport("https")}})
        secure_netmiko(host, insecure)
        secure_gnmi(host, insecure)

    def lab_overlay(self, host: Host, endpoint: Mapping[str, Any]) -> None:
        port = int(endpoint["port"])
        set_options(host, "napalm", port=port, extras={"optional_args": {
            "transport": _eapi_transport(endpoint.get("protocol", "https")), "port": port,
            "enforce_verification": False}})
        netmiko_lab_overlay(host, endpoint)
        gnmi_lab_overlay(host, endpoint)


def _eapi_transport(protocol: str) -> Any:
    """NAPALM's eos `transport` for a protocol: over HTTPS the kept-alive connection class (imported with the
    connection options, not with the plug-in: it loads pyeapi), any other protocol as NAPALM names it."""
    if protocol != "https":
        return protocol
    from nr_run.platforms.eos.eapi import PersistentHttpsEapiConnection

    return PersistentHttpsEapiConnection
