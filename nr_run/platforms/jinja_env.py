"""The Jinja2 environment platform templates render in: strict, whitespace-exact, and quick on dicts.

Templates read structured configs (plain dicts) as `itf.name`. Jinja's `getattr` tries the attribute first and
the key second, so every such lookup raised and caught an AttributeError (a quarter of an EOS render). A plain
dict has no attribute but dict's own methods, so for any other name the key is looked up first: the same value
Jinja would find, without the exception. Templates are read once per process (`auto_reload=False`): a run never
sees its template files change, and the per-include mtime check was one stat() per included file per device.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

_DICT_ATTRIBUTES = frozenset(dir(dict))


class RenderEnvironment(Environment):
    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


def render_environment(folder: str) -> Environment:
    """The environment of one template folder (StrictUndefined: a value missing from the structured config
    raises instead of printing nothing)."""
    return RenderEnvironment(loader=FileSystemLoader(folder), undefined=StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True, autoescape=False, auto_reload=False)
