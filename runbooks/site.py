"""Loading a site: the one step every command and every library user takes before a device is touched.

    site = load_site("inventory/dc1")
    if not site.ok: ...            # site.findings name file, host and field; nothing may be rendered or pushed
    run_checks(nr, site.intent, ...)

It compiles the inventory (strict, hostile-input safe), runs every installed platform's preflight (unknown
platforms, missing capabilities, what a platform cannot carry) and, when nothing is wrong so far, the
whole-fabric safety proofs (a RoCE hop that is not lossless, a PFC deadlock, ...): their errors make the site
unsafe to deploy. `nr-run inventory validate` is exactly this step.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nr_run.intent.errors import Finding
from nr_run.intent.models import FabricIntent


@dataclass(frozen=True)
class Site:
    """A loaded site: its intent (None when the inventory could not be compiled) and every preflight finding."""

    directory: Path
    intent: FabricIntent | None
    findings: list[Finding]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def ok(self) -> bool:
        """Nothing refuses the site: it may be rendered, deployed and checked."""
        return self.intent is not None and not self.errors


def load_site(directory: Path | str) -> Site:
    """Compile and preflight the site in `directory`, safety proofs included (sorted findings)."""
    from nr_run.analysis.safety import preflight_findings
    from nr_run.platforms.site import load_site as compile_and_check

    intent, findings = compile_and_check(directory)
    if intent is not None and not any(f.severity == "error" for f in findings):
        findings = sorted(set(findings + preflight_findings(intent)))
    return Site(Path(directory), intent, findings)
