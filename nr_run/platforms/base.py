"""The platform plug-in contract: everything specific to one network OS lives behind these four parts.

A platform is a `Platform` made of four parts, each a small protocol:

- `ConfigBuilder`  DeviceIntent -> structured config (a plain dict, pyavd style) -> config text, plus the
  platform's own preflight rules (what the intent asks for that this OS cannot carry);
- `Transport`      how Nornir reaches the device: credential variables, lab defaults, connection options,
  TLS/host-key policy, the --lab endpoint overlay;
- `DeployPolicy`   what a deploy may do: commit timer and replace support, secrets to mask in diffs,
  lines whose removal would cut management access, a change classifier;
- `Collector`      commands per normalized state section and the parsers that normalize their output
  (vendor values are normalized here, so checks compare platform-neutral values).

Core code reaches a platform only through `nr_run.platforms.registry`; no core module names one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from nornir.core.inventory import Host

    from nr_run.intent.errors import Finding
    from nr_run.intent.models import DeviceIntent, FabricIntent, Interface
    from nr_run.platforms.state import DeviceState

# commands -> raw outputs keyed by command, over the host's Nornir connection
Runner = Callable[[list[Any]], dict[Any, Any]]


@dataclass(frozen=True)
class ClabNode:
    """How containerlab runs the platform's lab image (`nr-run lab topology`)."""

    kind: str                                     # containerlab kind, e.g. "ceos"
    image: str
    startup_suffix: str                           # startup config file: <device><startup_suffix>


class ConfigBuilder(Protocol):
    """Intent -> structured config -> text. Templates (if any) only format the structured config.

    `bgp_neighbor_bfd` says whether this platform's config can carry BFD per BGP neighbor: a builder
    asks the peer's platform before configuring BFD toward it, since a one-sided BFD never comes up.
    `startup_config` is the minimal day-0 config of the lab image (None: the image boots without one);
    `clab_interface` names a front-panel port as containerlab's link endpoints do. Optional:
    `port_names(device) -> dict[str, str]`, the other names the device's ports go by (aliases, short forms)
    mapped to their intent names, for checks that read a neighbour's view (LLDP).
    Optional, for the whole-fabric analyses: `qos_view(device, structured) -> nr_run.platforms.qos.DeviceQos`,
    what the rendered config makes each port do with RoCE traffic (without it the intent is used), and
    `ecmp_hash_fields(device) -> frozenset[str] | None`, the ECMP hash fields (nr_run.platforms.hashing).
    """

    suffix: str                                   # file name suffix of a rendered config: ".cfg", ".json"
    bgp_neighbor_bfd: bool
    clab: ClabNode

    def structured_config(self, device: DeviceIntent, fabric: FabricIntent | None = None) -> dict[str, Any]: ...

    def render(self, structured: Mapping[str, Any]) -> str: ...

    def preflight(self, fabric: FabricIntent) -> list[Finding]: ...

    def startup_config(self, device: DeviceIntent) -> str | None: ...

    def clab_interface(self, interface: Interface, device: DeviceIntent) -> str: ...


class Transport(Protocol):
    """How Nornir connects: credentials from NR_<env_name>_USERNAME/PASSWORD, options per connection plugin."""

    env_name: str                                 # "EOS" -> NR_EOS_USERNAME / NR_EOS_PASSWORD
    lab_credentials: tuple[str, str]              # the lab image's documented default login
    deploy_connection: str                        # Nornir connection plugin the deploy tasks use ("napalm")

    def secure(self, host: Host, insecure: bool) -> None:
        """Set TLS verification / SSH host-key checking (on unless insecure) on the host's options."""

    def lab_overlay(self, host: Host, endpoint: Mapping[str, Any]) -> None:
        """Point the host at its twin endpoint ({"host", "port", "protocol"})."""


@dataclass(frozen=True)
class DeployCapabilities:
    commit_timer: bool       # commit_config(revert_in=...) reverts by itself unless confirmed
    replace: bool            # a full-config replace is safe (the rendered config carries management access)


class DeployPolicy(Protocol):
    capabilities: DeployCapabilities

    def redact(self, diff: str) -> str:
        """The diff with every secret value masked."""

    def lockouts(self, diff: str) -> list[str]:
        """Removed lines of the diff that would cut management access."""

    def classify(self, diff: str) -> str:
        """How this change is applied on the device (e.g. "commit", "drained apply"); shown in the dry run."""

    # Optional: `apply_method(running: str, candidate: str) -> tuple[str, str]`, the method a change of the
    # running config into the candidate takes on the device and why (SONiC: "gcu" | "drained apply"). The
    # deploy dry run calls it when a policy has it (runbooks.deploy.diff_device).


class Collector(Protocol):
    """Normalized state from device output. Sections are those of nr_run.platforms.state.SECTIONS."""

    def runner(self, task: Any) -> Runner: ...

    def section_commands(self, section: str, device: DeviceIntent) -> list[Any]: ...

    def apply_section(self, section: str, outputs: Mapping[Any, Any], state: DeviceState, device: DeviceIntent,
                      taken_at: float) -> None: ...


@dataclass(frozen=True)
class Platform:
    """One registered platform. `config` is None for devices nr-run does not configure (GPU hosts)."""

    name: str
    transport: Transport
    collector: Collector
    config: ConfigBuilder | None = None
    deploy: DeployPolicy | None = None

    @property
    def configurable(self) -> bool:
        return self.config is not None and self.deploy is not None
