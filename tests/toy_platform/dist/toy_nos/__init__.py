"""A made-up network OS plugged into nr-run from outside: it renders, deploys and is checked
without any nr-run core module knowing its name.

Config: "set" lines. Device: an in-memory fake reached through the Nornir connection plugin
`toynos_fake` (NAPALM-shaped methods), so deploy's load/diff/commit/confirm/rollback run unchanged.
`platform` offers the capabilities nr-run's commands need (QosView, MarksDevices); `bare` is the same OS
without them, which those commands must refuse.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from typing import Any

from nornir.core.inventory import Host
from nornir.core.plugins.connections import ConnectionPluginRegister

from nr_run.intent.errors import Finding
from nr_run.intent.models import DeviceIntent, FabricIntent, Interface
from nr_run.platforms.base import ClabNode, DeployCapabilities, Hold, Platform
from nr_run.platforms.policy import RegexPolicy
from nr_run.platforms.qos import DeviceQos, from_intent
from nr_run.platforms.state import DeviceState, InterfaceState

CONNECTION = "toynos_fake"
RUNNING: dict[str, str] = {}        # management address -> running config of the fake device
MARKERS: dict[str, str] = {}        # management address -> the deploy marker on the fake device


class ToyConfig:
    suffix = ".toy"
    bgp_neighbor_bfd = False
    clab = ClabNode(kind="linux", image="toy-nos:0.1", startup_suffix=".toy")

    def structured_config(self, device: DeviceIntent, fabric: FabricIntent | None = None) -> dict[str, Any]:
        return {"hostname": device.name,
                "interfaces": [{"name": i.name, "address": i.address, "mtu": i.mtu, "speed": i.speed_mbps}
                               for i in device.interfaces]}

    def render(self, structured: Mapping[str, Any]) -> str:
        lines = [f"set system hostname {structured['hostname']}"]
        for itf in structured["interfaces"]:
            lines.append(f"set interface {itf['name']} address {itf['address']} mtu {itf['mtu']} speed {itf['speed']}")
        return "\n".join(lines) + "\n"

    def preflight(self, fabric: FabricIntent) -> list[Finding]:
        return []

    def startup_config(self, device: DeviceIntent) -> str | None:
        return None

    def clab_interface(self, interface: Interface, device: DeviceIntent) -> str:
        return interface.name


class ToyConfigBare(ToyConfig):
    """The builder without a QosView."""


class ToyConfigQos(ToyConfig):
    def qos_view(self, device: DeviceIntent, structured: Mapping[str, Any]) -> DeviceQos:
        """The fake device forwards RoCE as the intent says (it models no QoS of its own)."""
        return from_intent(device)


class ToyMarker:
    """The deploy marker as a name held by the fake device."""

    def holds(self, driver: Any) -> list[Hold]:
        name = MARKERS.get(driver.name)
        return [] if name is None or name == driver.marker else [Hold(name, True, None)]

    def place(self, driver: Any, name: str) -> None:
        MARKERS[driver.name], driver.marker = name, name

    def remove(self, driver: Any, name: str) -> None:
        if MARKERS.get(driver.name) == name:
            del MARKERS[driver.name]


class ToyPolicy(RegexPolicy):
    marker = ToyMarker()


class ToyTransport:
    env_name = "TOYNOS"
    lab_credentials = ("toy", "toy")
    deploy_connection = CONNECTION

    def secure(self, host: Host, insecure: bool) -> None:
        """The fake has no transport to secure."""

    def lab_overlay(self, host: Host, endpoint: Mapping[str, Any]) -> None:
        """The fake is never served by the twin."""


class FakeDevice:
    """NAPALM-shaped in-memory device: candidate, running, a pending commit with its backup."""

    def __init__(self, name: str) -> None:
        self.name, self.candidate, self.backup = name, None, None
        self.marker: str | None = None

    def load_merge_candidate(self, config: str) -> None:
        self.candidate = config

    load_replace_candidate = load_merge_candidate

    def compare_config(self) -> str:
        old, new = RUNNING.get(self.name, "").splitlines(), (self.candidate or "").splitlines()
        return "\n".join(line for line in difflib.unified_diff(old, new, lineterm="", n=0)
                         if not line.startswith(("---", "+++", "@@")))

    def discard_config(self) -> None:
        self.candidate = None

    def has_pending_commit(self) -> bool:
        return self.backup is not None

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        self.backup, RUNNING[self.name], self.candidate = RUNNING.get(self.name, ""), self.candidate or "", None

    def confirm_commit(self) -> None:
        self.backup = None

    def rollback(self) -> None:
        if self.backup is not None:
            RUNNING[self.name], self.backup = self.backup, None

    def get_config(self, retrieve: str = "all", sanitized: bool = False) -> dict[str, str]:
        return {"running": RUNNING.get(self.name, ""), "candidate": "", "startup": ""}

    def cli(self, command: str) -> str:
        if command != "show interfaces":
            raise ValueError(f"toy NOS: unknown command {command!r}")
        return "\n".join(line.removeprefix("set interface ") for line in RUNNING.get(self.name, "").splitlines()
                         if line.startswith("set interface "))


class FakeConnection:
    """Nornir connection plugin for the fake device."""

    def open(self, hostname: str | None, username: str | None, password: str | None, port: int | None,
             platform: str | None, extras: dict[str, Any] | None = None, configuration: Any = None) -> None:
        self.connection = FakeDevice(str(hostname))

    def close(self) -> None:
        """Nothing to close."""


class ToyCollector:
    def runner(self, task: Any) -> Any:
        device = task.host.get_connection(CONNECTION, task.nornir.config)
        return lambda commands: {c: device.cli(c) for c in commands}

    def section_commands(self, section: str, device: DeviceIntent) -> list[Any]:
        return ["show interfaces"] if section == "interfaces" else []

    def apply_section(self, section: str, outputs: Mapping[Any, Any], state: DeviceState, device: DeviceIntent,
                      taken_at: float) -> None:
        for line in outputs["show interfaces"].splitlines():
            name, _, address, _, mtu, _, speed = line.split()
            state.interfaces[name] = InterfaceState(name, admin_up=True, oper_up=True, speed_mbps=int(speed),
                                                    mtu=int(mtu))
        state.sections.add(section)


ConnectionPluginRegister.register(CONNECTION, FakeConnection)  # type: ignore[arg-type]

platform = Platform(
    name="toynos",
    transport=ToyTransport(),
    collector=ToyCollector(),
    config=ToyConfigQos(),
    deploy=ToyPolicy("toynos", DeployCapabilities(commit_timer=True, replace=True), package="toy_nos.templates"),
)

# the same OS without the optional capabilities the commands need (its templates are toynos')
bare = dataclasses.replace(
    platform, name="toybare", config=ToyConfigBare(),
    deploy=RegexPolicy("toynos", DeployCapabilities(commit_timer=True, replace=True), package="toy_nos.templates"))
