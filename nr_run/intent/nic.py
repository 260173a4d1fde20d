"""Host end of every RoCE link: the NIC intent of a GPU server, its fabric.yaml schema and its preflight rules.

A NIC carries the same lossless design as its switch port: DSCP trust, the RoCE DSCPs on the lossless
priority, PFC on exactly the lossless priorities, the CNP's DSCP and priority, the RoCE MTU and the RDMA CM
default ToS. The site chooses its congestion control once (`nic.congestion_control`): `dcqcn` (ECN marking on
the switches, DCQCN reaction and notification points on the NICs) or `pfc-only` (receiver-paced: no ECN
marking anywhere, DCQCN off on every NIC), so a site is never half one and half the other.

DCQCN parameter names are the mlx5 sysfs names (/sys/class/net/<if>/ecn/roce_rp|roce_np/<name>); their
defaults are NVIDIA's documented firmware defaults for ConnectX-4 and later ("DCQCN CC Parameters",
https://networking-docs.nvidia.com/doca/archive/3-4-0/dcqcn-cc-parameters), so an inventory that sets none
writes the values a NIC ships with, and one that tunes a value sees the rest stay at the vendor's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from nr_run.intent.errors import Finding

if TYPE_CHECKING:
    from nr_run.intent.models import DeviceIntent, FabricIntent, Nic, Roce

CongestionControl = Literal["dcqcn", "pfc-only"]
ECT0 = 0b10          # ECN-capable transport, the ECN bits a DCQCN sender's RoCE packets carry


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReactionPoint(_Strict):
    """DCQCN reaction point (the sender's rate limiter), mlx5 roce_rp; NVIDIA's defaults."""

    rpg_time_reset: int = Field(default=300, ge=1, le=131071)          # us between rate increases
    rpg_byte_reset: int = Field(default=32767, ge=1, le=32767)         # bytes sent between rate increases
    rpg_threshold: int = Field(default=1, ge=1, le=31)                 # increase events before hyper increase
    rpg_ai_rate: int = Field(default=5, ge=1, le=400000)               # Mb/s additive increase
    rpg_hai_rate: int = Field(default=50, ge=1, le=400000)             # Mb/s hyper increase
    rpg_gd: int = Field(default=11, ge=1, le=15)                       # alpha -> rate reduction shift
    rpg_min_dec_fac: int = Field(default=50, ge=1, le=100)             # % largest single decrease
    rpg_min_rate: int = Field(default=1, ge=1, le=400000)              # Mb/s floor of a QP
    rate_to_set_on_first_cnp: int = Field(default=0, ge=0, le=400000)  # Mb/s (0: current rate)
    dce_tcp_g: int = Field(default=1019, ge=0, le=1023)                # alpha gain, fixed point /1024
    dce_tcp_rtt: int = Field(default=1, ge=1, le=131071)               # us alpha update period
    rate_reduce_monitor_period: int = Field(default=4, ge=1, le=1_000_000)   # us between rate decreases
    initial_alpha_value: int = Field(default=1023, ge=0, le=1023)


class NotificationPoint(_Strict):
    """DCQCN notification point (the receiver's CNP generator), mlx5 roce_np; the CNP's DSCP and priority
    come from the RoCE profile's `cnp`, so switch and NIC agree by construction."""

    min_time_between_cnps: int = Field(default=4, ge=0, le=4095)       # us


class DcqcnSettings(_Strict):
    rp: ReactionPoint = ReactionPoint()
    np: NotificationPoint = NotificationPoint()


class NicSettings(_Strict):
    """fabric.yaml `nic:` (every key optional)."""

    congestion_control: CongestionControl = "dcqcn"
    dcqcn: DcqcnSettings = DcqcnSettings()
    roce_dscp: int | None = Field(default=None, ge=0, le=63)   # the DSCP RoCE data carries (default: the
                                                               # lowest DSCP the profile maps to a lossless TC)


class NicQos(_Strict):
    """What one RoCE NIC must run (platform-neutral: the Linux plug-in turns it into dcb/sysfs/configfs)."""

    trust: Literal["dscp"]
    dscp_to_prio: dict[int, int]            # the DCB APP dscp-prio table (the profile's explicit DSCPs)
    pfc_priorities: list[int]               # PFC on exactly these
    congestion_control: CongestionControl
    ecn_priorities: list[int]               # DCQCN RP and NP enabled on these (empty at a pfc-only site)
    rp: ReactionPoint
    np: NotificationPoint
    cnp_dscp: int
    cnp_priority: int
    roce_dscp: int
    roce_priority: int
    roce_tos: int                           # RDMA CM default ToS: DSCP << 2, plus ECT(0) where DCQCN runs


def roce_dscp(roce: Roce, chosen: int | None = None) -> int:
    """The DSCP of RoCE data: the chosen one, else the lowest explicit DSCP the profile puts on a lossless TC."""
    if chosen is not None:
        return chosen
    lossless = [d for d, tc in sorted(roce.dscp_overrides.items()) if tc in roce.lossless_priorities]
    return lossless[0] if lossless else 26


def nic_qos(settings: NicSettings, roce: Roce) -> NicQos:
    dscp = roce_dscp(roce, settings.roce_dscp)
    dcqcn = settings.congestion_control == "dcqcn"
    return NicQos(
        trust="dscp", dscp_to_prio=dict(sorted(roce.dscp_overrides.items())),
        pfc_priorities=list(roce.lossless_priorities), congestion_control=settings.congestion_control,
        ecn_priorities=list(roce.lossless_priorities) if dcqcn else [], rp=settings.dcqcn.rp, np=settings.dcqcn.np,
        cnp_dscp=roce.cnp_dscp, cnp_priority=roce.cnp_tc, roce_dscp=dscp, roce_priority=roce.dscp_to_tc[dscp],
        roce_tos=(dscp << 2) | (ECT0 if dcqcn else 0))


def check_nics(intent: FabricIntent, settings: NicSettings, fabric_file: str, hosts_file: str) -> list[Finding]:
    """Each NIC against its switch port (the rules of a switch-switch link: the same lossless priorities, plus
    the same trust and CNP marking; where RoCE's DSCP lands on each hop is the lossless proof's, as for
    switches), and the site's congestion control against every switch's ECN marking."""
    out: list[Finding] = []
    cc = settings.congestion_control
    for switch in intent.switches():
        ecn = switch.roce.ecn.enabled
        if (cc == "dcqcn") != ecn:
            want = "enable" if cc == "dcqcn" else "disable"
            out.append(Finding("error", "mixed-congestion-control", fabric_file, switch.name,
                               f"roce_profiles.{switch.roce.profile}.ecn.enabled",
                               f"nic.congestion_control is {cc} but {switch.name} has ECN marking "
                               f"{'on' if ecn else 'off'}: {want} ECN in roce_profiles.{switch.roce.profile} "
                               f"or set nic.congestion_control to {'pfc-only' if ecn else 'dcqcn'}"))
    for server in intent.servers():
        for nic in server.nics:
            out += _against_port(server, nic, intent, hosts_file)
    if settings.roce_dscp is not None:
        for server in intent.servers():
            tc = server.roce.dscp_to_tc[settings.roce_dscp]
            if tc not in server.roce.lossless_priorities:
                out.append(Finding("error", "nic-intent", fabric_file, server.name, "nic.roce_dscp",
                                   f"RoCE DSCP {settings.roce_dscp} maps to TC{tc}, not a lossless priority "
                                   f"{server.roce.lossless_priorities} of profile {server.roce.profile}"))
                break
    return out


def _against_port(server: DeviceIntent, nic: Nic, intent: FabricIntent, hosts_file: str) -> list[Finding]:
    switch = intent.devices.get(nic.peer_device)
    qos = nic.qos
    if switch is None or qos is None:
        return []
    where = f"{nic.name} -> {switch.name}:{nic.peer_port}"
    out = []

    def refuse(what: str) -> None:
        out.append(Finding("error", "nic-port-mismatch", hosts_file, server.name, "data.roce_profile",
                           f"NIC {where}: {what}"))

    if qos.pfc_priorities != switch.roce.lossless_priorities:
        refuse(f"PFC priorities {qos.pfc_priorities} differ from the switch port's lossless priorities "
               f"{switch.roce.lossless_priorities}")
    if qos.trust != switch.roce.trust:
        refuse(f"trust {qos.trust} differs from the switch's {switch.roce.trust}")
    if (qos.cnp_dscp, qos.cnp_priority) != (switch.roce.cnp_dscp, switch.roce.cnp_tc):
        refuse(f"CNP DSCP {qos.cnp_dscp} priority {qos.cnp_priority} differ from the switch's "
               f"DSCP {switch.roce.cnp_dscp} TC{switch.roce.cnp_tc}")
    return out
