"""Load a site for the runbooks: compile the intent, then let every platform plug-in check it.

The intent layer knows no platform; whether a device's platform is installed, and what each platform's
config can carry, is decided here, at the platforms layer.
"""

from __future__ import annotations

from pathlib import Path

from nr_run.intent.compile import compile_with_findings
from nr_run.intent.errors import Finding
from nr_run.intent.models import FabricIntent
from nr_run.platforms import registry
from nr_run.platforms.base import PREFLIGHT
from nr_run.platforms.hashing import hash_findings


def unknown_platforms(fabric: FabricIntent) -> list[Finding]:
    """One error per device whose platform no installed plug-in provides."""
    known = set(registry.names())
    return [Finding("error", "unknown-platform", fabric.fabric_file, dev.name,
                    f"hardware.{dev.hardware.name}.platform",
                    f"no platform plug-in named {dev.platform!r} is installed (known: {', '.join(sorted(known))})")
            for _, dev in sorted(fabric.devices.items()) if dev.platform not in known]


def missing_capabilities(fabric: FabricIntent) -> list[Finding]:
    """One error per installed platform the site uses that lacks a capability the safety preflight needs
    (on its first device, sorted): the analyses must not pass vacuously."""
    first: dict[str, str] = {}
    for name, dev in sorted(fabric.devices.items()):
        first.setdefault(dev.platform, name)
    known = set(registry.names())
    return [Finding("error", "missing-capability", fabric.fabric_file, device,
                    f"hardware.{fabric.devices[device].hardware.name}.platform",
                    registry.refusal(platform, capability, PREFLIGHT))
            for platform, device in sorted(first.items()) if platform in known
            for capability in registry.missing(platform, PREFLIGHT)]


def platform_preflight(fabric: FabricIntent) -> list[Finding]:
    """Every installed platform's own preflight rules over the site (platforms with a config builder)."""
    out: list[Finding] = []
    used = {d.platform for d in fabric.devices.values()}
    for name in registry.names():
        builder = registry.get(name).config
        if name in used and builder is not None:
            out += builder.preflight(fabric)
    return out


def load_site(directory: Path | str) -> tuple[FabricIntent | None, list[Finding]]:
    """Compile the site and run every preflight rule, the platforms' included.

    Returns the intent (None when the inventory could not be compiled) and the sorted findings; the
    caller refuses to render or push when any finding is an error.
    """
    intent, findings = compile_with_findings(directory)
    if intent is None:
        return None, findings
    findings = (findings + unknown_platforms(intent) + missing_capabilities(intent) + platform_preflight(intent)
                + hash_findings(intent))
    return intent, sorted(set(findings))
