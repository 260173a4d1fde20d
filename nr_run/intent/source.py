"""Read a site's inventory files into plain data, resolving Nornir group/default inheritance.

Only reads files; no Nornir objects, so the compiler stays a pure function of the files. The files are
hostile until validated: any byte sequence gives either data or findings (file, host, field), never an
exception, and no input makes loading slower than linear.
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from nr_run.intent.errors import Finding
from nr_run.intent.names import NAME_HINT, is_safe_name

HOSTS, GROUPS, DEFAULTS, FABRIC = "hosts.yaml", "groups.yaml", "defaults.yaml", "fabric.yaml"
# libyaml's parser when PyYAML was built with it (same safe constructors, several times faster)
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# An inventory file is refused before it is parsed when it is larger than MAX_FILE_BYTES or has more than
# MAX_ITEMS lines and flow-collection commas (a cheap count of how many values the parser would build): a file
# near either cap still parses in seconds. A generated 1,024-RTSW site with 4,096 servers: hosts.yaml 0.6 MB,
# 47k lines.
MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_ITEMS = 200_000
PSEUDO_FS = ("/proc", "/sys", "/dev")
MAX_NODES = 2_000_000      # scalars + containers after alias expansion (a 1,000-switch site is ~100k)
MAX_DEPTH = 32             # the deepest legitimate value (fabric.yaml) is 5 levels


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


_MERGE = "tag:yaml.org,2002:merge"


class _UniqueKeyLoader(SafeLoader):  # type: ignore[misc,valid-type]
    """SafeLoader (libyaml's when present) that refuses a key repeated in one mapping (PyYAML silently keeps
    the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        pairs = list(node.value)            # as written: a merge (<<) rewrites node.value while constructing
        if not any(key_node.tag == _MERGE for key_node, _ in pairs):
            try:
                built = super().construct_mapping(node, deep=deep)
            except yaml.constructor.ConstructorError:
                built = None                # an unhashable key: named below
            if built is not None and len(built) == len(pairs):
                return built                # as many keys as written: none repeated (the common case, one pass)
        seen: set[Any] = set()
        for key_node, _ in pairs:
            if key_node.tag == _MERGE:
                continue
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, Hashable):
                raise yaml.constructor.ConstructorError(None, None, "a mapping key must be a scalar",
                                                        key_node.start_mark)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _shape_problem(value: Any) -> str | None:
    """Why the loaded document is too deep, too big or recursive to process, or None.

    Sizes count aliases as expanded (a "billion laughs" document is tiny on disk); each distinct container is
    visited once (sizes and depths of shared ones are memoized), so the check is linear in the file.
    """
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, done = stack.pop()
        if not isinstance(item, dict | list):
            continue
        key = id(item)
        children = [v for pair in item.items() for v in pair] if isinstance(item, dict) else item
        if done:
            on_path.discard(key)
            subs = [c for c in children if isinstance(c, dict | list)]
            size[key] = 1 + len(children) - len(subs) + sum(size[id(c)] for c in subs)
            depth[key] = 1 + max((depth[id(c)] for c in subs), default=0)
            if size[key] > MAX_NODES:
                return f"more than {MAX_NODES} values (after expanding YAML aliases)"
            if depth[key] > MAX_DEPTH:
                return f"nested deeper than {MAX_DEPTH} levels"
            continue
        if key in size:
            continue
        if key in on_path:
            return "a value contains itself (recursive YAML alias)"
        if len(on_path) > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH} levels"
        on_path.add(key)
        stack.append((item, True))
        stack.extend((c, False) for c in children if isinstance(c, dict | list) and id(c) not in size)
    return None


def _error(file: str, message: str, host: str = "", fld: str = "") -> Finding:
    return Finding("error", "schema", file, host, fld, message)


