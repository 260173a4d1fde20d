"""The analysis options' bounds and choices, shared by AnalysisOptions and the command line (no pydantic here:
`nr-run --help` reads them without building the model)."""

from __future__ import annotations

from typing import Literal, get_args

Pattern = Literal["ring", "alltoall", "pairs"]
PATTERNS: tuple[str, ...] = get_args(Pattern)
FAILURES_RANGE = (0, 3)        # link or switch failures enumerated at once (--failures)
QPS_RANGE = (1, 256)           # RoCE QPs per connection (--qps)
