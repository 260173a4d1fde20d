"""The platform plug-in contract: everything specific to one network OS lives behind these four parts.

A platform is a `Platform` made of four parts, each a small protocol:

- `ConfigBuilder`  DeviceIntent -> structured config (a plain dict, pyavd style) -> config text, plus the
  platform's own preflight rules (what the intent asks for that this OS cannot carry);
- `Transport`      how Nornir reaches the device: credential variables, lab defaults, connection options,
  TLS/host-key policy, the --lab endpoint overlay;
- `DeployPolicy`   what a deploy may do: commit timer and replace support, secrets to mask in diffs,
  lines whose removal would cut management access, a check that the policy itself is readable;
- `Collector`      commands per normalized state section and the parsers that normalize their output
  (vendor values are normalized here, so checks compare platform-neutral values).

Optional capabilities are further small protocols a part may also implement (`QosView`, `EcmpHashFields`,
`PortAliases` on the config builder; `ApplyMethod`, `MarksDevices`, `ReplaceCandidate`, `BatchedCommit` on the
deploy policy;
`RouteLookup`, `CounterPorts` on the collector).
`CAPABILITIES` lists them with the commands that cannot run without them; the registry checks them when it
loads a plug-in and fails closed (`nr_run.platforms.registry.require`) when a command needs one a platform lacks.
Call sites test for a capability with `isinstance(part, Protocol)`, never by probing attribute names.

Core code reaches a platform only through `nr_run.platforms.registry`; no core module names one.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from nornir.core.inventory import Host

    from nr_run.intent.errors import Finding
    from nr_run.intent.models import DeviceIntent, FabricIntent, Interface
    from nr_run.platforms.qos import DeviceQos
    from nr_run.platforms.state import DeviceState
    from nr_run.platforms.telemetry import TelemetryProfile

# commands -> raw outputs keyed by command, over the host's Nornir connection
Runner = Callable[[list[Any]], dict[Any, Any]]


@dataclass(frozen=True)
class ClabNode:
    """How containerlab runs the platform's lab image (`nr-run lab topology`)."""

    kind: str                                     # containerlab kind, e.g. "ceos"
    image: str
    startup_suffix: str                           # startup config file: <device><startup_suffix>


@runtime_checkable
class ConfigBuilder(Protocol):
    """Intent -> structured config -> text. Templates (if any) only format the structured config.

    `bgp_neighbor_bfd` says whether this platform's config can carry BFD per BGP neighbor: a builder
    asks the peer's platform before configuring BFD toward it, since a one-sided BFD never comes up.
    `startup_config` is the minimal day-0 config of the lab image (None: the image boots without one);
    `clab_interface` names a front-panel port as containerlab's link endpoints do. Optional capabilities:
    `QosView` (required for a configured platform), `EcmpHashFields`, `PortAliases`, and the attribute
    `escaped_json_output = True` for a render that is JSON with every string escaped by json's ASCII encoder
    (the guard then proves the text instead of walking the structured config).
    """

    suffix: str                                   # file name suffix of a rendered config: ".cfg", ".json"
    bgp_neighbor_bfd: bool
    clab: ClabNode

    def structured_config(self, device: DeviceIntent, fabric: FabricIntent | None = None) -> dict[str, Any]: ...

    def render(self, structured: Mapping[str, Any]) -> str: ...

    def preflight(self, fabric: FabricIntent) -> list[Finding]: ...

    def startup_config(self, device: DeviceIntent) -> str | None: ...

    def clab_interface(self, interface: Interface, device: DeviceIntent) -> str: ...


@runtime_checkable
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


@runtime_checkable
class DeployPolicy(Protocol):
    """What a deploy may do. Optional capabilities: `ApplyMethod`, `MarksDevices` (required by a commit),
    `ReplaceCandidate`."""

    capabilities: DeployCapabilities

    def check(self) -> None:
        """Raise (e.g. nr_run.platforms.policy.PolicyMissing) now if the policy cannot be read: a deploy never
        runs with masking or the lockout guard silently off."""

    def redact(self, diff: str) -> str:
        """The diff with every secret value masked."""

    def lockouts(self, diff: str) -> list[str]:
        """Removed lines of the diff that would cut management access."""


# Every deploy marks the devices it is about to change with a device-side object named
# nr-run-<site>-<UTC time of the run>: another operator's deploy, from any host, sees it.
MARKER_PREFIX = "nr-run-"
_MARKER = re.compile(r"^nr-run-(?P<site>[A-Za-z0-9][A-Za-z0-9_-]*)-(?P<stamp>\d{8}T\d{6}\d{0,6}Z)$")


def marker_name(site: str, when: datetime) -> str:
    """The marker of a deploy of `site` that started at `when` (microseconds keep two runs apart)."""
    return f"{MARKER_PREFIX}{site}-{when.astimezone(UTC).strftime('%Y%m%dT%H%M%S%fZ')}"


