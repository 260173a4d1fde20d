"""ECN marking on the lossless queue, strict CNP queue, DSCP->TC map and DSCP trust."""

from __future__ import annotations

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms.state import DeviceState
from nr_run.validators.base import Check, Finding, on_port, register


def _map_diff(want: dict[int, int], got: dict[int, int]) -> tuple[str, str]:
    keys = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
    return (", ".join(f"dscp {k}->tc {want.get(k, '-')}" for k in keys),
            ", ".join(f"dscp {k}->tc {got.get(k, '-')}" for k in keys))


@register
class EcnCheck(Check):
    name = "ecn"
    tags = ("roce", "ecn", "qos", "stage")
    description = "Lossless queue ECN thresholds/probability, CNP queue strict, DSCP->TC map and DSCP trust"
    requires = ("qos",)

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        roce = intent.roce
        ecn = roce.ecn
        out: list[Finding] = []
        for itf in intent.interfaces:
            port = itf.name
            at = on_port(itf)
            # ECN on the lossless queue
            obs = state.ecn.get((port, ecn.queue))
            target = f"{port} queue {ecn.queue}"
            if ecn.enabled:
                exp = f"ecn min {ecn.min_bytes} B max {ecn.max_bytes} B prob {ecn.max_mark_probability}%"
                if obs is None or not obs.enabled:
                    out.append(self.fail(intent.name, target, exp, "ecn off",
                                         f"enable ECN marking on queue {ecn.queue} of {port}", where=at,
                                         kind="ecn-thresholds", index=ecn.queue))
                else:
                    got = f"ecn min {obs.min_bytes} B max {obs.max_bytes} B prob {obs.max_mark_probability}%"
                    if (obs.min_bytes, obs.max_bytes, obs.max_mark_probability) != \
                            (ecn.min_bytes, ecn.max_bytes, ecn.max_mark_probability):
                        out.append(self.fail(intent.name, target, exp, got, "reapply the ECN thresholds of the profile",
                                             where=at, kind="ecn-thresholds", index=ecn.queue))
                    else:
                        out.append(self.ok(intent.name, target, exp, where=at, kind="ecn-thresholds", index=ecn.queue))
            qos = state.qos.get(port)
            if qos is None:
                out.append(self.fail(intent.name, port, "qos state", "absent", "port has no QoS configuration", where=at,
                                     kind="qos-state"))
                continue
            # CNP queue strict
            sched = qos.schedulers.get(roce.cnp_queue, "unknown")
            tq = f"{port} queue {roce.cnp_queue}"
            q = roce.cnp_queue
            out.append(self.ok(intent.name, tq, "cnp queue strict", where=at, kind="cnp-strict", index=q)
                       if sched == "strict" else
                       self.fail(intent.name, tq, "cnp queue strict", f"cnp queue {sched}",
                                 f"make queue {q} strict priority (CNPs must not wait)", where=at, kind="cnp-strict",
                                 index=q))
            # Trust
            out.append(self.ok(intent.name, f"{port} trust", f"trust {roce.trust}", where=at, kind="trust")
                       if qos.trust == roce.trust else
                       self.fail(intent.name, f"{port} trust", f"trust {roce.trust}", f"trust {qos.trust}",
                                 f"set qos trust {roce.trust} on {port}", where=at, kind="trust"))
            # DSCP->TC: the full intended map when the device reports its complete map, else the overrides
            want = roce.dscp_to_tc if qos.dscp_map == "complete" else roce.dscp_overrides
            if qos.dscp_to_tc != dict(want):
                exp, got = _map_diff(dict(want), qos.dscp_to_tc)
                out.append(self.fail(intent.name, f"{port} dscp map", exp, got, "restore the DSCP->TC map",
                                     where=at, kind="dscp-map"))
            else:
                out.append(self.ok(intent.name, f"{port} dscp map", "dscp->tc as intended", where=at, kind="dscp-map"))
        return out
