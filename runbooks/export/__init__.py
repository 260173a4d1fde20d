"""`nr-run export KIND`: files a scheduler or a library reads, written from the compiled intent.

One module per kind; EXPORTERS maps a kind to "module:function" (imported when asked for), the function takes
the FabricIntent and returns {file name: text}. Adding a kind is one module and one line here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # the CLI reads EXPORTERS to build its parser: nothing heavy at import
    from nr_run.intent.models import FabricIntent

Exporter = Callable[["FabricIntent"], dict[str, str]]

EXPORTERS: dict[str, str] = {
    "slurm": "nr_run.runbooks.export.slurm:export_slurm",
    "k8s-labels": "nr_run.runbooks.export.k8s:export_k8s_labels",
    "nccl": "nr_run.runbooks.export.nccl:export_nccl",
}


def exporter(kind: str) -> Exporter:
    """The export function of `kind`; ValueError naming the kinds there are."""
    target = EXPORTERS.get(kind)
    if target is None:
        raise ValueError(f"unknown export {kind!r}; choose from {', '.join(sorted(EXPORTERS))}")
    module, _, name = target.partition(":")
    found: Exporter = getattr(importlib.import_module(module), name)
    return found
