"""How many examples a hypothesis property draws: the full corpus in CI (.ci/run sets NR_RUN_FULL_CORPUS=1),
a tenth of it (at least 10) in the default local run, which must stay within minutes. The property is the
same either way; only the number of drawn examples differs."""

from __future__ import annotations

import os


def examples(full: int) -> int:
    return full if os.environ.get("NR_RUN_FULL_CORPUS") == "1" else max(10, full // 10)
