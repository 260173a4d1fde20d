"""`nr-run export nccl`: the NCCL / UCX environment that matches a site's intent, so a job's RDMA traffic uses the
class the fabric was built for. Written as `nccl.env` (`export NAME=value` lines, each after a comment saying
where its value comes from): source it in a job's environment or a Slurm TaskProlog.

  NCCL_IB_TC / UCX_IB_TRAFFIC_CLASS   the RoCE traffic class byte: the NICs' RDMA CM default ToS (RoCE DSCP << 2,
                                      ECT(0) where DCQCN runs), what nr-run configures in rdma_cm configfs
  NCCL_IB_GID_INDEX / UCX_IB_GID_INDEX  3: RoCEv2 over the NIC's IPv4 address on mlx5 (GID 0/1 are RoCEv1/v2 of
                                      the link-local IPv6 address, 2/3 of the first IPv4 one)
  NCCL_IB_ROCE_VERSION_NUM, NCCL_IB_ADDR_FAMILY  RoCEv2 over IPv4, for NCCL releases that pick the GID themselves
  NCCL_IB_QPS_PER_CONNECTION          the QPs per connection the ECMP analysis needs (alltoall over the site's
                                      ECMP groups, the analysis' imbalance target), at least 1
Sources: NCCL environment variables (docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html), UCX
configuration (`ucx_info -c`: UCX_IB_TRAFFIC_CLASS, UCX_IB_GID_INDEX).
"""

from __future__ import annotations

from dataclasses import dataclass

from nr_run.analysis.ecmp import analyse as ecmp_analyse
from nr_run.analysis.options import AnalysisOptions
from nr_run.intent.models import FabricIntent

ROCE_V2_IPV4_GID_INDEX = 3


@dataclass(frozen=True)
class EnvVar:
    name: str
    value: str
    why: str


def qps_needed(fabric: FabricIntent, pattern: str = "alltoall") -> int:
    result = ecmp_analyse(fabric, AnalysisOptions(pattern=pattern))   # type: ignore[arg-type]
    needed = result.summary.get("qps_needed")
    return int(needed) if needed else 1


def nccl_environment(fabric: FabricIntent, pattern: str = "alltoall") -> list[EnvVar]:
    """The variables, in a stable order; ValueError for a site without a GPU server's NIC intent."""
    nics = [n for d in sorted(fabric.servers(), key=lambda d: d.name) for n in d.nics if n.qos is not None]
    if not nics:
        raise ValueError(f"site {fabric.site} has no GPU server NICs: nothing to export")
    qos = nics[0].qos
    assert qos is not None
    tc = str(qos.roce_tos)
    qps = qps_needed(fabric, pattern)
    cc = "DCQCN: ECT(0) set" if qos.congestion_control == "dcqcn" else "PFC-only: no ECN bits"
    tc_why = f"RoCE DSCP {qos.roce_dscp} << 2 ({cc}), priority {qos.roce_priority}, the NICs' RDMA CM ToS"
    gid = str(ROCE_V2_IPV4_GID_INDEX)
    return [
        EnvVar("NCCL_IB_TC", tc, tc_why),
        EnvVar("NCCL_IB_GID_INDEX", gid, "RoCEv2 GID of the NIC's IPv4 address (mlx5)"),
        EnvVar("NCCL_IB_ROCE_VERSION_NUM", "2", "RoCEv2"),
        EnvVar("NCCL_IB_ADDR_FAMILY", "AF_INET", "the rail NICs are IPv4-addressed"),
        EnvVar("NCCL_IB_QPS_PER_CONNECTION", str(qps), f"ECMP analysis ({pattern}): QPs per connection that keep "
                                                        "the uplink imbalance under its target"),
        EnvVar("UCX_IB_TRAFFIC_CLASS", tc, tc_why),
        EnvVar("UCX_IB_GID_INDEX", gid, "RoCEv2 GID of the NIC's IPv4 address (mlx5)"),
    ]


def as_shell(env: list[EnvVar]) -> str:
    """`export NAME=value` lines (values are digits or fixed words: nothing to quote), each after its reason."""
    return "".join(f"# {v.why}\nexport {v.name}={v.value}\n" for v in env)


def export_nccl(fabric: FabricIntent) -> dict[str, str]:
    """The export kind `nccl`: {"nccl.env": the environment}."""
    return {"nccl.env": f"# NCCL/UCX environment of site {fabric.site} (nr-run export nccl)\n"
                        + as_shell(nccl_environment(fabric))}
