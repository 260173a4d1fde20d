"""The analyses `nr-run analyze` runs, in report order: name -> "module:function" (imported when run)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nr_run.analysis.options import AnalysisOptions
    from nr_run.analysis.result import AnalysisResult
    from nr_run.intent.models import FabricIntent

Analysis = Callable[["FabricIntent", "AnalysisOptions"], "AnalysisResult"]

ANALYSES: dict[str, str] = {
    "lossless": "nr_run.analysis.lossless:analyse",
    "buffers": "nr_run.analysis.buffers:analyse",
    "deadlock": "nr_run.analysis.deadlock:analyse",
    "ecmp": "nr_run.analysis.ecmp:analyse",
    "capacity": "nr_run.analysis.capacity:analyse",
    "power": "nr_run.analysis.power:analyse",
}


def load(name: str) -> Analysis:
    module, _, func = ANALYSES[name].partition(":")
    analyse: Analysis = getattr(importlib.import_module(module), func)
    return analyse
