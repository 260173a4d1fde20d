"""Check framework: Finding, Check base class, typed check options and the registry.

A check is one module in validators/checks/ holding one `Check` subclass decorated with `@register`.
It declares the normalized state sections it needs (`requires`), the probes it needs beyond them
(`probes()`: measurements such as a second counter sample), its typed options (`Options`, a pydantic
model) and which devices it applies to; `evaluate` compares state with intent and returns findings,
passing ones included, so a report can say what was verified and not only what failed.

A run may read and judge less than everything on some devices (`Selection`, per host): the checks to
evaluate there, whose sections are the ones collected, and the far ends its findings must name. A check
whose sections all hold the device's own configuration (`OWN_CONFIG_SECTIONS`) judges only that device:
a change on another device cannot alter its result (`Check.judges_own_config`).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass
from sys import intern
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms.state import DeviceState

if TYPE_CHECKING:
    from nr_run.validators.probes import Probe

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}

# Sections holding nothing but the device's own configuration. Every other section carries state the far end
# of a link or session shares (oper state, LLDP, BGP, routes, PFC storms and the PFC priorities both ends must
# agree on, counters, NICs, RDMA paths).
OWN_CONFIG_SECTIONS = frozenset({"qos", "buffers"})


# Finding.kind values code acts on (job-check's drain reasons). A check also sets a kind wherever it judges
# several things about one port or peer (PFC priorities, peer agreement, watchdog): the kind is part of the
# finding's id, which must be unique within a run (tests/validators/test_finding_ids.py).
KINDS = frozenset({"unreachable", "not-collected", "pfc-storm", "pause-rate-rx", "pause-rate-tx", "lossless-drops"})


@dataclass(frozen=True, slots=True)
class Finding:
    """One verified or failed expectation.

    `target` is the human wording of what was checked. The structured fields say where: `port` is the
    device's own port or NIC, `peer_device`/`peer_port` the intended far end of that port, BGP session,
    route or probe ("" when not applicable); and what: `kind` names the condition judged where code acts on
    it (KINDS), `index` the PFC priority or queue it concerns, `value` the measured number behind `observed`.
    Code reads these, never the wording.

    Slotted: a large site's run holds hundreds of thousands of findings, and a per-instance dict would be most
    of their memory.
    """

    check: str
    device: str
    target: str                 # port, peer, prefix, NIC pair... ("" for the device itself)
    expected: str
    observed: str
    passed: bool
    severity: Severity = "error"
    hint: str = ""
    port: str = ""
    peer_device: str = ""
    peer_port: str = ""
    kind: str = ""
    index: int | None = None
    value: float | None = None

    @property
    def id(self) -> str:
        """Stable identity of what was judged, built from the structured fields only (never `target`, `expected`,
        `observed` or `hint`), so rewording a message keeps it: `check/device/port/peer_device:peer_port/kind/index`.
        Baselines, history, gates and reports key findings on it."""
        index = "" if self.index is None else str(self.index)
        return "/".join((self.check, self.device, self.port, f"{self.peer_device}:{self.peer_port}", self.kind, index))

    def sort_key(self) -> tuple[Any, ...]:
        return (self.passed, SEVERITY_ORDER[self.severity], self.check, self.device, self.target,
                self.expected, self.observed)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, **asdict(self)}


class CheckOptions(BaseModel):
    """Tunables of a check, overridable per run. Subclasses declare typed fields with defaults and ranges;
    an unknown key or an out-of-range value is refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class InvalidOption(ValueError):
    """An option names an unknown check or key, or has a bad value (the message names `check.key`)."""


@dataclass(frozen=True)
class Where:
    """Structured location of a finding (see Finding)."""

    port: str = ""
    peer_device: str = ""
    peer_port: str = ""


DEVICE = Where()


def on_port(port: Any) -> Where:
    """Where of an intended port or NIC (anything with name, peer_device and peer_port)."""
    return Where(port.name, port.peer_device, port.peer_port)


