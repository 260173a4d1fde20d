"""Check framework: Finding, Check base class and the registry.

A check is one module in validators/checks/ holding one `Check` subclass decorated with `@register`.
It declares the normalized state sections it needs (`requires`) and which devices it applies to;
`evaluate` compares state with intent and returns findings, passing ones included, so a report can
say what was verified and not only what failed.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms.state import DeviceState

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Finding:
    check: str
    device: str
    target: str                 # port, peer, prefix, NIC pair... ("" for the device itself)
    expected: str
    observed: str
    passed: bool
    severity: Severity = "error"
    hint: str = ""

    def sort_key(self) -> tuple[Any, ...]:
        return (self.passed, SEVERITY_ORDER[self.severity], self.check, self.device, self.target,
                self.expected, self.observed)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Check:
    """Base class. Subclasses set the class attributes and implement `evaluate`."""

    name: ClassVar[str] = ""
    tags: ClassVar[tuple[str, ...]] = ()
    description: ClassVar[str] = ""
    requires: ClassVar[tuple[str, ...]] = ()
    roles: ClassVar[tuple[str, ...]] = ("ctsw", "rtsw")          # device roles the check applies to
    defaults: ClassVar[dict[str, Any]] = {}       # tunables, overridable per run (options[name][key])

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        self.options = {**self.defaults, **(options or {})}

    def applies_to(self, intent: DeviceIntent) -> bool:
        return intent.role in self.roles

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        raise NotImplementedError

    # Helpers so checks read as comparisons.
    def ok(self, device: str, target: str, expected: Any, observed: Any = None) -> Finding:
        return Finding(self.name, device, target, str(expected), str(expected if observed is None else observed),
                       True, "info")

    def fail(self, device: str, target: str, expected: Any, observed: Any, hint: str = "",
             severity: Severity = "error") -> Finding:
        return Finding(self.name, device, target, str(expected), str(observed), False, severity, hint)


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


def select(selectors: list[str] | None, options: dict[str, dict[str, Any]] | None = None) -> list[Check]:
    """Instances of the checks named or tagged by `selectors` (all when None/empty), in name order.
    `options` maps a check name to its tunables."""
    checks = all_checks()
    options = options or {}
    if not selectors:
        return [cls(options.get(n)) for n, cls in checks.items()]
    chosen: dict[str, type[Check]] = {}
    for sel in selectors:
        # a check name selects that check only; otherwise the selector is a tag
        matched = {sel: checks[sel]} if sel in checks else {n: c for n, c in checks.items() if sel in c.tags}
        if not matched:
            raise UnknownCheck(f"no check or tag named {sel!r}; known: {', '.join(checks)}")
        chosen.update(matched)
    return [chosen[n](options.get(n)) for n in sorted(chosen)]


def required_sections(checks: list[Check], intent: DeviceIntent) -> set[str]:
    """Sections to collect on one device for the selected checks."""
    return {s for c in checks if c.applies_to(intent) for s in c.requires}


def evaluate_all(checks: list[Check], fabric: FabricIntent, states: dict[str, DeviceState]) -> list[Finding]:
    """Run every applicable check on every device; a missing section becomes an error finding."""
    findings: list[Finding] = []
    for check in checks:
        for name in sorted(fabric.devices):
            intent = fabric.devices[name]
            if not check.applies_to(intent):
                continue
            state = states.get(name)
            if state is None:
                findings.append(check.fail(name, "", "device state collected", "no state",
                                           "device unreachable or not in the run"))
                continue
            missing = state.missing(check.requires)
            if missing:
                for section, why in sorted(missing.items()):
                    findings.append(check.fail(name, f"section:{section}", "collected", why,
                                               "collection failed; fix connectivity/credentials and rerun"))
                continue
            try:
                findings.extend(check.evaluate(intent, state, fabric, states))
            except Exception as exc:  # a broken check must not hide the others' results
                findings.append(check.fail(name, "", "check evaluated", f"{type(exc).__name__}: {exc}",
                                           "bug in the check or unexpected device output"))
    return sorted(findings, key=Finding.sort_key)
