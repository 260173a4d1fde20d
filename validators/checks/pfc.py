"""PFC on exactly the lossless priorities, agreed by both ends of every link; watchdog; no storm."""

from __future__ import annotations

from nr_run.intent.models import DeviceIntent, FabricIntent, Interface, Watchdog
from nr_run.platforms.state import DeviceState, WatchdogState
from nr_run.validators.base import Check, Finding, Where, on_port, register
from nr_run.validators.helpers import fmt_list, lossless


def _intended_action(action: str) -> str:
    """The intent's watchdog action in the collectors' neutral terms: "alert" and "forward" both keep forwarding."""
    return "drop" if action == "drop" else "forward"


@register
class PfcCheck(Check):
    name = "pfc"
    tags = ("roce", "pfc", "qos", "stage")
    description = "PFC exactly on lossless priorities, both link ends agree, watchdog as intended, no storm"
    requires = ("pfc",)
    peer_fields = ("pfc_priorities", "nics")  # the far end's priorities, a switch or a NIC

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        out: list[Finding] = []
        wd = intent.roce.watchdog
        for itf in intent.interfaces:
            want = lossless(itf, intent)
            got = state.pfc_priorities.get(itf.name)
            at = on_port(itf)
            if got is None or sorted(got) != want:
                out.append(self.fail(intent.name, itf.name, f"pfc priorities {fmt_list(want)}",
                                     f"pfc priorities {fmt_list(got)}",
                                     f"enable PFC no-drop on priority {fmt_list(want)} only on {itf.name}", where=at,
                                     kind="pfc-priorities"))
            else:
                out.append(self.ok(intent.name, itf.name, f"pfc priorities {fmt_list(want)}", where=at,
                                   kind="pfc-priorities"))
            out += self._agree(intent.name, itf, got, states)
            # no PFC on the port (a lossy aggregation link): nothing for a watchdog to watch
            out += self._watchdog(intent.name, itf, wd if want else wd.model_copy(update={"enabled": False}),
                                  state.watchdog.get(itf.name))
        by_port = {i.name: on_port(i) for i in intent.interfaces}
        for s in state.storms:
            target = f"{s.port} priority {s.priority}"
            at = by_port.get(s.port, Where(s.port))
            if s.stormed:
                out.append(self.fail(intent.name, target, "no PFC storm", "storm detected (queue stormed)",
                                     f"a device behind {s.port} keeps sending PFC pause: find the stuck receiver",
                                     where=at, kind="pfc-storm", index=s.priority))
            elif s.port in by_port:
                out.append(self.ok(intent.name, target, "no PFC storm", "operational", at, kind="pfc-storm",
                                   index=s.priority))
        return out

    def _agree(self, device: str, itf: Interface, got: list[int] | None,
               states: dict[str, DeviceState]) -> list[Finding]:
        """Compare with the far end once per link: the switch end of host links, the end that sorts first of fabric links."""
        peer = states.get(itf.peer_device)
        if peer is None or (itf.role == "fabric" and (itf.peer_device, itf.peer_port) < (device, itf.name)):
            return []
        far: list[int] | None
        if "pfc" in peer.sections:
            far = peer.pfc_priorities.get(itf.peer_port)
        elif "nics" in peer.sections and itf.peer_port in peer.nics:
            far = peer.nics[itf.peer_port].pfc_priorities
        else:
            return []
        target = f"{itf.name} <-> {itf.peer_device}:{itf.peer_port}"
        near_s, far_s = fmt_list(sorted(got) if got is not None else None), fmt_list(sorted(far) if far is not None else None)
        at = on_port(itf)
        if near_s != far_s:
            return [self.fail(device, target, "both ends same pfc priorities",
                              f"{device}:{itf.name}={near_s} {itf.peer_device}:{itf.peer_port}={far_s}",
                              "PFC mismatch across the link: pause frames for one priority are ignored by the peer",
                              where=at, kind="pfc-agree")]
        return [self.ok(device, target, f"both ends pfc {near_s}", where=at, kind="pfc-agree")]

    def _watchdog(self, device: str, itf: Interface, wd: Watchdog, obs: WatchdogState | None) -> list[Finding]:
        port, at = itf.name, on_port(itf)
        target = f"{port} watchdog"
        k = "pfc-watchdog"
        if not wd.enabled:
            return [self.ok(device, target, "watchdog off", where=at, kind=k)] if obs is None or not obs.enabled else [
                self.fail(device, target, "watchdog off", "watchdog on", "disable the PFC watchdog", "warning", at,
                          kind=k)]
        exp = f"on, {wd.action}, detect {wd.detection_ms} ms, restore {wd.restoration_ms} ms"
        if obs is None or not obs.enabled:
            return [self.fail(device, target, exp, "off", f"enable the PFC watchdog on {port}", where=at, kind=k)]
        got = f"on, {obs.action}, detect {obs.detection_ms} ms, restore {obs.restoration_ms} ms"
        same = (obs.action == _intended_action(wd.action)
                and obs.detection_ms == wd.detection_ms and obs.restoration_ms == wd.restoration_ms)
        return [self.ok(device, target, exp, got, at, kind=k)] if same else [
            self.fail(device, target, exp, got, f"set watchdog timers/action on {port}", where=at, kind=k)]
