"""The analysis options' bounds and choices, shared by AnalysisOptions and the command line (no pydantic here:
`nr-run --help` reads them without building the model)."""

from __future__ import annotations

TYPE_CHECKING = False    # typing's import is a tenth of a start-up: the model needs it, the help text does not

PATTERNS: tuple[str, ...] = ("ring", "alltoall", "pairs")
if TYPE_CHECKING:
    from typing import Literal

    Pattern = Literal["ring", "alltoall", "pairs"]
else:
    def __getattr__(name: str) -> object:
        if name == "Pattern":
            from typing import Literal

            return Literal[PATTERNS]
        raise AttributeError(name)
FAILURES_RANGE = (0, 3)        # link or switch failures enumerated at once (--failures)
QPS_RANGE = (1, 256)           # RoCE QPs per connection (--qps)
