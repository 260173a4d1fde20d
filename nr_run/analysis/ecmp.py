"""ECMP entropy and QP scaling: the flows of a collective hashed over the fabric's ECMP groups.

Flows. A collective runs per rail (NCCL keeps traffic on its rail in a rail-optimised fabric): `ring` sends
from each server's NIC to the next server's NIC on the same rail, `pairs` from server i to server i + n/2,
`alltoall` from every server to every other one. A connection is one RC queue pair (QP) per
`qps_per_connection`; NCCL splits a connection's data over its QPs (NCCL_IB_QPS_PER_CONNECTION). A NIC's
line rate is shared by its connections, a connection's by its QPs.

Entropy. RoCEv2 packets are UDP to port 4791; the source port is derived per QP from the local and remote QP
numbers, as Linux does for RC QPs (rdma_calc_flow_label and rdma_flow_label_to_udp_sport in
include/rdma/ib_verbs.h): that port is the entropy a 5-tuple hash sees. QP numbers are modelled as
sequential per NIC from a deterministic per-NIC base.

Hash. A switch picks member (hash mod group size) of the FIB's next hops; the hash is CRC32 (zlib, the
polynomial of Broadcom's CRC32 hash functions) over the packed selected fields, started from the hash seed:
a deterministic, documented stand-in for the ASIC's RTAG7-style hash, not a bit-exact copy. Every switch
uses the same seed and function, as default configs do (that correlation is what polarises multi-tier paths).
The destination QP (InfiniBand BTH) can be added as a field where a platform can hash on it:
- Juniper Junos Evolved hashes on the RDMA queue pair by default ("Queue-Pair Hashing for RDMA Flows",
  juniper.net/documentation/us/en/software/junos/ai-ml-evo/topics/topic-map/load-balancing-queue-pair-hash.html);
- SONiC's generic hash (sonic-net/SONiC doc/hash/hash-design.md, SWITCH_HASH|GLOBAL ecmp_hash) lists
  header fields up to L4 ports, no BTH field: not supported;
- EOS: no Arista document found for this model describes hashing on the BTH destination QP, and AVD has an
  open request for RoCEv2 UDF hashing on Tomahawk (aristanetworks/avd#5386): not modelled as available.
Both of this project's platforms therefore default to the 5-tuple; `HashModel` takes "dest_qp" to model a
platform that has it.
"""

from __future__ import annotations

import math
import struct
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from functools import cache, lru_cache
from ipaddress import IPv4Address

import numpy as np

from nr_run.analysis.graph import FabricGraph, Failed, FailureSet, NicEnd, natural_key
from nr_run.analysis.options import AnalysisOptions
from nr_run.analysis.qparrays import QpArrays, connection_arrays, crc_hashes, make_qp_arrays, nic_ips
from nr_run.analysis.result import AnalysisFinding, AnalysisResult, Figure, Table
from nr_run.analysis.routing import Routes, routes_under
from nr_run.intent.models import FabricIntent
from nr_run.platforms.hashing import ecmp_hash_fields

ROCE_PORT = 4791
UDP = 17
FIVE_TUPLE = ("src_ip", "dst_ip", "protocol", "src_port", "dst_port")
FIELDS = FIVE_TUPLE + ("dest_qp",)
# the platform plug-ins' neutral hash field names (nr_run.platforms.hashing) -> this model's fields
PLATFORM_FIELD_NAMES = {"src-ip": "src_ip", "dst-ip": "dst_ip", "ip-protocol": "protocol",
                        "l4-src-port": "src_port", "l4-dst-port": "dst_port", "rdma-dest-qp": "dest_qp"}
FLOW_BUDGET = 120_000          # QPs simulated per run; larger patterns are sampled by source switch
QP_STEPS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


@dataclass(frozen=True)
class HashModel:
    fields: tuple[str, ...] = FIVE_TUPLE
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = set(self.fields) - set(FIELDS)
        if unknown or not self.fields:
            raise ValueError(f"hash fields must be some of {', '.join(FIELDS)}: {sorted(unknown)}")


