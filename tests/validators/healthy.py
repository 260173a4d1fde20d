"""Build the normalized state a healthy dc1 would report, straight from the intent (for evaluate() tests)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from nr_run.intent.models import DeviceIntent, FabricIntent, Nic
from nr_run.platforms.state import (
    BgpPeerState,
    BufferPgState,
    CounterSample,
    DeviceState,
    EcnQueueState,
    InterfaceState,
    LldpNeighbor,
    NextHop,
    NicState,
    PortCounters,
    QosPortState,
    RdmaProbe,
    RouteState,
    StormState,
    WatchdogState,
)
from nr_run.validators.rdma import plan_pairs


def healthy_nic(n: Nic) -> NicState:
    """A NIC running exactly its intent."""
    st = NicState(n.name, True, n.mtu, [n.address], list(n.lossless_priorities), n.trust)
    qos = n.qos
    if qos is not None:
        st.dscp_to_prio = dict(qos.dscp_to_prio)
        st.ecn_rp, st.ecn_np = list(qos.ecn_priorities), list(qos.ecn_priorities)
        st.dcqcn = {**qos.rp.model_dump(), "min_time_between_cnps": qos.np.min_time_between_cnps,
                    "cnp_dscp": qos.cnp_dscp, "cnp_802p_prio": qos.cnp_priority}
        st.roce_tos = qos.roce_tos
    return st


def healthy_states(fabric: FabricIntent, pattern: str = "auto") -> dict[str, DeviceState]:
    states = {d.name: healthy_state(d, fabric) for d in fabric.devices.values()}
    for pair in plan_pairs(fabric, pattern):
        states[pair.src_device].rdma.append(healthy_probe(pair))
    return states


def healthy_probe(pair: Any) -> RdmaProbe:
    """A planned NIC pair that pings and reaches line rate."""
    return RdmaProbe(pair.src_device, pair.src_nic, pair.dst_device, pair.dst_nic, pair.dst_ip, True, 0.0, "3/3",
                     390.0, "390 Gb/s")


def healthy_state(d: DeviceIntent, fabric: FabricIntent, prefixes: Collection[str] | None = None) -> DeviceState:
    """One device's healthy state (its RDMA probes aside); an RTSW routes `prefixes` (None: every other RTSW's
    loopback) over all its fabric links."""
    s = DeviceState(d.name, d.platform)
    roce = d.roce
    if d.role == "gpu":
        s.nics = {n.name: healthy_nic(n) for n in d.nics}
        s.sections |= {"nics", "rdma"}
        return s
    for i in d.interfaces:
        s.interfaces[i.name] = InterfaceState(i.name, True, True, i.speed_mbps, i.mtu)
        s.lldp.append(LldpNeighbor(i.name, i.peer_device, i.peer_port))
        s.pfc_priorities[i.name] = list(i.lossless_priorities)
        wd = roce.watchdog
        # collectors report the neutral action: "alert" keeps forwarding
        action = "drop" if wd.action == "drop" else "forward"
        s.watchdog[i.name] = WatchdogState(wd.enabled, action, wd.detection_ms, wd.restoration_ms)
        s.storms.append(StormState(i.name, 3, False))
        e = roce.ecn
        s.ecn[(i.name, e.queue)] = EcnQueueState(i.name, e.queue, True, e.min_bytes, e.max_bytes,
                                                 e.max_mark_probability)
        full = d.platform == "sonic"
        s.qos[i.name] = QosPortState(i.name, roce.trust,
                                     dict(roce.dscp_to_tc if full else roce.dscp_overrides),
                                     {sc.queue: sc.type for sc in roce.schedulers},
                                     "complete" if full else "configured")
        if i.headroom:
            s.buffer_pgs[i.name] = [BufferPgState(i.name, [3], f"pg_lossless_{i.speed_mbps}_{i.cable_length_m}m_profile", i.headroom.xoff_bytes,
                                                  i.headroom.xon_bytes, i.headroom.size_bytes)]
    for p in d.bgp.peers:
        s.bgp[p.address] = BgpPeerState(p.address, p.remote_asn, "Established", 5)
    if d.role == "rtsw":
        hops = [NextHop(i.peer_ip, i.name) for i in d.interfaces if i.role == "fabric"]
        wanted = (prefixes if prefixes is not None else
                  [o.loopback for o in fabric.devices.values() if o.role == "rtsw" and o.name != d.name])
        for prefix in wanted:
            s.routes[prefix] = RouteState(prefix, "bgp", list(hops))
    ports = {i.name: PortCounters(queue_drops={3: 0}, ecn_marks={3: 0}) for i in d.interfaces}
    s.counters_first = CounterSample(0.0, ports)
    s.counters_second = CounterSample(2.0, {k: PortCounters(queue_drops={3: 0}, ecn_marks={3: 4}) for k in ports})
    s.sections |= {"interfaces", "lldp", "bgp", "routes", "pfc", "qos", "counters"}
    if d.platform == "sonic":
        s.sections.add("buffers")
    return s