class Check:
    """Base class. Subclasses set the class attributes and implement `evaluate` (and `probes` if they
    need measurements beyond the collected sections)."""

    name: ClassVar[str] = ""
    tags: ClassVar[tuple[str, ...]] = ()
    description: ClassVar[str] = ""
    requires: ClassVar[tuple[str, ...]] = ()
    roles: ClassVar[tuple[str, ...]] = ("ctsw", "rtsw")          # device roles the check applies to
    Options: ClassVar[type[CheckOptions]] = CheckOptions
    # the DeviceState fields of other devices that `evaluate` reads (the far ends of the device's links): a run
    # that drops each device's state once judged keeps these of every device until the checks reading them ran
    peer_fields: ClassVar[tuple[str, ...]] = ()
    # True: the check's failures report what the inventory itself declares (a link it removes, a NIC out of
    # service), a known degradation reported on every run that fails no exit code
    declared: ClassVar[bool] = False

    def __init__(self, options: Mapping[str, Any] | CheckOptions | None = None) -> None:
        self.options = parse_options(type(self), options)

    def applies_to(self, intent: DeviceIntent) -> bool:
        return intent.role in self.roles

    @classmethod
    def judges_own_config(cls) -> bool:
        """Whether the check judges only the device's own configuration, which a change on another device
        cannot alter: every section it requires is own configuration. Otherwise it judges links, sessions or
        paths, whose state both ends determine."""
        return bool(cls.requires) and set(cls.requires) <= OWN_CONFIG_SECTIONS

    def route_prefixes(self, intent: DeviceIntent, fabric: FabricIntent) -> set[str] | None:
        """The prefixes whose routes this check judges on the device, when it requires "routes": only those are
        read from it (None: the whole table)."""
        return None

    def probes(self) -> list[Probe]:
        """Measurements the check needs besides `requires` (run once per run, shared by equal probes)."""
        return []

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        raise NotImplementedError

    # Helpers so checks read as comparisons.
    # The texts of a finding are interned: a large site's hundreds of thousands of findings repeat a few
    # thousand of them ("oper up", a port name, an MTU), and one copy each is what a run holds until its end.
    def ok(self, device: str, target: str, expected: Any, observed: Any = None, where: Where = DEVICE, *,
           kind: str = "", index: int | None = None, value: float | None = None) -> Finding:
        text = intern(str(expected))
        return Finding(self.name, device, intern(target), text, text if observed is None else intern(str(observed)),
                       True, "info", "", where.port, where.peer_device, where.peer_port, kind, index, value)

    def fail(self, device: str, target: str, expected: Any, observed: Any, hint: str = "",
             severity: Severity = "error", where: Where = DEVICE, *, kind: str = "", index: int | None = None,
             value: float | None = None) -> Finding:
        return Finding(self.name, device, intern(target), intern(str(expected)), intern(str(observed)), False,
                       severity, hint, where.port, where.peer_device, where.peer_port, kind, index, value)


def parse_options(cls: type[Check], options: Mapping[str, Any] | CheckOptions | None) -> CheckOptions:
    """`options` validated by the check's Options model; InvalidOption names the offending `check.key`."""
    if isinstance(options, cls.Options):
        return options
    if isinstance(options, CheckOptions):
        raise InvalidOption(f"options of {cls.name!r} must be {cls.Options.__name__}, not {type(options).__name__}")
    try:
        return cls.Options.model_validate(dict(options or {}))
    except ValidationError as exc:
        errors = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"])
            msg = "unknown option" if err["type"] == "extra_forbidden" else err["msg"]
            errors.append(f"{cls.name}.{key}: {msg}" + ("" if err["type"] == "extra_forbidden"
                                                         else f" (got {err.get('input')!r})"))
        raise InvalidOption("; ".join(errors) + _known(cls)) from None


def _known(cls: type[Check]) -> str:
    fields = ", ".join(f"{k}={f.default!r}" for k, f in cls.Options.model_fields.items())
    return f" [options of {cls.name}: {fields or 'none'}]"


_REGISTRY: dict[str, type[Check]] = {}


def register(cls: type[Check]) -> type[Check]:
    """Class decorator: make a check selectable by name and tags."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"duplicate check name {cls.name!r}")
    _REGISTRY[cls.name] = cls
    return cls


def _load_builtin() -> None:
    import nr_run.validators.checks as pkg

    for mod in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"{pkg.__name__}.{mod.name}")


def all_checks() -> dict[str, type[Check]]:
    _load_builtin()
    return dict(sorted(_REGISTRY.items()))


class UnknownCheck(ValueError):
    pass


def validate_options(options: Mapping[str, Mapping[str, Any]] | None) -> dict[str, CheckOptions]:
    """Every check's options validated by its model, selected or not (a typo is an error, not ignored)."""
    checks = all_checks()
    out: dict[str, CheckOptions] = {}
    for name, values in (options or {}).items():
        if name not in checks:
            raise InvalidOption(f"option for unknown check {name!r}; known: {', '.join(checks)}")
        out[name] = parse_options(checks[name], values)
    return out