def marker_time(name: str) -> datetime | None:
    """When the deploy that placed marker `name` started (None: not an nr-run marker name). Names come from the
    devices: one shaped like a marker whose stamp is no date (month 13) is not a marker."""
    m = _MARKER.match(name)
    if m is None:
        return None
    stamp = m.group("stamp")
    digits = stamp[9:-1]
    try:
        return datetime.strptime(stamp[:9] + digits[:6], "%Y%m%dT%H%M%S").replace(
            microsecond=int(digits[6:].ljust(6, "0")) if len(digits) > 6 else 0, tzinfo=UTC)
    except ValueError:
        return None


def is_marker(name: str) -> bool:
    """An nr-run deploy marker's name (exactly the shape marker_name gives): only such a name is ever removed."""
    return marker_time(name) is not None


@dataclass(frozen=True)
class Hold:
    """Something on a device that says another change is in progress there."""

    name: str
    nr_run: bool                 # an nr-run deploy's marker (else another tool's pending session)
    since: datetime | None       # when it was placed, if known


class PlacedMarkers:
    """The marker this process placed through each open driver, so a marker's `holds` can leave its own out.
    Held weakly: a driver that is closed and dropped forgets its marker."""

    def __init__(self) -> None:
        self._by_driver: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()

    def of(self, driver: Any) -> str | None:
        return self._by_driver.get(driver)

    def placed(self, driver: Any, name: str) -> None:
        self._by_driver[driver] = name

    def removed(self, driver: Any, name: str) -> None:
        if self._by_driver.get(driver) == name:
            del self._by_driver[driver]


class LeftUntouched(Exception):
    """A deploy connection's refusal of one device it cannot change at all (a GPU server's NIC without a knob the
    intent sets, a server that does not answer): the deploy skips that device with this one line and goes on with
    the others, as for a device another operator holds."""


class DeviceMarker(Protocol):
    """A named, device-side mark of a deploy in progress (EOS: a pending config session; SONiC: a GCU
    checkpoint). `driver` is the host's deploy connection (Transport.deploy_connection)."""

    def holds(self, driver: Any) -> list[Hold]:
        """nr-run markers on the device, and other tools' pending changes that should stop a deploy."""

    def place(self, driver: Any, name: str) -> None:
        """Put marker `name` on the device; the deploy's own changes must still go through."""

    def remove(self, driver: Any, name: str) -> None:
        """Take marker `name` off the device (absent: nothing to do)."""


@runtime_checkable
class Collector(Protocol):
    """Normalized state from device output. Sections are those of nr_run.platforms.state.SECTIONS."""

    def runner(self, task: Any) -> Runner: ...

    def section_commands(self, section: str, device: DeviceIntent) -> list[Any]: ...

    def apply_section(self, section: str, outputs: Mapping[Any, Any], state: DeviceState, device: DeviceIntent,
                      taken_at: float) -> None: ...


def members(protocol: type) -> list[str]:
    """The public members a protocol declares itself: annotated attributes and methods, sorted."""
    own = {**protocol.__dict__.get("__annotations__", {}), **protocol.__dict__}
    return sorted(n for n in own if not n.startswith("_"))


# Optional capabilities. Each is one protocol a part may implement besides its own; `CAPABILITIES` says which
# part carries it and which commands cannot run without it.

@runtime_checkable
class QosView(Protocol):
    """ConfigBuilder: what the rendered structured config (not the intent) makes each port do with RoCE
    traffic, so the whole-fabric safety analyses see what will be configured."""

    def qos_view(self, device: DeviceIntent, structured: Mapping[str, Any]) -> DeviceQos: ...


@runtime_checkable
class EcmpHashFields(Protocol):
    """ConfigBuilder: the fields the device's ECMP hash uses, in nr_run.platforms.hashing's neutral names
    (None: the platform cannot say)."""

    def ecmp_hash_fields(self, device: DeviceIntent) -> frozenset[str] | None: ...


@runtime_checkable
class PortAliases(Protocol):
    """ConfigBuilder: the other names the device's ports go by (aliases, short forms) -> their intent names,
    for checks that read a neighbour's view of a port (LLDP)."""

    def port_names(self, device: DeviceIntent) -> dict[str, str]: ...


@runtime_checkable
class ApplyMethod(Protocol):
    """DeployPolicy: how a change of the running config into the candidate is applied on the device and why
    (SONiC: "gcu" | "drained apply"), shown by the deploy dry run."""

    def apply_method(self, running: str, candidate: str) -> tuple[str, str]: ...


@runtime_checkable
class MarksDevices(Protocol):
    """DeployPolicy: the device-side mark of a deploy in progress, seen by other operators' deploys."""

    marker: DeviceMarker


@runtime_checkable
class ReplaceCandidate(Protocol):
    """DeployPolicy: the config a replace loads when the rendered one alone would delete device-local lines the
    inventory does not model (EOS: local users, AAA)."""

    def replace_candidate(self, running: str, candidate: str) -> str: ...


