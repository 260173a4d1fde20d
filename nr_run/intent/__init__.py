"""Site inventory -> one DeviceIntent per host (pure, deterministic)."""

from runbooks.intent.compile import compile_site
from runbooks.intent.errors import Finding, InventoryError
from runbooks.intent.models import DeviceIntent, FabricIntent

__all__ = ["compile_site", "DeviceIntent", "FabricIntent", "Finding", "InventoryError"]
