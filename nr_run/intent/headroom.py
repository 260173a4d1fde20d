"""Per-port PFC headroom for one lossless priority group.

Formula (IEEE 802.1Qbb PFC delay model, as laid out in Cisco's "Priority Flow Control: Build
Reliable Layer 2 Infrastructure" white paper and the headroom walk-through cited in
shared/reference/peers-and-numbers.md §5):

    headroom = MTU_R + PAUSE + 2 x cable delay + D_resp + MTU_S

* MTU_R, MTU_S: a maximum-size frame the receiver may still be taking in when it decides to pause,
  and the one the sender may have just started; each is the port MTU plus 20 bytes of preamble,
  SFD and inter-packet gap on the wire (9216 -> 9236 bytes, as in the worked example).
* PAUSE: the PFC frame itself, 64 bytes + 20 bytes preamble/IPG = 672 bit times.
* cable delay: round trip over the cable, 5 ns per metre each way, times the line rate.
* D_resp: how long the sender's MAC/PHY may keep transmitting after the PAUSE arrives, in
  pause quanta (512 bit times) per IEEE 802.3 Annex 31D: 394 at 100G (201,728 bit times) and
  905 at 400G (463,360 bit times). Other rates are scaled from those two per Gb/s and marked so.

The result is rounded up to the switch's buffer cell size. Interface (PHY/PCS) delays are not
included; vendors fold them into their own tables, and the ASIC's lookup table wins on hardware.
"""

from __future__ import annotations

import math

PAUSE_FRAME_BITS = 672
WIRE_OVERHEAD_BYTES = 20          # preamble + SFD (8) + inter-packet gap (12)
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


def frame_bytes(mtu: int) -> int:
    """A maximum-size frame as it occupies the wire."""
    return mtu + WIRE_OVERHEAD_BYTES


def headroom_bits(speed_mbps: int, cable_length_m: int, mtu: int) -> int:
    """Bits that can still arrive after the receiver decides to send PFC."""
    if speed_mbps not in RESPONSE_QUANTA:
        raise ValueError(f"no PFC response delay known for {speed_mbps // 1000}G")
    frame_bits = frame_bytes(mtu) * 8
    # 2 x cable_m x 5 ns/m x speed_mbps x 1e6 bit/s = cable_m x speed_mbps / 100 bits
    cable_bits = 2 * cable_length_m * CABLE_NS_PER_M * speed_mbps // 1000
    response_bits = RESPONSE_QUANTA[speed_mbps] * PAUSE_QUANTUM_BITS
    return 2 * frame_bits + PAUSE_FRAME_BITS + cable_bits + response_bits


def round_to_cells(nbytes: int, cell_bytes: int) -> int:
    return math.ceil(nbytes / cell_bytes) * cell_bytes


def headroom_bytes(speed_mbps: int, cable_length_m: int, mtu: int, cell_bytes: int = 1) -> int:
    """Headroom (xoff) in bytes, rounded up to whole buffer cells."""
    return round_to_cells(math.ceil(headroom_bits(speed_mbps, cable_length_m, mtu) / 8), cell_bytes)
