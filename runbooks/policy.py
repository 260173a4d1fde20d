"""Per-platform deploy policy (templates/<platform>/policy.yaml): lines a change must never remove,
and how secrets look in that platform's diffs, so diffs can be shown and saved without them."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import yaml

from runbooks.render import TEMPLATES_DIR

MASK = "<removed>"


@cache
def _policy(platform: str) -> tuple[tuple[re.Pattern, ...], tuple[re.Pattern, ...]]:
    path = Path(TEMPLATES_DIR) / platform / "policy.yaml"
    data = yaml.safe_load(path.read_text()) if path.exists() else {}
    return (tuple(re.compile(p) for p in data.get("protected", [])),
            tuple(re.compile(p) for p in data.get("secrets", [])))


def redact(diff: str, platform: str) -> str:
    """The diff with every secret value masked."""
    _, secrets = _policy(platform)
    for pattern in secrets:
        diff = pattern.sub(lambda m: f"{m.group(1)} {MASK}" if not m.group(1).endswith(": ")
                           else f"{m.group(1)}{MASK}", diff)
    return diff


def lockouts(diff: str, platform: str) -> list[str]:
    """Removed lines that would cut management access."""
    protected, _ = _policy(platform)
    out = []
    for line in diff.splitlines():
        if not line.startswith("-") or line.startswith("---"):
            continue
        body = line[1:].strip()
        if any(p.search(body) for p in protected):
            out.append(body)
    return out
