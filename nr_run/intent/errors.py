"""Preflight findings and the error raised when an inventory cannot be compiled."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, order=True)
class Finding:
    """One problem in the inventory, located by file, host and field."""

    severity: Literal["error", "warning"]
    rule: str
    file: str
    host: str
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: host {self.host or '-'}: field {self.field or '-'}"
        return f"{self.severity.upper()} [{self.rule}] {where}: {self.message}"

    def as_dict(self) -> dict:
        return {
            "severity": self.severity,
            "rule": self.rule,
            "file": self.file,
            "host": self.host,
            "field": self.field,
            "message": self.message,
        }


class InventoryError(Exception):
    """The inventory has errors; nothing may be rendered or pushed."""

    def __init__(self, findings: list[Finding]):
        self.findings = sorted(findings)
        errors = [f for f in self.findings if f.severity == "error"]
        super().__init__("\n".join(str(f) for f in errors) or "inventory invalid")
