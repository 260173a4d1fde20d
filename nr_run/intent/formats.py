"""Versions of the inventory format: fabric.yaml's `format:` and the keys each version removed or renamed.

A key removed or renamed in the current version is a warning naming its replacement, and is read as its
replacement (a rename) or dropped (a removal); a key changed in an earlier version is an error with the same
hint, as is a changed key in a file that declares a format where the key no longer exists. A file without
`format:` is format 1. `nr-run inventory migrate` rewrites a file to the current format (runbooks.migrate).
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

from nr_run.intent.errors import Finding

CURRENT = 2
FORMAT_KEY = "format"


@dataclass(frozen=True)
class Change:
    """One key the format changed: `path` is dotted, `*` standing for any name (a hardware entry)."""

    path: str
    version: int                  # the format that no longer has the key
    rename_to: str | None         # its new name (same parent), or None when it was removed
    hint: str

    @property
    def key(self) -> str:
        return self.path.rsplit(".", 1)[-1]


CHANGES: tuple[Change, ...] = (
    Change("hardware.*.bfd", 2, None,
           "removed: whether a platform's config can carry per-neighbor BFD is its plug-in's call "
           "(ConfigBuilder.bgp_neighbor_bfd); `bgp.bfd` says whether the site wants BFD"),
    Change("hardware.*.sonic_platform", 2, "platform_id", "renamed to `platform_id`"),
)


def parents(doc: Any, path: str) -> Iterator[tuple[str, MutableMapping[str, Any]]]:
    """(dotted path of the parent, parent mapping) of every place `path`'s last key may sit in `doc`."""
    def walk(node: Any, parts: list[str], where: str) -> Iterator[tuple[str, MutableMapping[str, Any]]]:
        if not isinstance(node, MutableMapping):
            return
        if not parts:
            yield where, node
            return
        head, rest = parts[0], parts[1:]
        names = sorted(k for k in node if isinstance(k, str)) if head == "*" else [head]
        for name in names:
            if name in node:
                yield from walk(node[name], rest, f"{where}.{name}" if where else name)

    yield from walk(doc, path.split(".")[:-1], "")


def declared(doc: Any, file: str) -> tuple[int, list[Finding]]:
    """The format the file declares (1 when none) and the findings about the declaration itself."""
    raw = doc.get(FORMAT_KEY, 1) if isinstance(doc, MutableMapping) else 1
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        return CURRENT, [Finding("error", "format", file, "", FORMAT_KEY,
                                 f"format must be a whole number from 1 to {CURRENT}, not {raw!r}")]
    if raw > CURRENT:
        return CURRENT, [Finding("error", "format", file, "", FORMAT_KEY,
                                 f"format {raw} is newer than this nr-run's ({CURRENT}): upgrade nr-run")]
    return raw, []


def upgrade(doc: Any, file: str) -> tuple[Any, list[Finding]]:
    """fabric.yaml's mapping read as the current format (a copy, its `format` the current one) and the findings: a
    warning per key changed in the current version (read as its replacement), an error per key changed
    earlier or present in a file whose declared format no longer has it."""
    if not isinstance(doc, MutableMapping):
        return doc, []
    version, findings = declared(doc, file)
    out = _copy(doc)
    out[FORMAT_KEY] = CURRENT
    for change in CHANGES:
        for where, parent in parents(out, change.path):
            if change.key not in parent:
                continue
            field = f"{where}.{change.key}"
            stale = version >= change.version or change.version < CURRENT
            findings.append(Finding("error" if stale else "warning", "format", file, "", field,
                                    f"{field}: {change.hint}"
                                    + ("" if stale else f" (read as format {CURRENT}; `nr-run inventory migrate` "
                                                        "rewrites the file)")))
            value = parent.pop(change.key)
            if change.rename_to is not None and not stale and change.rename_to not in parent:
                parent[change.rename_to] = value
    return out, findings


def _copy(node: Any) -> Any:
    if isinstance(node, MutableMapping):
        return {k: _copy(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_copy(v) for v in node]
    return node
