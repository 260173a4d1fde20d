"""SONiC traditional buffer model: the BUFFER_* tables and CABLE_LENGTH of one switch, as SONiC makes them.

The SKU's own data wins (hwsku.py): pools and fixed profiles are those of its buffers_defaults_t1.j2, and
each lossless PG gets the profile buffermgrd would create from its pg_profile_lookup.ini row for the port's
speed and cable length (doSpeedUpdateTask: pg_lossless_<speed>_<cable>_profile with the row's xon,
xon_offset, xoff, size and threshold as <pool mode>_th). CABLE_LENGTH names that row: a cable between two rows
rounds up to the longer one, since buffermgrd programs nothing for a length its table lacks. The intent's
physics-based headroom (nr_run/intent/headroom.py) is the cross-check: preflight warns where the table's
xoff is below it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from nr_run.intent.models import DeviceIntent, Interface
from nr_run.platforms.sonic import hwsku


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


def sku(device: DeviceIntent) -> hwsku.HwskuProfile:
    """The device's HWSKU data (HwskuError when there is none)."""
    prof = hwsku.profile(device.model, [device.hardware.sku_dir])
    if prof is None:
        raise hwsku.HwskuError(f"{device.name}: no SONiC hardware profile for HWSKU {device.model!r}")
    return prof


def pg_row(prof: hwsku.HwskuProfile, itf: Interface) -> hwsku.PgRow:
    """The pg_profile_lookup.ini row of a port (HwskuError naming the SKU when its table has none)."""
    row = prof.pg_row(itf.speed_mbps, itf.cable_length_m)
    if row is None:
        have = sorted({r.cable for r in prof.pg_rows if r.speed_mbps == itf.speed_mbps}, key=lambda c: int(c[:-1]))
        raise hwsku.HwskuError(
            f"{itf.name}: pg_profile_lookup.ini of HWSKU {prof.hwsku} has no row for "
            f"{itf.speed_mbps // 1000}G and a {itf.cable_length_m} m cable "
            + (f"(its {itf.speed_mbps // 1000}G rows: {', '.join(have)})" if have
               else f"(no {itf.speed_mbps // 1000}G row at all)"))
    return row


def cable_lengths(device: DeviceIntent) -> dict[str, str]:
    """CABLE_LENGTH|AZURE: each port's cable as the table row buffermgrd will look up."""
    prof = sku(device)
    return {itf.name: pg_row(prof, itf).cable for itf in device.interfaces}


def profile_name(row: hwsku.PgRow) -> str:
    """The lossless PG profile as buffermgrd names it (pg_lossless_<speed>_<cable>_profile)."""
    return f"pg_lossless_{row.speed_mbps}_{row.cable}_profile"


def pg_profile(prof: hwsku.HwskuProfile, row: hwsku.PgRow) -> dict[str, str]:
    """BUFFER_PROFILE fields buffermgrd writes for a row (xon_offset only when the table has it)."""
    mode = prof.pools["ingress_lossless_pool"].get("mode", "dynamic")
    out = {"pool": "ingress_lossless_pool", "xon": row.xon, "xoff": row.xoff, "size": row.size,
           f"{mode}_th": row.threshold}
    if row.xon_offset:
        out["xon_offset"] = row.xon_offset
    return out


def lossy_queue_profile(prof: hwsku.HwskuProfile) -> str:
    """The egress profile of lossy queues: Mellanox SKUs give them q_lossy_profile, the others
    egress_lossy_profile (buffers_defaults_objects.j2 vs the Broadcom buffers_config.j2)."""
    return "q_lossy_profile" if "q_lossy_profile" in prof.fixed_profiles else "egress_lossy_profile"


def buffer_tables(device: DeviceIntent) -> dict[str, Any]:
    """BUFFER_POOL, BUFFER_PROFILE, BUFFER_PG and BUFFER_QUEUE of a switch whose buffers nr-run configures."""
    if device.buffers is None:
        raise ValueError(f"{device.name}: no buffer model in the intent (hardware {device.hardware.name} "
                         "has no buffer_cell_bytes)")
    prof = sku(device)
    roce = device.roce
    lossless_pgs = ranges({roce.tc_to_pg[p] for p in roce.lossless_priorities})
    lossless_queues = ranges(roce.lossless_queues)
    lossy_queues = ranges(q for q in set(roce.tc_to_queue.values()) if q not in roce.lossless_queues)
    lossy_q = lossy_queue_profile(prof)
    profiles: dict[str, dict[str, str]] = {name: dict(fields) for name, fields in prof.fixed_profiles.items()}
    pgs: dict[str, dict[str, str]] = {}
    queues: dict[str, dict[str, str]] = {}
    for itf in device.interfaces:
        pgs[f"{itf.name}|0"] = {"profile": "ingress_lossy_profile"}
        if itf.lossless_priorities:
            row = pg_row(prof, itf)
            profiles.setdefault(profile_name(row), pg_profile(prof, row))
            for pg in lossless_pgs:
                pgs[f"{itf.name}|{pg}"] = {"profile": profile_name(row)}
        for q in lossless_queues:
            queues[f"{itf.name}|{q}"] = {"profile": "egress_lossless_profile"}
        for q in lossy_queues:
            queues[f"{itf.name}|{q}"] = {"profile": lossy_q}
    return {
        "BUFFER_POOL": {name: dict(fields) for name, fields in prof.pools.items()},
        "BUFFER_PROFILE": profiles,
        "BUFFER_PG": pgs,
        "BUFFER_QUEUE": queues,
    }
