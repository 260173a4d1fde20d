"""What every command shares: exit codes, the usage error and JSON output."""

from __future__ import annotations

import json
import sys
from typing import Any

EXIT_OK, EXIT_FAIL, EXIT_DIFF, EXIT_INVALID = 0, 1, 2, 3


class UsageError(Exception):
    """Bad combination of options: exit 3."""


def emit_json(payload: dict[str, Any]) -> None:
    json.dump(payload, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
