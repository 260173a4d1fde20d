"""The analyses whose failure makes a fabric unsafe to deploy, run as preflight rules.

`SAFETY_CHECKS` maps a name to a callable `(fabric) -> list[AnalysisFinding]` returning the failed findings
that must stop a deploy. Adding one is one line, e.g. `"deadlock": deadlock_at_k0`. `preflight_findings`
turns them into inventory findings (exit 3, nothing rendered or pushed); the CLI adds them where it gathers
the other preflight findings (nr_run.cli.commands.load_intent), so `deploy`, `render` and `inventory
validate` all refuse an unsafe fabric.
"""

from __future__ import annotations

from collections.abc import Callable

from nr_run.analysis.options import AnalysisOptions
from nr_run.analysis.result import AnalysisFinding
from nr_run.intent.errors import Finding
from nr_run.intent.models import FabricIntent

SafetyCheck = Callable[[FabricIntent], list[AnalysisFinding]]


def _failed(findings: list[AnalysisFinding]) -> list[AnalysisFinding]:
    return [f for f in findings if not f.passed and f.severity == "error"]


def lossless_paths(fabric: FabricIntent) -> list[AnalysisFinding]:
    """A path class whose RoCE traffic is lossy on some hop: another class, queue or PG, PFC off at one end of a
    link, an MTU too small, a config the platform cannot build or a watchdog timer it refuses."""
    from nr_run.analysis.lossless import unsafe_findings

    return unsafe_findings(fabric)


def buffer_overflow(fabric: FabricIntent) -> list[AnalysisFinding]:
    """An ingress lossless pool or headroom pool too small for the derived headroom (lossless packets drop)."""
    from nr_run.analysis.buffers import analyse

    # ECN acting after PFC costs pauses, not packets: it fails the proof, not the deploy
    return [f for f in _failed(analyse(fabric, AnalysisOptions()).findings) if f.data.get("check") != "ecn-before-pfc"]


def deadlock_at_k0(fabric: FabricIntent) -> list[AnalysisFinding]:
    """A cyclic buffer dependency with every link up: PFC can deadlock the fabric without any failure."""
    from nr_run.analysis.deadlock import deadlock_safety

    return _failed(deadlock_safety(fabric))


SAFETY_CHECKS: dict[str, SafetyCheck] = {
    "lossless": lossless_paths,
    "buffers": buffer_overflow,
    "deadlock": deadlock_at_k0,
}


def safety_findings(fabric: FabricIntent) -> list[AnalysisFinding]:
    """Every failed safety check's findings, in SAFETY_CHECKS order."""
    out: list[AnalysisFinding] = []
    for check in SAFETY_CHECKS.values():
        out += check(fabric)
    return out


def preflight_findings(fabric: FabricIntent) -> list[Finding]:
    """The safety findings as preflight errors (file, host, field, message with the fix)."""
    out = []
    for f in safety_findings(fabric):
        host = str(f.data.get("device", ""))
        host = host if host in fabric.devices else ""
        out.append(Finding("error", f"unsafe-{f.analysis}", fabric.fabric_file, host, str(f.data.get("field", "")),
                           f"{f.subject}: {f.message}" + (f"; fix: {f.fix}" if f.fix else "")))
    return sorted(set(out))
