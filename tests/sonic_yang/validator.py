"""Check a SONiC CONFIG_DB document against SONiC's own YANG models (models/, see models/SOURCE.txt).

CONFIG_DB is TABLE -> "key|parts" -> {field: string}; the models describe the same data as YANG containers
and lists. The schema facts the translation needs (which list of a table a key belongs to and how it splits
into the list's keys, which fields are leaf-lists, which tables are key -> value maps) are read from the
model files by a small statement parser; the translated data is then parsed and validated by libyang
(`oopt-gnpy-libyang`, a PyPI wheel that bundles the C library) in strict mode, as config data, with every
validation error reported. Unknown tables are listed as unchecked, never passed without a word.

usage: python -m tests.sonic_yang.validator CONFIG_DB.json    (exit 0 valid, 1 invalid)
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

MODELS = Path(__file__).resolve().parent / "models"


# ---- the statements of a YANG file: keyword, argument, sub-statements ----

@dataclass
class Stmt:
    keyword: str
    arg: str
    subs: list[Stmt] = field(default_factory=list)

    def children(self, *keywords: str) -> Iterator[Stmt]:
        return (s for s in self.subs if s.keyword in keywords)

    def value(self, keyword: str) -> str | None:
        return next((s.arg for s in self.subs if s.keyword == keyword), None)


_TOKEN = re.compile(r"""\s+|//[^\n]*|/\*.*?\*/|(?P<p>[{};])|"(?P<dq>(?:[^"\\]|\\.)*)"|'(?P<sq>[^']*)'|(?P<w>[^\s{};"']+)""",
                    re.S)


def _tokens(text: str) -> Iterator[str]:
    """Punctuation and words; a quoted string (and "a" + "b" concatenations) as one word."""
    pending: list[str] | None = None
    plus = False
    for m in _TOKEN.finditer(text):
        quoted = m.group("dq") if m.group("dq") is not None else m.group("sq")
        if quoted is not None:
            if pending is not None and plus:
                pending.append(quoted)
                plus = False
            else:
                if pending is not None:
                    yield "".join(pending)
                pending = [quoted]
            continue
        word = m.group("w") or m.group("p")
        if word is None:
            continue
        if word == "+" and pending is not None:
            plus = True
            continue
        if pending is not None:
            yield "".join(pending)
            pending = None
        yield word
    if pending is not None:
        yield "".join(pending)


def parse_yang(text: str) -> Stmt:
    """The module statement of a YANG file (statements only; no semantics)."""
    stack = [Stmt("", "")]
    words: list[str] = []
    for tok in _tokens(text):
        if tok in ("{", ";"):
            stmt = Stmt(words[0], " ".join(words[1:]))
            stack[-1].subs.append(stmt)
            if tok == "{":
                stack.append(stmt)
            words = []
        elif tok == "}":
            stack.pop()
        else:
            words.append(tok)
    return stack[0].subs[0]


# ---- what the translation needs from the models ----

@dataclass
class ListSchema:
    name: str
    keys: list[str]
    leaves: set[str]
    leaf_lists: set[str]
    inner: ListSchema | None          # a key -> value map table's inner list (DSCP_TO_TC_MAP)


@dataclass
class TableSchema:
    module: str
    name: str
    lists: list[ListSchema]
    containers: dict[str, tuple[set[str], set[str]]]    # key -> (leaves, leaf-lists): DEVICE_METADATA|localhost


