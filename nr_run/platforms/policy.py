"""Deploy policy read from `templates/<platform>/policy.yaml` (package data), failing closed.

protected: regexes; a removed diff line matching one would cut management access, so the device is refused.
secrets:   regexes whose group 1 is kept and the rest of the match masked in printed and saved diffs.
preserve:  optional regexes of device-local lines the inventory does not model (local users, AAA); a platform
           whose replace would delete them carries them over from the running config (`preserved`).
A missing or malformed policy file raises PolicyMissing: a deploy never runs with masking or the lockout
guard silently off.
"""

from __future__ import annotations

import re
from functools import cached_property

import yaml

from nr_run.platforms.base import DeployCapabilities
from nr_run.platforms.templates import PACKAGE, TemplateMissing, read_text

MASK = "<removed>"


class PolicyMissing(Exception):
    """A platform's deploy policy cannot be read; nothing may be deployed to it."""


class RegexPolicy:
    """DeployPolicy from a platform's policy.yaml."""

    def __init__(self, platform: str, capabilities: DeployCapabilities, package: str = PACKAGE) -> None:
        self.platform, self.capabilities, self.package = platform, capabilities, package

    @cached_property
    def _data(self) -> dict:
        where = self._where
        try:
            data = yaml.safe_load(read_text(self.platform, "policy.yaml", self.package))
        except TemplateMissing as exc:
            raise PolicyMissing(f"deploy policy {where} is missing: refusing to deploy to {self.platform}") from exc
        except yaml.YAMLError as exc:
            raise PolicyMissing(f"deploy policy {where} is not valid YAML: {exc}") from exc
        if not isinstance(data, dict) or not isinstance(data.get("protected"), list) \
                or not isinstance(data.get("secrets"), list) or not isinstance(data.get("preserve", []), list):
            raise PolicyMissing(f"deploy policy {where} must hold the lists 'protected' and 'secrets' "
                                "(and optionally 'preserve')")
        return data

    @property
    def _where(self) -> str:
        return f"templates/{self.platform}/policy.yaml"

    def _compile(self, key: str) -> tuple[re.Pattern[str], ...]:
        try:
            return tuple(re.compile(p) for p in self._data.get(key, []))
        except (re.error, TypeError) as exc:
            raise PolicyMissing(f"deploy policy {self._where} has a bad pattern: {exc}") from exc

    @cached_property
    def _rules(self) -> tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]]:
        return self._compile("protected"), self._compile("secrets")

    @cached_property
    def preserved(self) -> tuple[re.Pattern[str], ...]:
        """Patterns of device-local lines a replace keeps (empty when the policy lists none)."""
        return self._compile("preserve")

    def check(self) -> None:
        """Raise PolicyMissing now if the policy cannot be read (before anything is touched)."""
        _ = self._rules, self.preserved

    def redact(self, diff: str) -> str:
        for pattern in self._rules[1]:
            diff = pattern.sub(lambda m: f"{m.group(1)}{MASK}" if m.group(1).endswith(": ")
                               else f"{m.group(1)} {MASK}", diff)
        return diff

    def lockouts(self, diff: str) -> list[str]:
        protected = self._rules[0]
        out = []
        for line in diff.splitlines():
            if not line.startswith("-") or line.startswith("---"):
                continue
            body = line[1:].strip()
            if any(p.search(body) for p in protected):
                out.append(body)
        return out
