"""`nr-run inventory migrate`: rewrite a site's fabric.yaml to the current inventory format, keeping its
comments, key order and quoting (ruamel.yaml round trip).

Each key the format removed or renamed (nr_run.intent.formats.CHANGES) is renamed in place or dropped, and
`format:` is set to the current version. The file is replaced atomically with its mode kept; a file already
at the current format is left untouched.
"""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path

from nr_run.intent.errors import Finding, InventoryError
from nr_run.intent.formats import CHANGES, CURRENT, FORMAT_KEY, declared, parents


def _dash_offset(text: str) -> int:
    """How far the file indents a list's dashes under their key (0: `key:` then `- item` level with it)."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    for line, nxt in zip(lines, lines[1:], strict=False):
        if line.rstrip().endswith(":") and nxt.lstrip().startswith("- "):
            return max(0, (len(nxt) - len(nxt.lstrip())) - (len(line) - len(line.lstrip())))
    return 0


def migrate_text(text: str, file: str = "fabric.yaml") -> tuple[str, list[str]]:
    """(the migrated text, one line per change made); raises InventoryError for a file it cannot read."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096              # never re-wrap a line the operator wrote
    offset = _dash_offset(text)
    yaml.indent(mapping=2, sequence=offset + 2, offset=offset)
    try:
        doc = yaml.load(text)
    except YAMLError as exc:
        raise InventoryError([Finding("error", "yaml", file, "", "", f"not valid YAML: {exc}".splitlines()[0])]) \
            from None
    if not hasattr(doc, "insert"):
        raise InventoryError([Finding("error", "schema", file, "", "", "fabric.yaml must be a mapping")])
    version, problems = declared(doc, file)
    if problems:
        raise InventoryError(problems)
    changes: list[str] = []
    for change in CHANGES:
        for where, parent in parents(doc, change.path):
            if change.key not in parent:
                continue
            field = f"{where}.{change.key}"
            keys = list(parent)
            value = parent.pop(change.key)
            if change.rename_to is not None and change.rename_to not in parent:
                parent.insert(keys.index(change.key), change.rename_to, value)   # type: ignore[attr-defined]
                changes.append(f"{field} -> {where}.{change.rename_to}")
            else:
                changes.append(f"{field} removed ({change.hint})")
    if version != CURRENT or FORMAT_KEY not in doc:
        if FORMAT_KEY in doc:
            doc[FORMAT_KEY] = CURRENT
        else:
            doc.insert(0, FORMAT_KEY, CURRENT, comment="inventory format (docs/inventory-format.md)")
        changes.append(f"{FORMAT_KEY}: {version} -> {CURRENT}")
    if not changes:
        return text, []
    out = io.StringIO()
    yaml.dump(doc, out)
    return out.getvalue(), changes


def migrate_site(directory: Path | str) -> list[str]:
    """Migrate `directory`/fabric.yaml in place; the changes made (empty: it was current, nothing written)."""
    path = Path(directory) / "fabric.yaml"
    text = path.read_text(encoding="utf-8")
    migrated, changes = migrate_text(text, str(path))
    if changes:
        fd, tmp = tempfile.mkstemp(prefix=".fabric.", suffix=".yaml", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(migrated)
            os.chmod(tmp, path.stat().st_mode & 0o7777)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return changes
