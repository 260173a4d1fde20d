"""RDMA reachability between GPU NICs: jumbo DF ping at the RoCE DSCP, then an RDMA write bandwidth test."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms.state import DeviceState
from nr_run.validators.base import Check, CheckOptions, Finding, Where, register
from nr_run.validators.probes import Probe, RdmaPairs
from nr_run.validators.rdma import AUTO_ALL_MAX_PAIRS, Pair, pairs_from, path_rate_mbps


class RdmaOptions(CheckOptions):
    pattern: Literal["auto", "all", "cover", "same_rail", "cross_rail", "ring", "mesh"] = Field(
        "auto", description="NIC pairs to probe: auto = every pair (ping; bandwidth on a ring) on sites with "
                            f"at most {AUTO_ALL_MAX_PAIRS} NIC pairs, else cover (every RTSW-CTSW path class "
                            "and every rail, about RTSWs x (1 + uplinks) pairs; docs/json-output.md)")
    max_pairs: int = Field(64, ge=1, le=4096, description="cap on the NIC pairs (same_rail, cross_rail, ring, mesh)")
    bw_fraction: float = Field(0.9, gt=0, le=1, description="bandwidth needed, as a fraction of the lower line rate "
                                                            "of the pair's two NICs")
    bandwidth: bool = Field(True, description="run the bandwidth test after the ping")
    seconds: int = Field(2, ge=1, le=600, description="duration of each bandwidth test")
    server_wait_s: float = Field(0.5, ge=0, le=60, description="time the bandwidth server gets to listen")
    base_port: int = Field(18515, ge=1024, le=65000, description="first TCP port of the bandwidth tests")


@register
class RdmaCheck(Check):
    name = "rdma"
    tags = ("roce", "reachability")
    description = ("Ping with DF at the RoCE DSCP and the RoCE frame size of the path, then RDMA write bandwidth >= "
                   "fraction x line rate, per NIC pair")
    requires = ("rdma",)
    roles = ("gpu",)
    Options = RdmaOptions
    options: RdmaOptions

    def probes(self) -> list[Probe]:
        o = self.options
        return [RdmaPairs(o.pattern, o.max_pairs, o.bandwidth, o.seconds, o.server_wait_s, o.base_port)]

    def evaluate(self, intent: DeviceIntent, state: DeviceState, fabric: FabricIntent,
                 states: dict[str, DeviceState]) -> list[Finding]:
        probes = {(p.src_nic, p.dst_device, p.dst_nic): p for p in state.rdma}
        speed = {n.name: n.speed_mbps for n in intent.nics}

        def line_rate(pair: Pair) -> float:
            """Gb/s the pair can carry at most: the slower of its two NICs and of the fabric links between them
            (an oversubscribed site may run 400G NICs over 100G uplinks)."""
            far = fabric.devices.get(pair.dst_device)
            dst = next((n.speed_mbps for n in far.nics if n.name == pair.dst_nic), 0) if far else 0
            nics = min(speed.get(pair.src_nic, 0), dst or speed.get(pair.src_nic, 0))
            return min(nics, path_rate_mbps(fabric, pair) or nics) / 1000

        out: list[Finding] = []
        for pair in pairs_from(fabric, intent.name, self.options.pattern, self.options.max_pairs):
            target = f"{pair.src_nic} -> {pair.dst_device}:{pair.dst_nic} ({pair.dst_ip})"
            at = Where(pair.src_nic, pair.dst_device, pair.dst_nic)
            p = probes.get((pair.src_nic, pair.dst_device, pair.dst_nic))
            if p is None or p.ping_ok is None:
                out.append(self.fail(intent.name, target, "probed", "not probed", "probe did not run", where=at))
                continue
            if not p.ping_ok:
                out.append(self.fail(intent.name, target, "jumbo DF ping at RoCE DSCP answered", p.ping_detail,
                                     "unreachable or MTU too small on the path: check NIC MTU, port MTU, routes",
                                     where=at))
                continue
            if not self.options.bandwidth or not pair.bandwidth:
                out.append(self.ok(intent.name, target, "jumbo DF ping answered", p.ping_detail, at))
                continue
            rate = line_rate(pair)
            need = rate * self.options.bw_fraction
            exp = f">= {need:g} Gb/s (of {rate:g} Gb/s line rate)"
            if p.bw_gbps is not None and (p.bw_gbps > rate or p.bw_gbps < 0):
                out.append(self.fail(intent.name, target, exp, f"{p.bw_gbps} Gb/s",
                                     f"impossible: the NICs run at {rate:g} Gb/s; the measurement is broken (perftest "
                                     "output, NIC speed or the intended speed is wrong)", where=at,
                                     kind="rdma-bw-impossible", value=p.bw_gbps))
                continue
            if p.bw_gbps is None or p.bw_gbps < need:
                got = f"{p.bw_gbps} Gb/s" if p.bw_gbps is not None else p.bw_detail
                out.append(self.fail(intent.name, target, exp, got,
                                     "RDMA write below line rate: check PFC/ECN on the path and NIC settings",
                                     where=at))
            else:
                out.append(self.ok(intent.name, target, exp, f"{p.bw_gbps} Gb/s", at))
        return out
