"""JSON text of a payload whose one large list is encoded item by item (never all of it in memory at once).

    write(path, dumps_streamed(payload, "findings", (f.to_dict() for f in findings)))

The text is byte for byte `json.dumps({**payload, key: list(items)}, indent=2, sort_keys=True) + "\\n"`: a check
of a large site has hundreds of thousands of findings, whose dicts and text would otherwise all exist together.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

_ITEM_INDENT = " " * 4          # a top-level list's items, at indent=2


def dumps_streamed(payload: Mapping[str, Any], key: str, items: Iterable[Any]) -> Iterator[str]:
    """The pretty-printed (indent 2, sorted keys) JSON of `payload` with `items` as its top-level `key`."""
    text = json.dumps({**payload, key: []}, indent=2, sort_keys=True)
    # a top-level key is the only text at two spaces after a line break (strings escape their line breaks)
    head, tail = text.split(f'\n  {json.dumps(key)}: []', 1)
    yield f'{head}\n  {json.dumps(key)}: ['
    empty = True
    for item in items:
        body = json.dumps(item, indent=2, sort_keys=True).replace("\n", "\n" + _ITEM_INDENT)
        yield f'{"" if empty else ","}\n{_ITEM_INDENT}{body}'
        empty = False
    yield ("]" if empty else "\n  ]") + tail + "\n"
