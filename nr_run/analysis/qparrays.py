"""The QPs of a collective as arrays, and their CRC32 hash without hashing each packet header in Python.

Same model as the per-QP functions in ecmp.py (connections, make_qps, roce_udp_sport, flow_hash), element for
element: the connections in the same order, the same QP numbers (a NIC's counter counts every QP it took part in
before, as source or destination), the same source ports and rates.

Hash. For messages of one length and one initial value CRC32 is affine over GF(2): crc(x ^ y) = crc(x) ^ crc(y)
^ crc(0). A flow's header is a base (the constant fields, variable bytes zero) with its variable bytes set, so
crc(header) = crc(base) ^ XOR over variable byte positions i of (crc(base with byte i = b_i) ^ crc(base)): one
table of 256 values per byte position, built with zlib itself, then one gather and XOR per byte for all QPs.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from ipaddress import IPv4Address

import numpy as np

from nr_run.analysis.graph import FabricGraph, NicEnd

# field -> (bytes, constant value or None when it varies per QP); the packing flow_hash uses
FIELD_BYTES = {"src_ip": 4, "dst_ip": 4, "protocol": 1, "src_port": 2, "dst_port": 2, "dest_qp": 3}


@dataclass
class QpArrays:
    """One row per QP: source and destination NIC (index into `nics`), UDP source port, destination QP number
    and rate (Mbit/s)."""

    nics: list[NicEnd]
    src: np.ndarray
    dst: np.ndarray
    sport: np.ndarray
    dest_qp: np.ndarray
    rate: np.ndarray

    def __len__(self) -> int:
        return int(self.src.shape[0])


def connection_arrays(graph: FabricGraph, pattern: str, sources: set[str] | None,
                      nic_index: dict[NicEnd, int]) -> tuple[np.ndarray, np.ndarray]:
    """(source, destination) NIC indices of every connection, in the order ecmp.connections lists them."""
    srcs: list[np.ndarray] = []
    dsts: list[np.ndarray] = []
    for nics in graph.rails.values():
        n = len(nics)
        if n < 2:
            continue
        ids = np.fromiter((nic_index[x] for x in nics), dtype=np.int64, count=n)
        pos = np.array([i for i, a in enumerate(nics) if sources is None or a.switch in sources], dtype=np.int64)
        if not pos.size:
            continue
        if pattern == "ring":
            srcs.append(ids[pos])
            dsts.append(ids[(pos + 1) % n])
        elif pattern == "pairs":
            keep = pos[(pos + n // 2) % n != pos]
            srcs.append(ids[keep])
            dsts.append(ids[(keep + n // 2) % n])
        else:
            # each source position i to every position but i, in rail order
            others = np.arange(n - 1, dtype=np.int64)[None, :]
            to = others + (others >= pos[:, None])
            srcs.append(np.repeat(ids[pos], n - 1))
            dsts.append(ids[to.ravel()])
    if not srcs:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(srcs), np.concatenate(dsts)


def udp_sport(lqpn: np.ndarray, rqpn: np.ndarray) -> np.ndarray:
    """ecmp.roce_udp_sport over arrays (uint64: the 24 x 24-bit product fits)."""
    v = (lqpn.astype(np.uint64) & np.uint64(0xFFFFFF)) * (rqpn.astype(np.uint64) & np.uint64(0xFFFFFF))
    v ^= v >> np.uint64(20)
    v ^= v >> np.uint64(40)
    label = v & np.uint64(0xFFFFF)
    low = (label & np.uint64(0x3FFF)) ^ ((label & np.uint64(0xFC000)) >> np.uint64(14))
    return ((low | np.uint64(0xC000)) & np.uint64(0xFFFF)).astype(np.int64)


def make_qp_arrays(nics: list[NicEnd], src: np.ndarray, dst: np.ndarray, q: int, per_nic: np.ndarray,
                   qpn_base: np.ndarray, taken: np.ndarray) -> QpArrays:
    """q QPs per connection, as ecmp.make_qps numbers them: QP j of the run is an event for its source NIC then
    one for its destination NIC; a NIC's QP number is its base plus the events it had before (`taken`: the
    events of earlier chunks per NIC, updated)."""
    a = np.repeat(src, q)
    b = np.repeat(dst, q)
    events = np.empty(2 * a.size, dtype=np.int64)
    events[0::2], events[1::2] = a, b
    order = np.argsort(events, kind="stable")
    ranked = events[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]]) if ranked.size else np.zeros(0, dtype=np.int64)
    run_start = np.repeat(starts, np.diff(np.r_[starts, ranked.size]))
    seen = np.empty_like(events)
    seen[order] = np.arange(events.size, dtype=np.int64) - run_start
    seen += taken[events]
    taken += np.bincount(events, minlength=taken.size)
    lqpn = (qpn_base[a] + seen[0::2]) & 0xFFFFFF
    rqpn = (qpn_base[b] + seen[1::2]) & 0xFFFFFF
    speed = np.fromiter((n.speed_mbps for n in nics), dtype=np.int64, count=len(nics))
    rate = speed[a] / np.maximum(1, per_nic[a]) / q
    return QpArrays(nics, a, b, udp_sport(lqpn, rqpn), rqpn, rate)


def crc_hashes(fields: tuple[str, ...], seed: int, qps: QpArrays, ips: np.ndarray) -> np.ndarray:
    """ecmp.flow_hash of every QP (`ips`: each NIC's address as an integer)."""
    constants = {"protocol": bytes((17,)), "dst_port": (4791).to_bytes(2, "big")}
    values = {"src_ip": ips[qps.src], "dst_ip": ips[qps.dst], "src_port": qps.sport, "dest_qp": qps.dest_qp}
    base = bytearray()
    varying: list[tuple[int, np.ndarray]] = []          # (offset of the byte, its value per QP)
    for f in fields:
        width = FIELD_BYTES[f]
        if f in constants:
            base += constants[f]
            continue
        col = values[f].astype(np.int64)
        for i in range(width):
            varying.append((len(base) + i, (col >> (8 * (width - 1 - i))) & 0xFF))
        base += bytes(width)
    init = seed & 0xFFFFFFFF
    c0 = zlib.crc32(bytes(base), init)
    out = np.full(len(qps), c0, dtype=np.int64)
    for offset, byte in varying:
        table = np.empty(256, dtype=np.int64)
        msg = bytearray(base)
        for b in range(256):
            msg[offset] = b
            table[b] = zlib.crc32(bytes(msg), init) ^ c0
        out ^= table[byte]
    return out


def nic_ips(nics: list[NicEnd]) -> np.ndarray:
    return np.fromiter((int(IPv4Address(n.ip)) for n in nics), dtype=np.int64, count=len(nics))
