"""RDMA reachability between GPU NICs: jumbo DF ping at the RoCE DSCP, then ib_write_bw bandwidth."""

from __future__ import annotations

from nr_run.validators.base import Check, Finding, register
from nr_run.validators.rdma import plan_pairs


@register
class RdmaCheck(Check):
    name = "rdma"
    tags = ("roce", "reachability")
    description = "Jumbo ping with DF at the RoCE DSCP, then ib_write_bw >= threshold x line rate, per NIC pair"
    requires = ("rdma",)
    roles = ("gpu",)
    # pattern: same_rail | cross_rail | ring | mesh; max_pairs caps the mesh; bw_fraction of the NIC line rate.
    defaults = {"pattern": "ring", "max_pairs": 64, "bw_fraction": 0.9, "bandwidth": True, "seconds": 2}

    def evaluate(self, intent, state, fabric, states) -> list[Finding]:
        probes = {(p.src_nic, p.dst_device, p.dst_nic): p for p in state.rdma}
        speed = {n.name: n.speed_mbps for n in intent.nics}
        out: list[Finding] = []
        for pair in plan_pairs(fabric, self.options["pattern"], self.options["max_pairs"]):
            if pair.src_device != intent.name:
                continue
            target = f"{pair.src_nic} -> {pair.dst_device}:{pair.dst_nic} ({pair.dst_ip})"
            p = probes.get((pair.src_nic, pair.dst_device, pair.dst_nic))
            if p is None or p.ping_ok is None:
                out.append(self.fail(intent.name, target, "probed", "not probed", "probe did not run"))
                continue
            if not p.ping_ok:
                out.append(self.fail(intent.name, target, "jumbo DF ping at RoCE DSCP answered", p.ping_detail,
                                     "unreachable or MTU too small on the path: check NIC MTU, port MTU, routes"))
                continue
            if not self.options["bandwidth"]:
                out.append(self.ok(intent.name, target, "jumbo DF ping answered", p.ping_detail))
                continue
            need = speed.get(pair.src_nic, 0) / 1000 * self.options["bw_fraction"]
            exp = f">= {need:g} Gb/s"
            if p.bw_gbps is None or p.bw_gbps < need:
                got = f"{p.bw_gbps} Gb/s" if p.bw_gbps is not None else p.bw_detail
                out.append(self.fail(intent.name, target, exp, got,
                                     "RDMA write below line rate: check PFC/ECN on the path and NIC settings"))
            else:
                out.append(self.ok(intent.name, target, exp, f"{p.bw_gbps} Gb/s"))
        return out
