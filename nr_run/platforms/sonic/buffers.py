"""SONiC traditional buffer model: pool sizes per ASIC and the BUFFER_* tables of one switch.

The intent carries the neutral facts (per-port headroom, the summed lossless headroom, the cell size);
the pool and fixed profile sizes are properties of the ASIC's SONiC buffer profile, kept here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from nr_run.intent.models import DeviceIntent, Headroom, Interface


@dataclass(frozen=True)
class PoolSizes:
    """Bytes of the shared pools and the fixed (non-PG) profiles of one SONiC buffer profile.

    Every size is in bytes, as CONFIG_DB's BUFFER_POOL/BUFFER_PROFILE take them (sonic-buffer-pool.yang and
    sonic-buffer-profile.yang: `size` "in bytes"); the lossless PG headroom (xoff/xon/size) comes from the
    intent, in the same bytes the EOS side would use.
    """

    source: str
    ingress_lossless_pool: int
    egress_lossless_pool: int
    egress_lossy_pool: int | None          # None: lossy egress queues share the lossless pool
    egress_lossless_mode: str
    fixed_profiles: dict[str, dict[str, str]]


# Keyed by the hardware's ASIC family (fabric.yaml hardware.<name>.asic), values copied from the cited T1
# buffer template of sonic-buildimage.
POOL_SIZES: dict[str, PoolSizes] = {
    "th": PoolSizes(
        source="sonic-buildimage device/common/profiles/th/gen/BALANCED/buffers_defaults_t1.j2",
        ingress_lossless_pool=10_875_072,
        egress_lossless_pool=15_982_720,
        egress_lossy_pool=9_243_812,
        egress_lossless_mode="static",
        fixed_profiles={
            "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "3"},
            "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "1518", "static_th": "15982720"},
            "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "1518", "dynamic_th": "3"},
        },
    ),
    "th5": PoolSizes(
        source="sonic-buildimage@a63e115131952fdb7a1a191c81d638f502da60e6 device/arista/x86_64-arista_7060x6_64pe/"
               "Arista-7060X6-64PE-O128S2/buffers_defaults_t1.j2",
        ingress_lossless_pool=165_660_324,
        egress_lossless_pool=165_660_324,
        egress_lossy_pool=None,
        egress_lossless_mode="dynamic",
        fixed_profiles={
            "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0", "static_th": "167546528"},
            "egress_lossy_profile": {"pool": "egress_lossless_pool", "size": "1778", "dynamic_th": "0"},
            "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "static_th": "167546528"},
        },
    ),
}


def pool_sizes(asic: str) -> PoolSizes | None:
    """The buffer profile of an ASIC family, or None when none is known (a preflight error)."""
    return POOL_SIZES.get(asic)


def ranges(values: Iterable[int]) -> list[str]:
    """Compress integers into SONiC-style range strings: [0,1,2,4] -> ["0-2", "4"]."""
    out: list[str] = []
    nums = sorted(set(values))
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        out.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return out


def profile_name(itf: Interface) -> str:
    """The lossless PG profile of a port, named as SONiC's buffermgrd names its per speed and cable length
    profiles (pg_lossless_<speed>_<length>m_profile)."""
    return f"pg_lossless_{itf.speed_mbps}_{itf.cable_length_m}m_profile"


def headroom_profiles(device: DeviceIntent) -> list[tuple[str, Headroom]]:
    """Distinct lossless PG headroom profiles of the device, (name, headroom) sorted by name."""
    seen: dict[str, Headroom] = {}
    for itf in device.interfaces:
        if itf.headroom is None:
            continue
        name = profile_name(itf)
        if seen.setdefault(name, itf.headroom) != itf.headroom:
            raise ValueError(f"{device.name}: headroom profile {name} has two different values")
    return sorted(seen.items())


def buffer_tables(device: DeviceIntent) -> dict[str, Any]:
    """BUFFER_POOL, BUFFER_PROFILE, BUFFER_PG and BUFFER_QUEUE of a switch whose buffers nr-run configures."""
    if device.buffers is None:
        raise ValueError(f"{device.name}: no buffer model in the intent (hardware {device.hardware.name} "
                         "has no buffer_cell_bytes)")
    sizes = pool_sizes(device.hardware.asic)
    if sizes is None:
        raise ValueError(f"{device.name}: no SONiC buffer pool sizes for ASIC {device.hardware.asic!r}")
    roce = device.roce
    lossless_pgs = ranges({roce.tc_to_pg[p] for p in roce.lossless_priorities})
    lossless_queues = ranges(roce.lossless_queues)
    lossy_queues = ranges(q for q in set(roce.tc_to_queue.values()) if q not in roce.lossless_queues)
    profiles: dict[str, dict[str, str]] = {name: dict(fields) for name, fields in sizes.fixed_profiles.items()}
    for name, hr in headroom_profiles(device):
        profiles[name] = {"pool": "ingress_lossless_pool", "xon": str(hr.xon_bytes),
                                     "xon_offset": str(hr.xon_offset_bytes), "xoff": str(hr.xoff_bytes),
                                     "size": str(hr.size_bytes), "dynamic_th": "0"}
    pgs: dict[str, dict[str, str]] = {}
    queues: dict[str, dict[str, str]] = {}
    for itf in device.interfaces:
        pgs[f"{itf.name}|0"] = {"profile": "ingress_lossy_profile"}
        if itf.headroom is not None:
            for pg in lossless_pgs:
                pgs[f"{itf.name}|{pg}"] = {"profile": profile_name(itf)}
        for q in lossless_queues:
            queues[f"{itf.name}|{q}"] = {"profile": "egress_lossless_profile"}
        for q in lossy_queues:
            queues[f"{itf.name}|{q}"] = {"profile": "egress_lossy_profile"}
    pools = {
        "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic", "size": str(sizes.ingress_lossless_pool),
                                  "xoff": str(device.buffers.headroom_bytes)},
        "egress_lossless_pool": {"type": "egress", "mode": sizes.egress_lossless_mode,
                                 "size": str(sizes.egress_lossless_pool)},
    }
    if sizes.egress_lossy_pool is not None:
        pools["egress_lossy_pool"] = {"type": "egress", "mode": "dynamic", "size": str(sizes.egress_lossy_pool)}
    return {
        "BUFFER_POOL": pools,
        "BUFFER_PROFILE": profiles,
        "BUFFER_PG": pgs,
        "BUFFER_QUEUE": queues,
    }