def roce_udp_sport(lqpn: int, rqpn: int) -> int:
    """The RoCEv2 UDP source port of an RC QP: a 20-bit flow label folded from the product of the QP numbers,
    then its low 14 bits xor its high 6, placed in 0xC000-0xFFFF (the kernel's formula)."""
    v = (lqpn & 0xFFFFFF) * (rqpn & 0xFFFFFF)
    v ^= v >> 20
    v ^= v >> 40
    label = v & 0xFFFFF
    low = (label & 0x3FFF) ^ ((label & 0xFC000) >> 14)
    return (low | 0xC000) & 0xFFFF


@cache
def _qpn_base(server: str, nic: str) -> int:
    return 0x100 + zlib.crc32(f"{server}/{nic}".encode()) % 0xFE0000


@cache
def _ip_bytes(ip: str) -> bytes:
    return IPv4Address(ip).packed


@dataclass(frozen=True)
class Qp:
    src: NicEnd
    dst: NicEnd
    sport: int
    dest_qp: int
    rate_mbps: float


def connections(graph: FabricGraph, pattern: str, sources: set[str] | None = None
                ) -> list[tuple[NicEnd, NicEnd]]:
    """(source NIC, destination NIC) of every connection of the pattern, rail by rail; only from NICs on
    `sources` switches when given (an all-to-all of a large site is sampled by source switch)."""
    out: list[tuple[NicEnd, NicEnd]] = []
    for nics in graph.rails.values():
        n = len(nics)
        if n < 2:
            continue
        for i, a in enumerate(nics):
            if sources is not None and a.switch not in sources:
                continue
            if pattern == "ring":
                out.append((a, nics[(i + 1) % n]))
            elif pattern == "pairs":
                if (i + n // 2) % n != i:
                    out.append((a, nics[(i + n // 2) % n]))
            else:
                out += [(a, b) for b in nics if b is not a]
    return out


def connections_per_nic(graph: FabricGraph, pattern: str) -> dict[NicEnd, int]:
    """How many connections share each NIC's line rate."""
    out: dict[NicEnd, int] = {}
    for nics in graph.rails.values():
        for nic in nics:
            out[nic] = (len(nics) - 1 if pattern == "alltoall" else 1) if len(nics) > 1 else 0
    return out


def make_qps(conns: list[tuple[NicEnd, NicEnd]], q: int, per_nic: dict[NicEnd, int]) -> list[Qp]:
    """q QPs per connection with their QP numbers, source ports and rates."""
    counter: dict[tuple[str, str], int] = {}
    out = []
    for a, b in conns:
        rate = a.speed_mbps / max(1, per_nic.get(a, 1)) / q
        ka, kb = (a.server, a.nic), (b.server, b.nic)
        base_a, base_b = _qpn_base(*ka), _qpn_base(*kb)
        for _ in range(q):
            na, nb = counter.get(ka, 0), counter.get(kb, 0)
            lqpn = (base_a + na) & 0xFFFFFF
            rqpn = (base_b + nb) & 0xFFFFFF
            counter[ka] = na + 1
            counter[kb] = nb + 1
            out.append(Qp(a, b, roce_udp_sport(lqpn, rqpn), rqpn, rate))
    return out


def flow_hash(model: HashModel, qp: Qp) -> int:
    parts = []
    for f in model.fields:
        if f == "src_ip":
            parts.append(_ip_bytes(qp.src.ip))
        elif f == "dst_ip":
            parts.append(_ip_bytes(qp.dst.ip))
        elif f == "protocol":
            parts.append(_PROTO)
        elif f == "src_port":
            parts.append(_PORTS[qp.sport])
        elif f == "dst_port":
            parts.append(_DPORT)
        else:
            parts.append(qp.dest_qp.to_bytes(3, "big"))
    return zlib.crc32(b"".join(parts), model.seed & 0xFFFFFFFF)


_PROTO = bytes((UDP,))
_DPORT = struct.pack("!H", ROCE_PORT)
_PORTS = [struct.pack("!H", p) for p in range(65536)]


@dataclass
class Simulation:
    """Loads of one run: per directed link (link id, from switch) the Mbit/s and QPs; per ECMP group
    (switch, members) the QPs on each member."""

    qps: int = 0
    sampled_sources: int = 0
    total_sources: int = 0
    link_load: dict[tuple[int, str], float] = field(default_factory=dict)
    groups: dict[tuple[str, tuple[int, ...]], Counter[int]] = field(default_factory=dict)
    group_load: dict[tuple[str, tuple[int, ...]], dict[int, float]] = field(default_factory=dict)


DENSE_PAIRS = 1 << 25          # (switch, destination) pairs indexed by an array up to 128 MB, else sorted per hop
CHUNK_QPS = 1 << 18             # QPs held as arrays at once (a QP sweep of a large site has millions)


def simulate(graph: FabricGraph, routes: Routes, pattern: str, q: int, model: HashModel,
             budget: int = FLOW_BUDGET) -> Simulation:
    """Hash every QP of the pattern's fabric-crossing connections hop by hop; when the pattern has more than
    `budget` QPs, simulate whole source switches only (evenly spaced, deterministic).

    The QPs are arrays (nr_run.analysis.qparrays: the same QP numbers, ports and CRC32 hashes as make_qps and
    flow_hash), in chunks of connections, moved one hop at a time; each (switch, destination) pair's next hops
    are looked up once. The result is what a walk of one QP after the other finds, dict order included: loads
    are summed in QP order (with one rate for all QPs, a sum depends on the count only)."""
    per_nic = connections_per_nic(graph, pattern)
    sources = sorted({nic.switch for nic in graph.nics}, key=natural_key)
    total = sum(per_nic.values()) * q
    sim = Simulation(total_sources=len(sources))
    if total > budget and sources:
        keep = max(1, budget * len(sources) // total)
        step = len(sources) / keep
        sources = [sources[int(i * step)] for i in range(min(keep, len(sources)))]
    sim.sampled_sources = len(sources)
    arrays = graph.memo.setdefault("ecmp", {}).get("nics")
    if not isinstance(arrays, _NicArrays):
        arrays = graph.memo["ecmp"]["nics"] = _nic_arrays(graph)
    src, dst = connection_arrays(graph, pattern, set(sources), arrays.index)
    per = np.fromiter((per_nic.get(n, 1) for n in graph.nics), dtype=np.int64, count=len(graph.nics))
    walk = _Walk(graph, routes, arrays)
    taken = np.zeros(len(graph.nics), dtype=np.int64)
    step_conns = max(1, CHUNK_QPS // q)
    for c0 in range(0, src.size, step_conns):
        qps = make_qp_arrays(graph.nics, src[c0:c0 + step_conns], dst[c0:c0 + step_conns], q, per,
                             arrays.qpn_base, taken)
        walk.run(qps, crc_hashes(model.fields, model.seed, qps, arrays.ip))
    walk.fill(sim)
    return sim


@dataclass
class _NicArrays:
    switches: list[str]                 # switch names by index
    index: dict[NicEnd, int]            # NIC -> its row in graph.nics
    switch: np.ndarray                  # NIC row -> switch index
    ip: np.ndarray
    qpn_base: np.ndarray
    link_ends: np.ndarray               # link id -> (a, b) switch indices


def _nic_arrays(graph: FabricGraph) -> _NicArrays:
    switches = sorted(graph.switches)
    pos = {n: i for i, n in enumerate(switches)}
    nics = graph.nics
    ends = np.array([(pos[lk.a], pos[lk.b]) for lk in graph.links], dtype=np.int64).reshape(-1, 2)
    return _NicArrays(
        switches, {n: i for i, n in enumerate(nics)},
        np.fromiter((pos[n.switch] for n in nics), dtype=np.int64, count=len(nics)), nic_ips(nics),
        np.fromiter((_qpn_base(n.server, n.nic) for n in nics), dtype=np.int64, count=len(nics)), ends)


class _Pairs:
    """The next hops of the (switch, destination) pairs a walk meets under one Routes, as arrays, kept on the
    Routes so the runs of a QP sweep look each pair up once. An ECMP group member is a slot: its group's
    first slot + the member's position in the group's next hops."""

    def __init__(self, routes: Routes, arrays: _NicArrays) -> None:
        self.routes, self.arrays = routes, arrays
        self.n_sw = len(arrays.switches)
        self.slot_of: dict[int, int] = {}                 # here x n_sw + dest -> pair slot
        self.dense = np.full(self.n_sw ** 2, -1, dtype=np.int32) if self.n_sw ** 2 <= DENSE_PAIRS else None
        self.pair_hops: list[tuple[int, ...]] = []
        self.pair_width: list[int] = []
        self.pair_member0: list[int] = []                 # first member slot of its group, -1: one next hop
        self.groups: dict[tuple[str, tuple[int, ...]], int] = {}   # (switch, next hops) -> first member slot
        self.member_lid: list[int] = []
        self._arrays_for = 0
        empty = np.zeros(0, dtype=np.int64)
        self._arrays = (empty, empty, empty, empty)

    def slots(self, keys: np.ndarray) -> np.ndarray:
        """Pair slots of `here x n_sw + dest` keys, looking up the next hops of pairs not met before (a dense
        key -> slot array where it fits: no sort of the QPs per hop)."""
        if self.dense is None:
            uniq, inverse = np.unique(keys, return_inverse=True)
            found = np.fromiter((self._slot(k) for k in uniq.tolist()), dtype=np.int64, count=uniq.size)
            return found[inverse]
        slots = self.dense[keys]
        new = slots < 0
        if new.any():
            for key in np.unique(keys[new]).tolist():
                self.dense[key] = self._slot(key)
            slots = self.dense[keys]
        return slots

    def _slot(self, key: int) -> int:
        slot = self.slot_of.get(key)
        if slot is not None:
            return slot
        names, n = self.arrays.switches, self.n_sw
        here = names[key // n]
        hops = self.routes.next_hops(here, names[key % n])
        first = -1
        if len(hops) > 1:
            first = self.groups.get((here, hops), -1)
            if first < 0:
                first = self.groups[(here, hops)] = len(self.member_lid)
                self.member_lid += hops
        slot = self.slot_of[key] = len(self.pair_hops)
        self.pair_hops.append(hops)
        self.pair_width.append(len(hops))
        self.pair_member0.append(first)
        return slot

    def next_hop_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per pair slot: where its next hops start in one flat array, how many, its group's first member slot
        (-1: one next hop); and the flat array. Extended by the pairs added since the last call."""
        done = self._arrays_for
        if done != len(self.pair_hops):
            start, widths, members0, flat = self._arrays
            added = self.pair_hops[done:]
            new_widths = np.asarray(self.pair_width[done:], dtype=np.int64)
            new_start = flat.size + np.concatenate(([0], np.cumsum(new_widths)[:-1])).astype(np.int64)
            hops = np.fromiter((lid for h in added for lid in h), dtype=np.int64, count=int(new_widths.sum()))
            self._arrays = (np.concatenate((start, new_start)), np.concatenate((widths, new_widths)),
                            np.concatenate((members0, np.asarray(self.pair_member0[done:], dtype=np.int64))),
                            np.concatenate((flat, hops)))
            self._arrays_for = len(self.pair_hops)
        return self._arrays


class _Walk:
    """Loads of QP chunks walked hop by hop. A directed link is `2 x link id + (1 if left from its b end)`."""

    HOPS = 16

    def __init__(self, graph: FabricGraph, routes: Routes, arrays: _NicArrays) -> None:
        self.graph, self.arrays = graph, arrays
        found = routes.memo.get("ecmp-pairs")
        if not isinstance(found, _Pairs):
            found = routes.memo["ecmp-pairs"] = _Pairs(routes, arrays)
        self.pairs = found
        self.n_sw = found.n_sw
        self.qps = 0                                      # QPs walked so far (their global order)
        n_links = 2 * len(graph.links)
        self.link_count = np.zeros(n_links, dtype=np.int64)
        self.link_load = np.zeros(n_links)
        self.link_first = np.full(n_links, np.iinfo(np.int64).max, dtype=np.int64)
        self.member_count = np.zeros(0, dtype=np.int64)
        self.member_load = np.zeros(0)
        self.member_first = np.zeros(0, dtype=np.int64)
        self.rates: set[float] = set()
        self.moving = 0

    def run(self, qps: QpArrays, h: np.ndarray) -> None:
        here = self.arrays.switch[qps.src]
        dest = self.arrays.switch[qps.dst]
        moving = np.flatnonzero(here != dest)
        order = self.qps + moving                        # each QP's place in the per-QP walk
        self.qps += len(qps)
        self.moving += int(moving.size)
        here, dest, h, rate = here[moving], dest[moving], h[moving], qps.rate[moving]
        self.rates.update(np.unique(rate).tolist())
        ends = self.arrays.link_ends
        rows: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        idx = np.arange(moving.size, dtype=np.int64)
        for hop in range(self.HOPS):
            alive = here != dest
            if not alive.all():
                idx, here, dest, h = idx[alive], here[alive], dest[alive], h[alive]
            if not idx.size:
                break
            pair = self.pairs.slots(here * self.n_sw + dest)
            start, widths, members0, flat = self.pairs.next_hop_arrays()
            width = widths[pair]
            routed = width > 0
            if not routed.all():
                idx, here, dest, h, pair, width = (x[routed] for x in (idx, here, dest, h, pair, width))
            choice = h % width
            lid = flat[start[pair] + choice]
            a_end = ends[lid, 0]
            from_b = (a_end != here).astype(np.int64)
            member0 = members0[pair]
            member = np.where(member0 >= 0, member0 + choice, -1)
            rows.append((order[idx] * self.HOPS + hop, lid * 2 + from_b, member, rate[idx]))
            here = np.where(from_b == 1, a_end, ends[lid, 1])
        self._add(rows)

    def _add(self, rows: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]) -> None:
        if not rows:
            return
        when, dlink, member, rate = (np.concatenate(x) for x in zip(*rows, strict=True))
        # one rate: a sum is the count's; else add in walk order (np.add.at adds repeated indices in order)
        ordered = len(self.rates) > 1
        if ordered:
            order = np.argsort(when, kind="stable")
            when, dlink, member, rate = when[order], dlink[order], member[order], rate[order]
        self.link_count += np.bincount(dlink, minlength=self.link_count.size)
        np.minimum.at(self.link_first, dlink, when)
        if ordered:
            np.add.at(self.link_load, dlink, rate)
        grouped = member >= 0
        n = len(self.pairs.member_lid)
        if self.member_count.size < n:
            grow = n - self.member_count.size
            self.member_count = np.r_[self.member_count, np.zeros(grow, dtype=np.int64)]
            self.member_load = np.r_[self.member_load, np.zeros(grow)]
            self.member_first = np.r_[self.member_first, np.full(grow, np.iinfo(np.int64).max, dtype=np.int64)]
        m = member[grouped]
        self.member_count += np.bincount(m, minlength=n)
        np.minimum.at(self.member_first, m, when[grouped])
        if ordered:
            np.add.at(self.member_load, m, rate[grouped])

    def _sums(self, counts: np.ndarray, loads: np.ndarray) -> np.ndarray:
        """Loads: summed in order, or, with one rate r, r added count times (np.cumsum adds one after the other)."""
        if len(self.rates) != 1 or not counts.size:
            return loads
        (rate,) = self.rates
        table = np.cumsum(np.full(int(counts.max(initial=0)) + 1, rate))
        return np.where(counts > 0, table[np.maximum(counts - 1, 0)], 0.0)

    def fill(self, sim: Simulation) -> None:
        sim.qps = self.moving
        links = self.graph.links
        used = np.flatnonzero(self.link_count)
        loads = self._sums(self.link_count, self.link_load)
        for d in used[np.argsort(self.link_first[used], kind="stable")].tolist():
            lk = links[d // 2]
            sim.link_load[(lk.id, lk.b if d % 2 else lk.a)] = float(loads[d])
        if not self.member_count.size:
            return
        loads = self._sums(self.member_count, self.member_load)
        first_slot = sorted(self.pairs.groups.items(), key=lambda kv: kv[1])
        bounds = [(gk, f, f + len(gk[1])) for gk, f in first_slot]
        met = []
        for gk, lo, hi in bounds:
            firsts = self.member_first[lo:hi]
            if self.member_count[lo:hi].any():
                met.append((int(firsts.min()), gk, lo, hi))
        for _, gk, lo, hi in sorted(met, key=lambda m: m[0]):
            counts: Counter[int] = Counter()
            group_load: dict[int, float] = {}
            slots = [s for s in range(lo, hi) if self.member_count[s]]
            for s in sorted(slots, key=lambda s: int(self.member_first[s])):
                lid = self.pairs.member_lid[s]
                counts[lid] = int(self.member_count[s])
                group_load[lid] = float(loads[s])
            sim.groups[gk] = counts
            sim.group_load[gk] = group_load


def imbalance(sim: Simulation) -> tuple[float, float]:
    """(worst, mean) over ECMP groups of max member load / mean member load (1.0: perfectly even)."""
    ratios = []
    for (_, members), loads in sim.group_load.items():
        values = [loads.get(m, 0.0) for m in members]
        mean = sum(values) / len(values)
        if mean > 0:
            ratios.append(max(values) / mean)
    if not ratios:
        return 1.0, 1.0
    return max(ratios), sum(ratios) / len(ratios)


def measured_collision(sim: Simulation) -> tuple[float, float]:
    """(measured, ideal): the chance that two QPs of one ECMP group take the same member, against 1/n."""
    same = pairs = 0
    ideal = 0.0
    for (_, members), counts in sim.groups.items():
        total = sum(counts.values())
        p = total * (total - 1) // 2
        pairs += p
        same += sum(c * (c - 1) // 2 for c in counts.values())
        ideal += p / len(members)
    if not pairs:
        return 0.0, 0.0
    return same / pairs, ideal / pairs


# ---- the analytic model ------------------------------------------------------------------------------

def collision_share(n: int, q: int) -> float:
    """Expected share of an elephant's rate that collides with a second elephant, both on one n-way ECMP
    group, each split over q QPs of rate 1/q and the uplinks as fast as one elephant:
    E[sum over uplinks of max(load - 1, 0)] = n * sum_k Binom(2q, 1/n)(k) * max(k/q - 1, 0).
    For q = 1 it is the probability that the two flows share an uplink, 1/n. Doubling q never raises it:
    the loads with 2q QPs are the mean of two independent q-QP load vectors and the excess is convex
    (Jensen)."""
    if n <= 1:
        return 1.0
    p = 1.0 / n
    total = 0.0
    for k in range(q + 1, 2 * q + 1):
        total += math.comb(2 * q, k) * p ** k * (1 - p) ** (2 * q - k) * (k / q - 1)
    return n * total


@lru_cache(maxsize=4096)
def expected_max_over_mean(m: int, n: int) -> float:
    """Balls into bins: E[max load] / (m/n) for m equal balls thrown uniformly into n bins.

    Exact for m < n ln n + 64: with X_i iid Poisson(m/n), P(max <= t) = P(all X_i <= t | sum X_i = m)
    (Poissonisation), computed by convolving the truncated pmf n times. Heavily loaded (m >= n ln n):
    Raab and Steger, "Balls into Bins - A Simple and Tight Analysis" (RANDOM 1998), Theorem 1:
    max = m/n + sqrt(2 (m/n) ln n) (1 + o(1)) with high probability.
    """
    if m <= 0 or n <= 1:
        return 1.0
    lam = m / n
    if m >= n * math.log(n) + 64:
        return (lam + math.sqrt(2 * lam * math.log(n))) / lam
    pmf_all = [math.exp(-m + k * math.log(m) - math.lgamma(k + 1)) for k in range(m + 1)]
    norm = pmf_all[m]
    expected = 0.0
    t = 0
    while t < m:
        base = [math.exp(-lam + k * math.log(lam) - math.lgamma(k + 1)) for k in range(t + 1)]
        prob = _power_coeff(base, n, m) / norm
        expected += 1 - min(1.0, prob)
        if prob > 1 - 1e-9:
            break
        t += 1
    return expected / lam


def _power_coeff(poly: list[float], n: int, degree: int) -> float:
    """Coefficient of x^degree in poly(x)^n (truncated products, by squaring)."""
    result = [1.0]
    base = poly[:]
    e = n
    while e:
        if e & 1:
            result = _mul(result, base, degree)
        e >>= 1
        if e:
            base = _mul(base, base, degree)
    return result[degree] if degree < len(result) else 0.0


def _mul(a: list[float], b: list[float], degree: int) -> list[float]:
    out = [0.0] * min(len(a) + len(b) - 1, degree + 1)
    for i, x in enumerate(a):
        if x == 0.0:
            continue
        for j in range(min(len(b), degree + 1 - i)):
            out[i + j] += x * b[j]
    return out


# ---- the analysis ------------------------------------------------------------------------------------

def hash_model_for(fabric: FabricIntent, seed: int) -> HashModel:
    """The fields every switch of the fabric hashes on, as its platform plug-in reports them (their
    intersection: a field one switch ignores adds no entropy at that hop). A platform that cannot say
    (SONiC renders no hash table) is modelled with the 5-tuple, the ASICs' default ECMP hash."""
    fields = set(FIELDS)
    for dev in fabric.switches():
        reported = ecmp_hash_fields(dev)
        if reported is not None:
            fields &= {PLATFORM_FIELD_NAMES[f] for f in reported if f in PLATFORM_FIELD_NAMES}
        else:
            fields &= set(FIVE_TUPLE)
    return HashModel(tuple(f for f in FIELDS if f in fields), seed)


def analyse(fabric: FabricIntent, options: AnalysisOptions, model: HashModel | None = None) -> AnalysisResult:
    t0 = time.perf_counter()
    graph = FabricGraph.of(fabric)
    routes = routes_under(graph)
    model = model or hash_model_for(fabric, options.hash_seed)
    result = AnalysisResult(name="ecmp", title=f"ECMP entropy and QP scaling ({options.pattern})")
    q = options.qps_per_connection
    sim = simulate(graph, routes, options.pattern, q, model)
    worst, mean = imbalance(sim)
    measured, ideal = measured_collision(sim)
    widths = Counter(len(members) for _, members in sim.groups)
    width = widths.most_common(1)[0][0] if widths else 1
    expected = [expected_max_over_mean(sum(c.values()), len(members)) for (_, members), c in sim.groups.items()]
    expected_mean = sum(expected) / len(expected) if expected else 1.0
    # QPs per connection needed to stay under the target imbalance (same seed and hash, re-simulated)
    sweep: list[tuple[int, float, float]] = []
    needed: int | None = None
    for step in QP_STEPS:
        s = sim if step == q else simulate(graph, routes, options.pattern, step, model)
        w, m = imbalance(s)
        sweep.append((step, w, m))
        if w <= options.max_imbalance:
            needed = step
            break
    uplinks = _uplink_utilisation(graph, sim)
    result.figures.append(Figure(
        title=f"Per-uplink load ({options.pattern}, {q} QP/connection)", kind="histogram",
        data={"values": [round(u, 1) for _, u in uplinks], "bins": 20, "xlabel": "uplink utilisation %"}))
    result.figures.append(Figure(
        title="ECMP imbalance by QPs per connection", kind="line",
        data={"labels": [s for s, _, _ in sweep],
              "series": {"worst group (max/mean)": [round(w, 3) for _, w, _ in sweep],
                         "mean group (max/mean)": [round(m, 3) for _, _, m in sweep],
                         "target": [options.max_imbalance] * len(sweep)},
              "xlabel": "QPs per connection", "ylabel": "max / mean load"}))
    result.tables.append(Table(
        title="Most loaded uplinks", columns=["switch", "port", "to", "utilisation %"],
        # ties by name: equal loads are the rule on a balanced fabric; which 20 are shown must not depend on the
        # order the simulation met the uplinks in
        rows=[[s, p, t, round(u, 1)] for (s, p, t), u in sorted(uplinks, key=lambda x: (-x[1], x[0]))[:20]]))
    result.tables.append(Table(
        title="QPs per connection sweep", columns=["QPs per connection", "worst max/mean", "mean max/mean"],
        rows=[[s, round(w, 3), round(m, 3)] for s, w, m in sweep]))
    under = _under_failures(graph, options, model, worst, uplinks)
    if under:
        result.tables.append(Table(
            title=f"{options.pattern} under single failures (one per symmetry class)",
            columns=["failures", "worst max/mean", "busiest uplink %"], rows=under))
    result.summary = {
        "pattern": options.pattern, "qps_per_connection": q, "hash_fields": list(model.fields),
        "hash_seed": model.seed, "connections_per_nic": max(connections_per_nic(graph, options.pattern).values(), default=0), "qps_simulated": sim.qps,
        "sources_simulated": sim.sampled_sources, "sources_total": sim.total_sources,
        "ecmp_groups": len(sim.groups), "imbalance_worst": round(worst, 3), "imbalance_mean": round(mean, 3),
        "balls_into_bins_mean": round(expected_mean, 3),
        "collision_probability": round(measured, 4), "collision_probability_ideal": round(ideal, 4),
        "elephant_collision_share": round(collision_share(width, q), 4), "ecmp_width": width,
        "qps_needed": needed, "max_imbalance": options.max_imbalance}
    if not sim.groups:
        result.findings.append(AnalysisFinding(
            analysis="ecmp", subject=options.pattern, passed=True, severity="info",
            message=f"the {options.pattern} pattern crosses no ECMP group (no traffic between RTSWs)"))
    else:
        ok = worst <= options.max_imbalance
        hint = (f"use at least {needed} QPs per connection (NCCL_IB_QPS_PER_CONNECTION={needed})" if needed
                else f"more than {QP_STEPS[-1]} QPs per connection would be needed: spread the pattern over "
                     "more connections or use adaptive routing")
        result.findings.append(AnalysisFinding(
            analysis="ecmp", subject=f"{options.pattern}, {q} QP/connection", passed=ok, severity="warning",
            message=(f"ECMP imbalance max/mean {worst:.2f} worst, {mean:.2f} mean over {len(sim.groups)} groups "
                     f"(balls-into-bins expects {expected_mean:.2f}); two QPs share an uplink with probability "
                     f"{measured:.3f} (ideal {ideal:.3f})"),
            fix="" if ok else hint,
            data={"imbalance_worst": worst, "qps_needed": needed}))
        if "src_port" not in model.fields and "dest_qp" not in model.fields:
            result.findings.append(AnalysisFinding(
                analysis="ecmp", subject="hash fields", passed=False, severity="warning",
                message="the ECMP hash ignores the UDP source port: all QPs between two NICs take one path",
                fix="hash on the L4 source port (RoCEv2 puts its per-QP entropy there)"))
    result.seconds = time.perf_counter() - t0
    return result


def _under_failures(graph: FabricGraph, options: AnalysisOptions, model: HashModel, worst: float,
                    healthy: list[tuple[tuple[str, str, str], float]]) -> list[list[object]]:
    """The pattern re-hashed after each single link or switch failure (with K >= 1): the traffic of a lost
    uplink moves to the others, which is what a slowed job sees."""
    if options.failures < 1:
        return []
    rows: list[list[object]] = [["none", round(worst, 3), round(max((u for _, u in healthy), default=0.0), 1)]]
    for failures in graph.failure_reps(1)[1:]:
        routes = routes_under(graph, Failed.of(failures))
        sim = simulate(graph, routes, options.pattern, options.qps_per_connection, model)
        routes.memo.pop("ecmp-pairs", None)          # one run under these failures: its lookups go
        busiest = max((u for _, u in _uplink_utilisation(graph, sim, failures)), default=0.0)
        rows.append([graph.describe(failures), round(imbalance(sim)[0], 3), round(busiest, 1)])
    return rows


def _uplink_utilisation(graph: FabricGraph, sim: Simulation, failures: FailureSet = frozenset()
                        ) -> list[tuple[tuple[str, str, str], float]]:
    """Utilisation % of every live upward link of the simulated source switches (idle ones included)."""
    failed = Failed.of(failures)
    sources = ({switch for switch, _ in sim.groups} | {s for (_, s) in sim.link_load}) - failed.switches
    out = []
    for s in sorted(sources, key=natural_key):
        tier = graph.switches[s].tier
        for lid, peer in graph.adj[s]:
            if lid in failed.links or peer in failed.switches:
                continue
            if graph.switches[peer].tier > tier and graph.switches[s].host_mbps > 0:
                lk = graph.links[lid]
                out.append(((s, lk.port(s), peer), 100 * sim.link_load.get((lid, s), 0.0) / lk.speed_mbps))
    return out
