"""Buffer model in the intent (SONiC today): lossless PG with its profile on every lossless port,
headroom not below intent."""

from __future__ import annotations

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms.state import DeviceState
from nr_run.validators.base import Check, Finding, on_port, register
from nr_run.validators.helpers import lossless


@register
class BuffersCheck(Check):
    name = "buffers"
    tags = ("roce", "buffers", "qos", "stage")
    description = "Lossless PG and profile on every lossless port; xoff headroom >= intent (where the intent has buffers)"
    requires = ("buffers",)

    def applies_to(self, intent: DeviceIntent) -> bool:
        # decided by the intent (devices whose buffers nr-run configures), not by a platform name
        return super().applies_to(intent) and intent.buffers is not None

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        out: list[Finding] = []
        for itf in intent.interfaces:
            prios = lossless(itf, intent)
            if not prios or itf.headroom is None:
                continue
            hr = itf.headroom
            pgs = state.buffer_pgs.get(itf.name, [])
            at = on_port(itf)
            for pg in sorted({intent.roce.tc_to_pg.get(p, p) for p in prios}):
                target = f"{itf.name} pg {pg}"
                exp = f"lossless PG xoff >= {hr.xoff_bytes}"
                have = next((b for b in pgs if pg in b.pgs), None)
                if have is None:
                    out.append(self.fail(intent.name, target, exp, "no lossless PG",
                                         f"add a lossless PG {pg} on {itf.name} with at least {hr.xoff_bytes} B "
                                         "of xoff headroom (check PFC/cable length)", where=at))
                    continue
                got = f"{have.profile} xoff {have.xoff_bytes}"
                if have.xoff_bytes is None or have.xoff_bytes < hr.xoff_bytes:
                    out.append(self.fail(intent.name, target, exp, got,
                                         "headroom below the computed need: pause frames arrive too late, drops follow",
                                         where=at))
                else:
                    out.append(self.ok(intent.name, target, exp, got, at))
        return out
