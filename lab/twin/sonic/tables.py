"""The column layout of sonic-utilities' tables (tabulate's 'simple' format), one line at a time."""

from __future__ import annotations

from collections.abc import Callable


def row_format(widths: list[int], right: set[int]) -> Callable[[list[str]], str]:
    """One table line from its cells: each padded to its column's width (right-aligned in `right`, else left),
    two spaces apart. One format string serves every line: a switch's counters are tables of hundreds of rows."""
    spec = "  ".join(f"{{:{'>' if i in right else '<'}{w}}}" for i, w in enumerate(widths))
    count = len(widths)

    def line(cells: list[str]) -> str:
        if len(cells) != count:
            raise ValueError(f"{len(cells)} cells for {count} columns")
        return spec.format(*cells)
    return line
