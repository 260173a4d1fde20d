"""Per-port PFC headroom for one lossless priority group, with every term of the derivation.

Formula (IEEE 802.1Qbb PFC delay model, as laid out in Cisco's "Priority Flow Control: Build Reliable
Layer 2 Infrastructure" white paper and in "Storage Networking" ch. 7, "Pause Threshold for Long Distance
Links", Figure 7-2; the latter's bit-time figures are cited in shared/reference/peers-and-numbers.md §5):

    headroom = MTU_R + PAUSE + 2 x cable delay + D_resp + MTU_S

* MTU_R, MTU_S: a maximum-size frame the receiver may still be sending when it decides to pause (the
  PAUSE cannot pre-empt it), and the one the sender may have just started after the PAUSE arrives. Each
  is the largest frame the port passes on the wire: the L3 MTU configured on the port, plus the Ethernet
  header (14), one 802.1Q tag (4) and the FCS (4) -- the 22 bytes SONiC adds to a PORT's `mtu` when it
  programs the ASIC (swss portsorch.cpp setPortMtu: "mtu + 14 + 4 + 4 = 22 bytes") -- plus preamble/SFD
  (8) and the inter-frame gap (12) it occupies on the wire. A 9194-byte L3 MTU is thus the 9216-byte
  frame of the published example: 9216 x 8 + 96 + 64 = 73,888 bit times.
* PAUSE: the PFC frame itself, 64 bytes + 20 bytes preamble/IFG = 672 bit times.
* cable delay: round trip over the cable, 5 ns per metre each way, times the line rate.
* D_resp: how long the sender's MAC/PHY may keep transmitting after the PAUSE arrives, in
  pause quanta (512 bit times) per IEEE 802.3 Annex 31D: 394 at 100G (201,728 bit times) and
  905 at 400G (463,360 bit times). Other rates are scaled from those two per Gb/s and marked so.

The result is rounded up to the switch's buffer cell size. Interface (PHY/PCS) delays are not
included; vendors fold them into their own tables, and the ASIC's lookup table wins on hardware.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

PAUSE_FRAME_BITS = 672
L2_OVERHEAD_BYTES = 14 + 4 + 4    # Ethernet header + 802.1Q tag + FCS, on top of the L3 MTU
WIRE_OVERHEAD_BYTES = 8 + 12      # preamble + SFD, inter-frame gap
CABLE_NS_PER_M = 5
PAUSE_QUANTUM_BITS = 512

# Pause quanta a sender may still emit after receiving PAUSE (IEEE 802.3 Annex 31D).
RESPONSE_QUANTA: dict[int, int] = {
    100_000: 394,     # IEEE 802.3 Annex 31D (201,728 bit times)
    400_000: 905,     # IEEE 802.3 Annex 31D (463,360 bit times)
    25_000: 99,       # derived: 100G value / 4
    50_000: 197,      # derived: 100G value / 2
    200_000: 453,     # derived: 400G value / 2
    800_000: 1810,    # derived: 400G value x 2
}
DERIVED_RATES = frozenset({25_000, 50_000, 200_000, 800_000})


def frame_bytes(mtu: int) -> int:
    """A maximum-size frame of a port with L3 MTU `mtu` as it occupies the wire."""
    return mtu + L2_OVERHEAD_BYTES + WIRE_OVERHEAD_BYTES


@dataclass(frozen=True)
class HeadroomTerms:
    """The derivation of one port's headroom, in bit times (bits at the line rate), and its result."""

    speed_mbps: int
    cable_length_m: int
    mtu: int
    cell_bytes: int
    frame_bits: int            # one maximum-size frame on the wire (MTU_R = MTU_S)
    receiver_frame_bits: int   # MTU_R
    pause_bits: int            # PAUSE
    cable_bits: int            # 2 x cable delay
    response_bits: int         # D_resp
    sender_frame_bits: int     # MTU_S
    response_derived: bool     # D_resp scaled from the 100G/400G values, not from the standard's table

    @property
    def total_bits(self) -> int:
        return self.receiver_frame_bits + self.pause_bits + self.cable_bits + self.response_bits + self.sender_frame_bits

    @property
    def xoff_bytes(self) -> int:
        return round_to_cells(math.ceil(self.total_bits / 8), self.cell_bytes)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total_bits": self.total_bits, "xoff_bytes": self.xoff_bytes}


def headroom_terms(speed_mbps: int, cable_length_m: int, mtu: int, cell_bytes: int = 1) -> HeadroomTerms:
    """Every term of a port's headroom (ValueError for a rate without a known response delay)."""
    if speed_mbps not in RESPONSE_QUANTA:
        raise ValueError(f"no PFC response delay known for {speed_mbps // 1000}G")
    frame_bits = frame_bytes(mtu) * 8
    # 2 x cable_m x 5 ns/m x speed_mbps x 1e6 bit/s = cable_m x speed_mbps / 100 bits
    cable_bits = 2 * cable_length_m * CABLE_NS_PER_M * speed_mbps // 1000
    return HeadroomTerms(speed_mbps=speed_mbps, cable_length_m=cable_length_m, mtu=mtu, cell_bytes=cell_bytes,
                         frame_bits=frame_bits, receiver_frame_bits=frame_bits, pause_bits=PAUSE_FRAME_BITS,
                         cable_bits=cable_bits, response_bits=RESPONSE_QUANTA[speed_mbps] * PAUSE_QUANTUM_BITS,
                         sender_frame_bits=frame_bits, response_derived=speed_mbps in DERIVED_RATES)


def headroom_bits(speed_mbps: int, cable_length_m: int, mtu: int) -> int:
    """Bits that can still arrive after the receiver decides to send PFC."""
    return headroom_terms(speed_mbps, cable_length_m, mtu).total_bits


def round_to_cells(nbytes: int, cell_bytes: int) -> int:
    return math.ceil(nbytes / cell_bytes) * cell_bytes


def headroom_bytes(speed_mbps: int, cable_length_m: int, mtu: int, cell_bytes: int = 1) -> int:
    """Headroom (xoff) in bytes, rounded up to whole buffer cells."""
    return headroom_terms(speed_mbps, cable_length_m, mtu, cell_bytes).xoff_bytes