def _load_yaml(path: Path, findings: list[Finding], required: bool) -> dict[str, Any]:
    file = str(path)
    if not path.exists():
        if required:
            findings.append(_error(file, "file is missing"))
        return {}
    if not path.is_file():
        findings.append(_error(file, "not a regular file"))
        return {}
    real = os.path.realpath(path)
    if any(real == top or real.startswith(top + "/") for top in PSEUDO_FS):
        # /proc/self/environ and friends: a kernel's file, not an inventory (and never echoed back)
        findings.append(_error(file, f"is a link to a kernel pseudo file system ({real.split('/')[1]}), not a file"))
        return {}
    try:
        # the size is checked before anything is read, and the read itself is bounded (a file that grows
        # meanwhile, or a /proc file whose size says 0, is still read only up to the cap)
        if path.stat().st_size > MAX_FILE_BYTES:
            findings.append(_error(file, f"larger than {MAX_FILE_BYTES} bytes"))
            return {}
        with path.open("rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        findings.append(_error(file, f"cannot read: {exc.strerror or exc}"))
        return {}
    if len(raw) > MAX_FILE_BYTES:
        findings.append(_error(file, f"larger than {MAX_FILE_BYTES} bytes"))
        return {}
    items = raw.count(b"\n") + raw.count(b",")
    if items > MAX_ITEMS:
        findings.append(_error(file, f"more than {MAX_ITEMS} lines and list items ({items}): not parsed"))
        return {}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        findings.append(_error(file, f"not UTF-8 (byte {exc.start})"))
        return {}
    try:
        loaded = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        findings.append(_error(file, f"not valid YAML: {' '.join(str(exc).split())}"))
        return {}
    except (ValueError, TypeError, OverflowError, RecursionError, MemoryError) as exc:
        # PyYAML's scalar constructors raise these for e.g. an impossible date or a recursive structure
        findings.append(_error(file, f"not valid YAML: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"))
        return {}
    if loaded is None:
        return {}
    problem = _shape_problem(loaded)
    if problem:
        findings.append(_error(file, problem))
        return {}
    if not isinstance(loaded, dict):
        findings.append(_error(file, "top level must be a mapping"))
        return {}
    bad_keys = [k for k in loaded if not isinstance(k, str)]
    if bad_keys:
        findings.append(_error(file, f"top-level key {bad_keys[0]!r} is not a string"))
        return {}
    return loaded


def _mapping(value: Any, file: str, host: str, fld: str, findings: list[Finding]) -> dict[str, Any]:
    """`value` if it is a mapping with string keys (None counts as empty), else {} and a finding."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        findings.append(_error(file, f"must be a mapping, not {type(value).__name__}", host, fld))
        return {}
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        findings.append(_error(file, f"key {bad[0]!r} is not a string", host, fld))
        return {}
    return value


def _group_list(entry: dict[str, Any], file: str, host: str, findings: list[Finding]) -> list[str]:
    value = entry.get("groups")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(g, str) for g in value):
        findings.append(_error(file, "must be a list of group names", host, "groups"))
        return []
    return list(value)


class _Groups:
    """groups.yaml, checked, with each group's resolution order computed once (linear in the file)."""

    def __init__(self, raw: dict[str, Any], file: str, findings: list[Finding]) -> None:
        self.file, self.findings = file, findings
        self.entries: dict[str, dict[str, Any]] = {}
        self.parents: dict[str, list[str]] = {}
        for name, entry in raw.items():
            if not is_safe_name(name):
                findings.append(_error(file, f"group name {name!r} is not allowed ({NAME_HINT})", name, "name"))
                continue
            if entry is None:        # Nornir's SimpleInventory cannot read a group with no body
                findings.append(_error(file, "group has no body: give it its settings, or {} for none", name, ""))
            mapping = _mapping(entry, file, name, "", findings)
            self.entries[name] = mapping
            self.parents[name] = _group_list(mapping, file, name, findings)
        self.chains: dict[str, list[str]] = {}
        self.cyclic: set[str] = set()
        self.unknown: set[tuple[str, str]] = set()
        for name in sorted(self.entries):
            self._resolve(name)

    def _resolve(self, start: str) -> None:
        """Depth-first order of `start` and its ancestors (Nornir's: group, then its parents in order),
        each group listed once; iterative, memoized, cycles reported once per group on the cycle."""
        if start in self.chains:
            return
        state: dict[str, int] = {}          # 1 on the current path
        stack: list[tuple[str, int]] = [(start, 0)]
        state[start] = 1
        while stack:
            name, i = stack.pop()
            parents = self.parents.get(name, [])
            if i < len(parents):
                stack.append((name, i + 1))
                parent = parents[i]
                if parent not in self.entries:
                    if (name, parent) not in self.unknown:
                        self.unknown.add((name, parent))
                        self.findings.append(_error(self.file, f"unknown parent group {parent!r}", name, "groups"))
                    continue
                if state.get(parent) == 1:
                    if parent not in self.cyclic:
                        self.cyclic.add(parent)
                        self.findings.append(_error(self.file, f"group {parent!r} inherits from itself "
                                                    f"(through {name!r})", parent, "groups"))
                    continue
                if parent not in self.chains:
                    state[parent] = 1
                    stack.append((parent, 0))
                continue
            chain: list[str] = [name]
            seen = {name}
            for parent in parents:
                for g in self.chains.get(parent, []):
                    if g not in seen:
                        seen.add(g)
                        chain.append(g)
            self.chains[name] = chain
            state[name] = 2

    def chain(self, names: list[str]) -> list[str]:
        """Resolution order of a host listing `names`: first occurrence wins, as in Nornir's lookup."""
        out: list[str] = []
        seen: set[str] = set()
        for name in names:
            for g in self.chains.get(name, []):
                if g not in seen:
                    seen.add(g)
                    out.append(g)
        return out


def _str_or_none(value: Any, file: str, host: str, fld: str, findings: list[Finding]) -> str | None:
    if value is None or isinstance(value, str):
        return value
    findings.append(_error(file, f"must be a string, not {type(value).__name__}", host, fld))
    return None


def load_site(directory: Path) -> SiteSource:
    findings: list[Finding] = []
    hosts_raw = _load_yaml(directory / HOSTS, findings, required=True)
    groups_raw = _load_yaml(directory / GROUPS, findings, required=False)
    defaults_file = str(directory / DEFAULTS)
    defaults = _mapping(_load_yaml(directory / DEFAULTS, findings, required=False), defaults_file, "", "", findings)
    fabric = _load_yaml(directory / FABRIC, findings, required=True)
    hosts_file, groups_file = str(directory / HOSTS), str(directory / GROUPS)
    groups = _Groups(groups_raw, groups_file, findings)
    default_data = _mapping(defaults.get("data"), defaults_file, "", "data", findings)
    default_platform = _str_or_none(defaults.get("platform"), defaults_file, "", "platform", findings)
    hosts: dict[str, HostSource] = {}
    for name in sorted(hosts_raw):
        if not is_safe_name(name):
            findings.append(_error(hosts_file, f"host name {name!r} is not allowed ({NAME_HINT})", name, "name"))
            continue
        if hosts_raw[name] is None:     # Nornir's SimpleInventory cannot read a host with no body
            findings.append(_error(hosts_file, "host has no body: give it its settings", name, ""))
            continue
        raw = _mapping(hosts_raw[name], hosts_file, name, "", findings)
        if not raw:
            continue
        listed = _group_list(raw, hosts_file, name, findings)
        for group in listed:
            if group not in groups.entries:
                findings.append(_error(hosts_file, f"unknown group {group!r}", name, "groups"))
        chain = groups.chain(listed)
        data: dict[str, Any] = dict(default_data)
        platform = default_platform
        # lowest precedence first: defaults, then groups in reverse resolution order, then the host
        for group in reversed(chain):
            entry = groups.entries[group]
            data.update(_mapping(entry.get("data"), groups_file, group, "data", findings))
            platform = _str_or_none(entry.get("platform"), groups_file, group, "platform", findings) or platform
        data.update(_mapping(raw.get("data"), hosts_file, name, "data", findings))
        platform = _str_or_none(raw.get("platform"), hosts_file, name, "platform", findings) or platform
        hostname = raw.get("hostname", "")
        if not isinstance(hostname, str):
            findings.append(_error(hosts_file, f"must be a string, not {type(hostname).__name__}", name, "hostname"))
            hostname = ""
        hosts[name] = HostSource(name=name, hostname=hostname, platform=platform, data=data)
    return SiteSource(directory=directory, fabric=fabric, hosts=hosts, findings=sorted(set(findings)))
