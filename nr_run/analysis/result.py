"""The shape every analysis returns, so the CLI, the JSON output and the HTML report treat them alike."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]
FigureKind = Literal["bar", "histogram", "line", "topology"]


@dataclass(frozen=True)
class AnalysisFinding:
    """One property that holds or fails. `subject` says where (a path class, a port, a cycle, a failure set)."""

    analysis: str
    subject: str
    message: str
    passed: bool
    severity: Severity = "error"
    fix: str = ""                        # what to change, naming the inventory key where there is one
    data: dict[str, Any] = field(default_factory=dict)   # JSON-able detail (hops, terms, numbers)


@dataclass(frozen=True)
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]                # JSON-able cells


@dataclass(frozen=True)
class Figure:
    """Data for one plot; the report renders it. `data` keys by kind:
    bar/line: {"labels": [...], "series": {name: [values]}, "xlabel": str, "ylabel": str};
    histogram: {"values": [...], "bins": int, "xlabel": str};
    topology: {"nodes": [{"name", "tier"}], "edges": [[a, b]], "highlight": [[a, b], ...]}.
    """

    title: str
    kind: FigureKind
    data: dict[str, Any]


@dataclass
class AnalysisResult:
    name: str                            # registry key, e.g. "deadlock"
    title: str
    findings: list[AnalysisFinding] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)   # headline numbers, JSON-able
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """A proof holds when none of its error findings failed (warnings do not fail it)."""
        return not any(not f.passed and f.severity == "error" for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ok"] = self.ok
        out["seconds"] = round(self.seconds, 3)      # as the document's `timing`: wall time, not a result
        return out