class CommitSteps(Protocol):
    """A deploy's device steps in fewer requests than the driver's generic calls, with the same checks, leaving
    the driver as its own calls would (its discard_config, rollback and confirm_commit still work)."""

    def applies(self, driver: Any) -> bool:
        """Whether these steps serve this driver (else the deploy uses the driver's own calls)."""

    def guard(self, driver: Any) -> tuple[str | None, list[Hold]]:
        """(a commit waiting for its confirmation on the device, or None; the device's holds): one read."""

    def pending(self, driver: Any) -> bool:
        """A commit waits for its confirmation on the device."""

    def load_diff(self, driver: Any, config: str, replace: bool, keep: bool) -> str:
        """Load the candidate and return its diff against running; keep=False: discard it again."""

    def commit(self, driver: Any, revert_in: int) -> None:
        """Commit the loaded candidate with a device-side revert timer."""

    def confirm(self, driver: Any) -> None:
        """Confirm this driver's commit; refused when none of its commits waits for confirmation."""


@runtime_checkable
class BatchedCommit(Protocol):
    """DeployPolicy: the commit path's device steps batched into fewer requests (EOS: eAPI runCmds)."""

    steps: CommitSteps


class TrafficShift(Protocol):
    """How a deploy reads and restores a switch's traffic shift (SONiC's drained apply: TSA around a config
    reload). `driver` is the host's deploy connection."""

    def shifted(self, driver: Any) -> bool:
        """Traffic is shifted away from the device (maintenance mode)."""

    def restore(self, driver: Any) -> None:
        """Shift traffic back to the device."""


@runtime_checkable
class ShiftsTraffic(Protocol):
    """DeployPolicy: its changes may shift traffic away from a switch; the next run shifts back a switch an
    interrupted deploy left shifted away."""

    traffic: TrafficShift


@runtime_checkable
class RouteLookup(Protocol):
    """Collector: the routes to named prefixes only, instead of the whole table, so what a device returns per
    collection depends on what is judged there, not on the size of the site."""

    def route_commands(self, prefixes: Sequence[str]) -> list[Any]: ...

    def apply_routes(self, outputs: Mapping[Any, Any], prefixes: Sequence[str], state: DeviceState) -> None:
        """Fill state.routes with the routes to `prefixes` found in the outputs (an absent prefix: no route)."""


@runtime_checkable
class CounterPorts(Protocol):
    """Collector: the counters of named ports only, so a device judged only on its links toward a few others
    (a deploy stage's neighbour) is not asked for, and does not print, every port's counters."""

    def counter_commands(self, device: DeviceIntent, ports: Sequence[str]) -> list[Any]:
        """The "counters" section's commands reading at least `ports` (the section's own commands when the
        platform cannot narrow them for these ports); apply_section parses their outputs as the section's."""


@dataclass(frozen=True)
class Capability:
    """One optional capability: the protocol, the part that carries it, the commands that fail closed without
    it (empty: truly optional) and what nr-run does when a platform lacks it."""

    protocol: type
    part: str                      # "config" | "deploy" | "collector"
    needed_by: tuple[str, ...]
    without: str

    @property
    def name(self) -> str:
        return self.protocol.__name__

    @property
    def member(self) -> str:
        """The one attribute or method the capability adds to its part."""
        return members(self.protocol)[0]


# the safety preflight of loading a site, which every command that reads a site runs (nr_run.platforms.site)
PREFLIGHT = "preflight"
COMMIT = "deploy --commit"

CAPABILITIES: tuple[Capability, ...] = (
    Capability(QosView, "config", (PREFLIGHT,), "refused: the safety analyses would pass vacuously on the intent"),
    Capability(EcmpHashFields, "config", (), "the ECMP-hash preflight warning cannot say; it stays silent"),
    Capability(PortAliases, "config", (), "a neighbour's LLDP port ID must be the intent port name"),
    Capability(ApplyMethod, "deploy", (), "the dry run shows no apply method"),
    Capability(MarksDevices, "deploy", (COMMIT,),
               "refused: another operator's deploy from another host could not see this one"),
    Capability(ReplaceCandidate, "deploy", (), "a replace loads the rendered config as it is"),
    Capability(ShiftsTraffic, "deploy", (), "the platform never shifts traffic: nothing to shift back"),
    Capability(BatchedCommit, "deploy", (), "a deploy takes the driver's own calls, one request each"),
    Capability(RouteLookup, "collector", (), "the whole routing table is read"),
    Capability(CounterPorts, "collector", (), "every port's counters are read"),
)


@dataclass(frozen=True)
class Platform:
    """One registered platform. `config` is None for devices nr-run does not configure (GPU hosts);
    `telemetry` is None for a platform that streams nothing over gNMI (its counters are polled)."""

    name: str
    transport: Transport
    collector: Collector
    config: ConfigBuilder | None = None
    deploy: DeployPolicy | None = None
    telemetry: TelemetryProfile | None = None

    @property
    def configurable(self) -> bool:
        return self.config is not None and self.deploy is not None

    def parts(self) -> dict[str, object | None]:
        """The four parts by name (Capability.part names one)."""
        return {"transport": self.transport, "collector": self.collector, "config": self.config,
                "deploy": self.deploy}
