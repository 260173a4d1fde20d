"""Site inventory -> one DeviceIntent per host (pure, deterministic)."""

from nr_run.intent.compile import compile_site
from nr_run.intent.errors import Finding, InventoryError
from nr_run.intent.models import DeviceIntent, FabricIntent

__all__ = ["compile_site", "DeviceIntent", "FabricIntent", "Finding", "InventoryError"]
