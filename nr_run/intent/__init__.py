"""Site inventory -> one DeviceIntent per host (pure, deterministic).

The names below load on first use, so importing a light submodule (e.g. `nr_run.intent.names` for the
CLI's argument checks) does not import the compiler, pydantic models and YAML loader with it.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False   # no typing import for the CLI's argument checks (a tenth of `nr-run --help`)
if TYPE_CHECKING:
    from typing import Any

    from nr_run.intent.compile import compile_site
    from nr_run.intent.errors import Finding, InventoryError
    from nr_run.intent.models import DeviceIntent, FabricIntent

__all__ = ["compile_site", "DeviceIntent", "FabricIntent", "Finding", "InventoryError"]

_HOME = {"compile_site": "compile", "Finding": "errors", "InventoryError": "errors",
         "DeviceIntent": "models", "FabricIntent": "models"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
