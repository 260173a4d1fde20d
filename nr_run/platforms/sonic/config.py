"""Sonic structured config and rendering (SCAFFOLD: delegates to the old renderer until the builder lands)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nr_run.intent.errors import Finding
from nr_run.intent.models import DeviceIntent, FabricIntent


class SonicConfig:
    suffix = ".json"

    def structured_config(self, device: DeviceIntent, fabric: FabricIntent) -> dict[str, Any]:
        return {"intent": device}

    def render(self, structured: Mapping[str, Any]) -> str:
        from nr_run.runbooks.render import render_device

        return render_device(structured["intent"])

    def preflight(self, fabric: FabricIntent) -> list[Finding]:
        return []
