"""GPU server RoCE NICs: what each NIC runs against its intent, and against its switch port (both ends of a link).

`host` judges one NIC from its collected state: up, address, MTU, DSCP trust, the DSCP -> priority table, PFC on
exactly the lossless priorities, DCQCN reaction/notification points per priority (on the lossless priorities at
a DCQCN site, off on every priority at a PFC-only one: a NIC that still sends CNPs or reacts to them there is the
one NIC left on DCQCN), the CNP marking and DCQCN parameters, and the RDMA CM default ToS. One finding per knob
(kind `nic-<knob>`), so a NIC with three wrong knobs gives three lines naming server, NIC and knob.
`host-link` compares the NIC with what its switch port runs: ECN marking on the port's RoCE queue exactly where
the NIC runs DCQCN, and an MTU the port carries (PFC on both ends is the pfc check's, each end's DSCP map the
ecn and host checks'). A NIC or port whose state was not collected is left to the not-collected findings.
"""

from __future__ import annotations

from typing import Any

from nr_run.intent.models import DeviceIntent, FabricIntent, Nic
from nr_run.platforms.state import DeviceState, NicState
from nr_run.validators.base import Check, Finding, on_port, register
from nr_run.validators.helpers import fmt_list


def _map(pairs: dict[int, int] | None) -> str:
    return "none" if not pairs else " ".join(f"{d}:{p}" for d, p in sorted(pairs.items()))


def _prios(prios: list[int] | None) -> str:
    return "unreadable" if prios is None else fmt_list(sorted(prios)) if prios else "none"


def nic_knobs(nic: Nic, obs: NicState) -> list[tuple[str, str, str, str]]:
    """(kind, expected, observed, fix) of every knob of `nic` that differs from its intent."""
    out: list[tuple[str, str, str, str]] = []
    qos = nic.qos
    name = nic.name
    if not obs.oper_up:
        out.append(("nic-up", "up", "down", f"ip link set dev {name} up; check the cable to {nic.peer_device}"))
    if nic.address not in obs.addresses:
        out.append(("nic-address", f"address {nic.address}", "address " + (",".join(obs.addresses) or "none"),
                    f"ip addr add {nic.address} dev {name}"))
    if obs.mtu != nic.mtu:
        out.append(("nic-mtu", f"mtu {nic.mtu}", f"mtu {obs.mtu}", f"ip link set dev {name} mtu {nic.mtu}"))
    pfc = sorted(qos.pfc_priorities) if qos else sorted(nic.lossless_priorities)
    if obs.pfc_priorities is None or sorted(obs.pfc_priorities) != pfc:
        out.append(("nic-pfc", f"pfc {fmt_list(pfc)}", f"pfc {_prios(obs.pfc_priorities)}",
                    f"dcb pfc set dev {name} prio-pfc " + " ".join(f"{p}:{'on' if p in pfc else 'off'}"
                                                                   for p in range(8))))
    trust = qos.trust if qos else nic.trust
    if obs.trust != trust:
        out.append(("nic-trust", f"trust {trust}", f"trust {obs.trust or 'unreadable'}",
                    f"dcb apptrust set dev {name} order {trust}"))
    if qos is None:
        return out
    if obs.dscp_to_prio is not None and obs.dscp_to_prio != qos.dscp_to_prio or \
            obs.dscp_to_prio is None and "dscp-prio" in obs.unreadable:
        out.append(("nic-dscp-map", f"dscp-prio {_map(qos.dscp_to_prio)}", f"dscp-prio {_map(obs.dscp_to_prio)}",
                    f"dcb app flush dev {name} dscp-prio; dcb app add dev {name} dscp-prio {_map(qos.dscp_to_prio)}"))
    if "dcqcn" in obs.unreadable:
        out.append(("nic-dcqcn", f"DCQCN knobs ({qos.congestion_control})", obs.unreadable["dcqcn"],
                    "a ConnectX (mlx5) NIC exposes /sys/class/net/<if>/ecn; check the driver and firmware"))
    else:
        want = sorted(qos.ecn_priorities)
        for point, got in (("rp", obs.ecn_rp), ("np", obs.ecn_np)):
            if got is None or sorted(got) != want:
                what = "reaction" if point == "rp" else "notification"
                site = "DCQCN site" if want else "PFC-only site: DCQCN off on every priority"
                out.append((f"nic-dcqcn-{point}", f"DCQCN {what} point on {_prios(want)} ({site})",
                            f"on {_prios(got)}", " ; ".join(
                                f"echo {int(p in want)} > /sys/class/net/{name}/ecn/roce_{point}/enable/{p}"
                                for p in range(8) if (p in want) != (p in (got or [])))))
        if want:
            expected = {**qos.rp.model_dump(), "min_time_between_cnps": qos.np.min_time_between_cnps,
                        "cnp_dscp": qos.cnp_dscp, "cnp_802p_prio": qos.cnp_priority}
            wrong = sorted(k for k, v in expected.items() if obs.dcqcn.get(k) != v)
            if wrong:
                out.append(("nic-dcqcn-params", " ".join(f"{k}={expected[k]}" for k in wrong),
                            " ".join(f"{k}={obs.dcqcn.get(k, 'unreadable')}" for k in wrong),
                            f"echo the values into /sys/class/net/{name}/ecn/roce_rp|roce_np/<name>"))
    if obs.roce_tos != qos.roce_tos:
        tos = str(obs.roce_tos) if obs.roce_tos is not None else obs.unreadable.get("tos", "unreadable")
        out.append(("nic-tos", f"RDMA CM ToS {qos.roce_tos}", f"RDMA CM ToS {tos}",
                    f"echo {qos.roce_tos} > /sys/kernel/config/rdma_cm/<dev>/ports/1/default_roce_tos"))
    return out