class Schema:
    def __init__(self, folder: Path = MODELS) -> None:
        self.modules = {p.stem: parse_yang(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.yang"))}
        self.tables: dict[str, TableSchema] = {}
        for name, module in self.modules.items():
            for top in module.children("container"):
                for table in top.children("container"):
                    self.tables[table.arg] = self._table(name, table)

    def _grouping(self, module: str, ref: str) -> Stmt:
        prefix, _, gname = ref.rpartition(":")
        owner = self.modules[module]
        if prefix and prefix != owner.value("prefix"):
            owner = next(self.modules[i.arg] for i in owner.children("import") if i.value("prefix") == prefix)
        return next(g for g in owner.children("grouping") if g.arg == gname)

    def _nodes(self, module: str, stmt: Stmt) -> Iterator[Stmt]:
        """The data nodes under stmt, with `uses` expanded (groupings of the module or an import)."""
        for sub in stmt.subs:
            if sub.keyword == "uses":
                owner = self.modules[module]
                prefix = sub.arg.rpartition(":")[0]
                where = module if not prefix or prefix == owner.value("prefix") else next(
                    i.arg for i in owner.children("import") if i.value("prefix") == prefix)
                yield from self._nodes(where, self._grouping(module, sub.arg))
            elif sub.keyword in ("leaf", "leaf-list", "list", "container"):
                yield sub

    def _list(self, module: str, stmt: Stmt) -> ListSchema:
        nodes = list(self._nodes(module, stmt))
        inner = [n for n in nodes if n.keyword == "list"]
        return ListSchema(stmt.arg, (stmt.value("key") or "").split(),
                          {n.arg for n in nodes if n.keyword == "leaf"},
                          {n.arg for n in nodes if n.keyword == "leaf-list"},
                          self._list(module, inner[0]) if len(inner) == 1 else None)

    def _table(self, module: str, table: Stmt) -> TableSchema:
        lists, containers = [], {}
        for node in self._nodes(module, table):
            if node.keyword == "list":
                lists.append(self._list(module, node))
            elif node.keyword == "container":
                inner = list(self._nodes(module, node))
                containers[node.arg] = ({n.arg for n in inner if n.keyword == "leaf"},
                                        {n.arg for n in inner if n.keyword == "leaf-list"})
        return TableSchema(module, table.arg, lists, containers)


@cache
def schema() -> Schema:
    return Schema()


# ---- CONFIG_DB -> YANG JSON ----

def _fields(fields: Mapping[str, Any], leaf_lists: set[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in fields.items():
        if name in leaf_lists:
            out[name] = [v.strip() for v in value.split(",")] if isinstance(value, str) else list(value)
        else:
            out[name] = value
    return out


def _list_for(table: TableSchema, parts: list[str], fields: Mapping[str, Any]) -> ListSchema | None:
    fits = [lst for lst in table.lists if len(lst.keys) == len(parts)]
    known = [lst for lst in fits if set(fields) <= lst.leaves | lst.leaf_lists]
    return (known or fits or [None])[0]


def translate(config_db: Mapping[str, Any]) -> tuple[dict[str, Any], list[str], list[str]]:
    """(YANG JSON data, tables the models do not describe, keys no list of their table takes)."""
    data: dict[str, dict[str, Any]] = {}
    unchecked, errors = [], []
    for tname, entries in sorted(config_db.items()):
        table = schema().tables.get(tname)
        if table is None:
            unchecked.append(tname)
            continue
        top = data.setdefault(f"{table.module}:{table.module}", {})
        out: dict[str, Any] = top.setdefault(tname, {})
        for key, fields in entries.items():
            if key in table.containers:
                out[key] = _fields(fields, table.containers[key][1])
                continue
            parts = key.split("|")
            lst = _list_for(table, parts, fields)
            if lst is None:
                shapes = "; ".join(f"{x.name} by {'|'.join(x.keys)}" for x in table.lists) or "no list"
                errors.append(f"/{table.module}:{table.module}/{tname}/ key '{key}': no list of {tname} has "
                              f"{len(parts)} key part(s) ({shapes})")
                continue
            entry: dict[str, Any] = dict(zip(lst.keys, parts, strict=True))
            if lst.inner is not None and not set(fields) <= lst.leaves | lst.leaf_lists:
                value = next(iter(lst.inner.leaves - set(lst.inner.keys)))
                entry[lst.inner.name] = [{lst.inner.keys[0]: k, value: v} for k, v in fields.items()]
            else:
                entry.update(_fields(fields, lst.leaf_lists))
            out.setdefault(lst.name, []).append(entry)
    return data, unchecked, errors


# ---- validation ----

@dataclass
class Report:
    errors: list[str]
    unchecked: list[str]
    entries: int

    @property
    def valid(self) -> bool:
        return not self.errors


@cache
def _context() -> Any:
    import oopt_gnpy_libyang as ly

    ly.set_log_options(ly.LogOptions.Store)  # errors are read from the context, not printed
    ctx = ly.Context(str(MODELS), ly.ContextOptions.NoYangLibrary | ly.ContextOptions.DisableSearchCwd)
    for name in _import_order(schema().modules):
        ctx.load_module(name)
    return ctx


def _import_order(modules: Mapping[str, Stmt]) -> list[str]:
    """Modules after the ones they import: a must/when over an imported module's data (BUFFER_PG ->
    DEVICE_METADATA) is compiled against an implemented module, so it is checked rather than skipped."""
    done: list[str] = []

    def visit(name: str) -> None:
        if name in done or name not in modules:
            return
        for imp in modules[name].children("import"):
            visit(imp.arg)
        done.append(name)

    for name in sorted(modules):
        visit(name)
    return done


def validate(config_db: Mapping[str, Any]) -> Report:
    """Every error libyang finds in the document (empty: valid), and the tables it could not check."""
    import oopt_gnpy_libyang as ly

    data, unchecked, unkeyed = translate(config_db)
    entries = sum(len(v) for t, v in config_db.items() if t not in unchecked)
    ctx = _context()
    ctx.clean_all_errors()
    try:
        ctx.parse_data(json.dumps(data), ly.DataFormat.JSON,
                       ly.ParseOptions.Strict | ly.ParseOptions.JsonStringDataTypes,
                       ly.ValidationOptions.Present | ly.ValidationOptions.NoState | ly.ValidationOptions.MultiError)
    except ly.Error:
        errors = [f"{e.data_path or e.schema_path or '-'}: {e.message}" for e in ctx.errors()]
        return Report(unkeyed + (errors or ["libyang refused the data without saying why"]), unchecked, entries)
    return Report(unkeyed, unchecked, entries)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.rsplit("usage: ", 1)[1], file=sys.stderr)
        return 2
    report = validate(json.loads(Path(argv[0]).read_text(encoding="utf-8")))
    for table in report.unchecked:
        print(f"not checked: {table}")
    for error in report.errors:
        print(f"ERROR {error}")
    print(f"INVALID: {len(report.errors)} error(s)" if report.errors else f"OK: {report.entries} entries validated")
    return 0 if report.valid else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
