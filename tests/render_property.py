"""Property shared by the hostile-input and generated-site suites: every rendered line comes from a template line.

For each rendered device, the structured config is rendered twice: as is, and with every non-empty string
value replaced by a unique marker (templates hold no logic on string contents, so the markers take the same
template paths). The two renderings must have the same lines (as `str.splitlines()` counts them, every
Unicode line break included), and putting the values back in place of the markers must give the real
rendering byte for byte: no value added a line, split one, or landed outside its slot.
"""

from __future__ import annotations

import re
from typing import Any

from nr_run.intent.models import FabricIntent
from nr_run.platforms.guard import check_structured
from nr_run.runbooks.render import builder

_MARKER = re.compile(r"mk\d{7}x")


def _mark(value: Any, values: dict[str, str]) -> Any:
    if isinstance(value, str):
        if not value:
            return value
        marker = f"mk{len(values):07d}x"
        values[marker] = value
        return marker
    if isinstance(value, dict):
        return {k: _mark(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [_mark(v, values) for v in value]
    if isinstance(value, tuple):
        return tuple(_mark(v, values) for v in value)
    return value


def assert_lines_come_from_templates(fabric: FabricIntent) -> int:
    """Check every rendered device of `fabric`; returns the number of lines checked."""
    checked = 0
    for name, device in sorted(fabric.devices.items()):
        config = builder(device)
        if config is None:
            continue
        structured = config.structured_config(device, fabric)
        check_structured(structured, name)
        real = config.render(structured)
        values: dict[str, str] = {}
        marked = config.render(_mark(structured, values))
        real_lines, marked_lines = real.splitlines(), marked.splitlines()
        assert len(real_lines) == len(marked_lines), f"{name}: a value changed the number of lines"
        for line_no, (got, template) in enumerate(zip(real_lines, marked_lines, strict=True), 1):
            rebuilt = _MARKER.sub(lambda m, known=values: known[m.group()], template)
            assert got == rebuilt, f"{name} line {line_no}: {got!r} is not the template line {template!r}"
        checked += len(real_lines)
    return checked