@register
class HostNicCheck(Check):
    name = "host"
    tags = ("roce", "host")
    description = ("Every RoCE NIC up with its address, MTU, DSCP trust and map, PFC on the lossless priorities, "
                   "DCQCN (or PFC-only), CNP marking and RDMA CM ToS as the intent says")
    requires = ("nics",)
    roles = ("gpu",)

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        out: list[Finding] = []
        for nic in intent.nics:
            obs = state.nics.get(nic.name)
            at = on_port(nic)
            if obs is None:
                out.append(self.fail(intent.name, nic.name, "NIC present", "absent", "driver/firmware or naming",
                                     where=at, kind="nic-present"))
                continue
            bad = nic_knobs(nic, obs)
            for kind, exp, got, hint in bad:
                out.append(self.fail(intent.name, f"{nic.name} {kind.removeprefix('nic-')}", exp, got, hint,
                                     where=at, kind=kind))
            if not bad:
                qos = nic.qos
                cc = f" {qos.congestion_control} tos {qos.roce_tos}" if qos else ""
                out.append(self.ok(intent.name, nic.name, f"up {nic.address} mtu {nic.mtu} pfc "
                                                          f"{fmt_list(sorted(nic.lossless_priorities))} trust "
                                                          f"{nic.trust}{cc}", where=at))
        return out


@register
class HostLinkCheck(Check):
    name = "host-link"
    tags = ("roce", "host")
    description = "Both ends of every rail link agree: ECN marking where the NIC runs DCQCN, MTU fits"
    requires = ("nics",)
    peer_fields = ("ecn", "interfaces")       # the switch port's ECN marking and MTU
    roles = ("gpu",)

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        out: list[Finding] = []
        for nic in intent.nics:
            obs = state.nics.get(nic.name)
            port_state = states.get(nic.peer_device)
            if obs is None or port_state is None:
                continue
            at = on_port(nic)
            far = f"{nic.peer_device}:{nic.peer_port}"
            problems: list[tuple[str, str, Any, Any, str]] = []
            # PFC on both ends is the pfc check's (it reads the NIC from the switch end of the link)
            qos = nic.qos
            if qos is not None and qos.roce_priority in (qos.pfc_priorities or []):
                queue = qos.roce_priority
                ecn = port_state.ecn.get((nic.peer_port, queue)) if "qos" in port_state.sections else None
                if ecn is not None and obs.ecn_np is not None and ecn.enabled != (queue in obs.ecn_np):
                    problems.append(("link-ecn", f"ECN {far} queue {queue} / DCQCN {nic.name}",
                                     f"switch marks ECN = NIC runs DCQCN on priority {queue}",
                                     f"{far} marking {'on' if ecn.enabled else 'off'}, {nic.name} DCQCN "
                                     f"{'on' if queue in obs.ecn_np else 'off'}",
                                     "marks nobody reacts to, or a NIC waiting for marks that never come: "
                                     "deploy both ends from one congestion_control"))
            port = port_state.interfaces.get(nic.peer_port) if "interfaces" in port_state.sections else None
            if port is not None and port.mtu is not None and obs.mtu is not None and obs.mtu > port.mtu:
                problems.append(("link-mtu", f"MTU {nic.name} <= {far}", f"mtu <= {port.mtu}", f"mtu {obs.mtu}",
                                 "frames above the switch port's MTU are dropped: lower the NIC's MTU"))
            for kind, target, exp, got, hint in problems:
                out.append(self.fail(intent.name, target, exp, got, hint, where=at, kind=kind))
            if not problems:
                out.append(self.ok(intent.name, f"{nic.name} = {far}", "ECN/DCQCN and MTU agree", where=at))
        return out
