"""The Jinja2 environment platform templates render in: strict, whitespace-exact, and quick on dicts.

Templates read structured configs (plain dicts) as `itf.name`. Jinja's `getattr` tries the attribute first and
the key second, so every such lookup raised and caught an AttributeError (a quarter of an EOS render). A plain
dict has no attribute but dict's own methods, so for any other name the key is looked up first: the same value
Jinja would find, without the exception. Templates are read once per process (`auto_reload=False`): a run never
sees its template files change, and the per-include mtime check was one stat() per included file per device.
Compiled templates are cached as Python caches its bytecode (and not when Python is told not to write it): a run
otherwise parses and compiles every template again, a fixed cost each `nr-run` command paid.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import BytecodeCache, Environment, FileSystemBytecodeCache, FileSystemLoader, StrictUndefined

from nr_run.platforms.templates import template_dir

_DICT_ATTRIBUTES = frozenset(dir(dict))


class RenderEnvironment(Environment):
    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


@lru_cache(maxsize=1)
def _bytecode_cache() -> BytecodeCache | None:
    """Jinja's file cache in its per-user directory (created 0700 and refused unless this user owns it with that
    mode, so no other user can plant code in it); an entry is used only for the template source it was compiled
    from (Jinja keys it by name and file and checks the source's checksum). None when Python writes no bytecode
    (PYTHONDONTWRITEBYTECODE, -B) or no safe directory exists."""
    if sys.dont_write_bytecode:
        return None
    try:
        return FileSystemBytecodeCache()
    except (OSError, RuntimeError):
        return None


def render_environment(folder: str) -> Environment:
    """The environment of one template folder (StrictUndefined: a value missing from the structured config
    raises instead of printing nothing)."""
    return RenderEnvironment(loader=FileSystemLoader(folder), undefined=StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True, autoescape=False, auto_reload=False,
                             bytecode_cache=_bytecode_cache())


@lru_cache(maxsize=16)
def platform_environment(platform: str, folder: Path | None = None) -> Environment:
    """The environment of a platform's installed templates (or of `folder`, another template folder), made once
    per process: a site of thousands of switches compiles each template once, and no render pays for the package
    data lookup and realpath of the folder."""
    return render_environment(str(Path(folder if folder is not None else template_dir(platform)).resolve()))
