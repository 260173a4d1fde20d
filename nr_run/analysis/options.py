"""Options shared by the analyses (typed, range-checked: they come from the command line)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from nr_run.analysis.limits import FAILURES_RANGE, QPS_RANGE, Pattern


class AnalysisOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    failures: int = Field(default=1, ge=FAILURES_RANGE[0], le=FAILURES_RANGE[1])   # K: link or switch failures
    pattern: Pattern = "alltoall"                 # collective traffic pattern for ECMP load
    qps_per_connection: int = Field(default=1, ge=QPS_RANGE[0], le=QPS_RANGE[1])
    hash_seed: int = Field(default=0, ge=0, le=2**32 - 1)
    max_imbalance: float = Field(default=1.25, gt=1.0, le=10.0)   # max/mean per-uplink load considered balanced
