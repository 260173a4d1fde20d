"""EOS config builder: DeviceIntent -> structured config -> CLI text through templates/eos/ (Jinja2)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jinja2 import Environment

from nr_run.intent.errors import Finding
from nr_run.intent.models import DeviceIntent, FabricIntent, Interface
from nr_run.platforms.base import ClabNode
from nr_run.platforms.eos.qosview import qos_view
from nr_run.platforms.eos.structured import eos_speed, management, structured_config
from nr_run.platforms.jinja_env import platform_environment
from nr_run.platforms.qos import DeviceQos

MAIN_TEMPLATE = "main.j2"

# The ECMP hash of EOS on Strata switches (Trident/Tomahawk: 7050X, 7060X) takes, for IPv4, source and
# destination IP, source and destination L4 port and the ingress interface by default (Arista TOI "LAG/ECMP
# hashing on TTL/Hop Limit", EOS-4.15.2F: the hash "may include ... source/destination port(s) for UDP/TCP
# traffic"; TOI "Selectable hashing fields", EOS-4.20.1F: `ip load-sharing <chip> fields ip ...` selects them).
# The default already carries RoCE's per-QP entropy (the UDP source port), and EOS hides a default line from
# its running-config, so rendering it would show as a pending change on every dry run: nothing is rendered.
EOS_DEFAULT_ECMP_HASH = frozenset({"src-ip", "dst-ip", "l4-src-port", "l4-dst-port", "ingress-port"})


# EOS takes the PFC watchdog timeout and recovery-time in seconds with at most two decimals (a 10 ms grid) and the
# polling-interval with at most three (aristanetworks/avd eos_cli_config_gen schema, priority_flow_control.watchdog:
# patterns ^\\d+(\\.\\d{1,2})?$ and ^\\d+(\\.\\d{1,3})?$); a value off the grid is refused, not rounded, so what
# the switch runs is what the inventory says.
WATCHDOG_GRID_MS = {"detection_ms": 10, "restoration_ms": 10, "poll_ms": 1}


def _watchdog_grid(dev: DeviceIntent, file: str) -> list[Finding]:
    wd = dev.roce.watchdog
    if not wd.enabled:
        return []
    out = []
    for key, grid in WATCHDOG_GRID_MS.items():
        value = getattr(wd, key)
        if value % grid:
            lower, upper = value - value % grid, value - value % grid + grid
            out.append(Finding("error", "eos-watchdog-grid", file, dev.name,
                               f"roce_profiles.{dev.roce.profile}.pfc_watchdog.{key}",
                               f"EOS takes this watchdog timer in steps of {grid} ms: {value} ms is not one "
                               f"(use {lower} or {upper})"))
    return out


class EosConfig:
    suffix = ".cfg"
    bgp_neighbor_bfd = True
    # containerlab kind arista_ceos (schemas/clab.schema.json names it; "ceos" is an alias its code accepts)
    clab = ClabNode(kind="arista_ceos", image="ceos:4.32.0F", startup_suffix=".cfg")

    def __init__(self, templates: Path | None = None) -> None:
        self._templates = templates            # another template folder (tests); default: templates/eos

    def environment(self) -> Environment:
        return platform_environment("eos", self._templates)

    def structured_config(self, device: DeviceIntent, fabric: FabricIntent | None = None) -> dict[str, Any]:
        return dict(structured_config(device, local_bfd=self.bgp_neighbor_bfd))

    def qos_view(self, device: DeviceIntent, structured: Mapping[str, Any]) -> DeviceQos:
        """What the rendered config makes each port do with RoCE traffic (whole-fabric analyses)."""
        return qos_view(device, structured)

    def ecmp_hash_fields(self, device: DeviceIntent) -> frozenset[str]:
        """The ECMP hash fields the switch runs with (the rendered config keeps EOS' default)."""
        return EOS_DEFAULT_ECMP_HASH

    def render(self, structured: Mapping[str, Any]) -> str:
        return self.environment().get_template(MAIN_TEMPLATE).render(**structured)

    def preflight(self, fabric: FabricIntent) -> list[Finding]:
        """Links an EOS port cannot run: above its native speed, or not a whole share of its lanes."""
        out: list[Finding] = []
        for dev in sorted((d for d in fabric.devices.values() if d.platform == "eos"), key=lambda d: d.name):
            for itf in dev.interfaces:
                if dev.hardware.speed_mbps and itf.speed_mbps > dev.hardware.speed_mbps:
                    continue    # faster than the hardware's speed: the site's link-speed rule names the cabling key
                try:
                    eos_speed(itf.speed_mbps, dev.hardware)
                except ValueError as exc:
                    out.append(Finding("error", "eos-hardware", fabric.fabric_file, dev.name,
                                       f"hardware.{dev.hardware.name} port {itf.name}", str(exc)))
            out += _watchdog_grid(dev, fabric.fabric_file)
        return out

    def startup_config(self, device: DeviceIntent) -> str:
        """Minimal cEOS config: routing model, management VRF and address, admin user, SSH and eAPI over HTTPS.

        The multi-agent routing model must be in the startup config (changing it needs a reload). Management
        starts in its VRF (with its default route there), so the first deploy does not move the interface the
        runbook is connected through; the fabric's default VRF never sees the management subnet.
        """
        mgmt = management(device)          # the same VRF and default route the deployed config has
        vrf = mgmt["vrfs"][0]["name"] if mgmt["vrfs"] else None
        lines = ["service routing protocols model multi-agent", "!",
                 f"hostname {device.name}", "username admin privilege 15 role network-admin secret admin", "!"]
        if vrf:
            lines += [f"vrf instance {vrf}", "!"]
        lines += ["interface Management0", *([f"   vrf {vrf}"] if vrf else []), f"   ip address {device.mgmt_prefix}",
                  "!"]
        if vrf:
            lines += [f"no ip routing vrf {vrf}", "!"]
            lines += [line for r in mgmt["static_routes"]
                      for line in (f"ip route vrf {r['vrf']} {r['prefix']} {r['next_hop']}", "!")]
        lines += ["management api http-commands", "   protocol https", "   no shutdown"]
        lines += ["   !", f"   vrf {vrf}", "      no shutdown"] if vrf else []
        lines += ["!", "management ssh"]
        lines += [f"   vrf {vrf}", "      no shutdown"] if vrf else ["   no shutdown"]
        return "\n".join([*lines, "!", "end", ""])

    def port_names(self, device: DeviceIntent) -> dict[str, str]:
        """EOS' short interface names (Et1, Et1/1) -> the intent's Ethernet names."""
        return {"Et" + i.name.removeprefix("Ethernet"): i.name for i in device.interfaces
                if i.name.startswith("Ethernet")}

    def clab_interface(self, interface: Interface, device: DeviceIntent) -> str:
        """cEOS maps the container's ethN to EthernetN and ethN_M to EthernetN/M (containerlab's ceos kind)."""
        return "eth" + re.sub(r"[^\d/]", "", interface.name).replace("/", "_")