def select(selectors: list[str] | None, options: Mapping[str, Mapping[str, Any]] | None = None) -> list[Check]:
    """Instances of the checks named or tagged by `selectors` (all when None/empty), in name order.
    `options` maps a check name to its tunables ({"counters": {"interval_s": 0.5}}); see each check's
    Options model. Raises UnknownCheck or InvalidOption."""
    checks = all_checks()
    typed = validate_options(options)
    if not selectors:
        return [cls(typed.get(n)) for n, cls in checks.items()]
    chosen: dict[str, type[Check]] = {}
    for sel in selectors:
        # a check name selects that check only; otherwise the selector is a tag
        matched = {sel: checks[sel]} if sel in checks else {n: c for n, c in checks.items() if sel in c.tags}
        if not matched:
            raise UnknownCheck(f"no check or tag named {sel!r}; known: {', '.join(checks)}")
        chosen.update(matched)
    return [chosen[n](typed.get(n)) for n in sorted(chosen)]


@dataclass(frozen=True)
class Selection:
    """What a run reads and judges on one device: the checks (names) evaluated there, whose sections are the
    only ones collected, and with `peers`, only the findings whose far end (`peer_device`) is one of them:
    its links, sessions and paths toward those devices. A section that could not be collected, or a check
    that failed to evaluate, is reported whatever the peers."""

    checks: frozenset[str]
    peers: frozenset[str] | None = None

    def keeps(self, finding: Finding) -> bool:
        return finding.check in self.checks and (self.peers is None or finding.peer_device in self.peers)


def required_sections(checks: list[Check], intent: DeviceIntent, only: Collection[str] | None = None) -> set[str]:
    """Sections to collect on one device for the selected checks (of those, only the ones named in `only`)."""
    return {s for c in checks if c.applies_to(intent) and (only is None or c.name in only) for s in c.requires}


def required_prefixes(checks: list[Check], intent: DeviceIntent, fabric: FabricIntent,
                      only: Collection[str] | None = None) -> list[str] | None:
    """The route prefixes to read on one device for the selected checks that need routes (None: the whole
    table, when one of them judges the whole table)."""
    wanted: set[str] = set()
    for check in checks:
        if "routes" not in check.requires or not check.applies_to(intent) or (only is not None and
                                                                               check.name not in only):
            continue
        prefixes = check.route_prefixes(intent, fabric)
        if prefixes is None:
            return None
        wanted |= prefixes
    return sorted(wanted)


def evaluate_all(checks: list[Check], fabric: FabricIntent, states: dict[str, DeviceState],
                 selection: Mapping[str, Selection] | None = None) -> list[Finding]:
    """Run every applicable check on every device; a missing section becomes an error finding.
    With `selection`, only its devices are judged, each on its selected checks and far ends."""
    findings: list[Finding] = []
    for name in sorted(fabric.devices if selection is None else set(selection) & set(fabric.devices)):
        findings += evaluate_device(checks, fabric, name, states,
                                    selection[name] if selection is not None else None)
    # a stable sort: findings of one check on one device keep the order the check gave them, whatever order
    # the devices were judged in
    return sorted(findings, key=Finding.sort_key)


def evaluate_device(checks: list[Check], fabric: FabricIntent, name: str, states: dict[str, DeviceState],
                    chosen: Selection | None = None) -> list[Finding]:
    """The applicable `checks` on one device, unsorted: its state is `states[name]`, the far ends' are the
    others (a missing state or section is an error finding). `chosen`: the device's selection, if any."""
    findings: list[Finding] = []
    intent = fabric.devices[name]
    state = states.get(name)
    for check in checks:
        if not check.applies_to(intent):
            continue
        if chosen is not None and check.name not in chosen.checks:
            continue
        if state is None:
            findings.append(check.fail(name, "", "device state collected", "no state",
                                       "device unreachable or not in the run", kind="unreachable"))
            continue
        missing = state.missing(check.requires)
        if missing:      # one finding per check and device, naming every section it lacks
            whys = sorted(missing.items())
            findings.append(check.fail(name, "section:" + ",".join(s for s, _ in whys), "collected",
                                       whys[0][1] if len(whys) == 1 else "; ".join(f"{s}: {w}" for s, w in whys),
                                       "collection failed; fix connectivity/credentials and rerun",
                                       kind="not-collected"))
            continue
        try:
            found = check.evaluate(intent, state, fabric, states)
        except Exception as exc:  # a broken check must not hide the others' results
            findings.append(check.fail(name, "", "check evaluated", f"{type(exc).__name__}: {exc}",
                                       "bug in the check or unexpected device output"))
            continue
        # a device that could not be read or judged is reported whatever the selection; its findings are kept
        # for the selected far ends
        findings.extend(found if chosen is None else [f for f in found if chosen.keeps(f)])
    return findings
