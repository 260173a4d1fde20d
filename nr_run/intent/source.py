"""Read a site's inventory files into plain data, resolving Nornir group/default inheritance.

Only reads files; no Nornir objects, so the compiler stays a pure function of the files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from nr_run.intent.errors import Finding

HOSTS, GROUPS, DEFAULTS, FABRIC = "hosts.yaml", "groups.yaml", "defaults.yaml", "fabric.yaml"
# libyaml's parser when PyYAML was built with it (same safe constructors, several times faster)
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class HostSource:
    name: str
    hostname: str
    platform: str | None
    data: dict[str, Any]


@dataclass
class SiteSource:
    directory: Path
    fabric: dict[str, Any]
    hosts: dict[str, HostSource]
    findings: list[Finding] = field(default_factory=list)

    def file(self, name: str) -> str:
        return str(self.directory / name)


def _load_yaml(path: Path, findings: list[Finding], required: bool) -> dict[str, Any]:
    if not path.exists():
        if required:
            findings.append(Finding("error", "schema", str(path), "", "", "file is missing"))
        return {}
    try:
        loaded = yaml.load(path.read_text(encoding="utf-8"), Loader=SafeLoader)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as exc:
        findings.append(Finding("error", "schema", str(path), "", "", f"not valid YAML: {exc}"))
        return {}
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        findings.append(Finding("error", "schema", str(path), "", "", "top level must be a mapping"))
        return {}
    return loaded


def _group_chain(name: str, groups: dict[str, Any], seen: tuple[str, ...] = ()) -> list[str]:
    """Depth-first group order as Nornir resolves it (group, its parents, next group...)."""
    if name in seen or name not in groups:
        return []
    chain = [name]
    for parent in (groups[name] or {}).get("groups", []) or []:
        chain += _group_chain(parent, groups, seen + (name,))
    return chain


def load_site(directory: Path) -> SiteSource:
    findings: list[Finding] = []
    hosts_raw = _load_yaml(directory / HOSTS, findings, required=True)
    groups = _load_yaml(directory / GROUPS, findings, required=False)
    defaults = _load_yaml(directory / DEFAULTS, findings, required=False)
    fabric = _load_yaml(directory / FABRIC, findings, required=True)
    hosts: dict[str, HostSource] = {}
    hosts_file = str(directory / HOSTS)
    for name in sorted(hosts_raw):
        raw = hosts_raw[name] or {}
        if not isinstance(raw, dict):
            findings.append(Finding("error", "schema", hosts_file, name, "", "host entry must be a mapping"))
            continue
        chain: list[str] = []
        for group in raw.get("groups", []) or []:
            if group not in groups:
                findings.append(
                    Finding("error", "schema", hosts_file, name, "groups", f"unknown group {group!r}")
                )
            chain += _group_chain(group, groups)
        data: dict[str, Any] = {}
        platform = raw.get("platform")
        # lowest precedence first: defaults, then groups in reverse resolution order, then the host
        layers = [defaults] + [groups[g] or {} for g in reversed(chain)] + [raw]
        for layer in layers:
            data.update(layer.get("data", {}) or {})
            platform = layer.get("platform", platform) if layer is not raw else raw.get("platform", platform)
        hosts[name] = HostSource(name=name, hostname=str(raw.get("hostname", "")), platform=platform, data=data)
    return SiteSource(directory=directory, fabric=fabric, hosts=hosts, findings=findings)
