"""Buffers: the headroom derivation against published numbers, pool sizing and ECN-before-PFC per switch, one
defect per case, and properties of the formula."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nr_run.analysis.buffers import analyse, pfc_trigger_bytes
from nr_run.analysis.options import AnalysisOptions
from nr_run.intent import compile_site
from nr_run.intent.headroom import RESPONSE_QUANTA, frame_bytes, headroom_terms
from nr_run.intent.models import DeviceIntent, FabricIntent
from tests.conftest import DC1
from tests.corpus import examples

DC1_FABRIC = compile_site(DC1)
OPTIONS = AnalysisOptions()


# --- golden vectors from published numbers ------------------------------------------------------------------
# "Storage Networking" ch. 7, "Pause Threshold for Long Distance Links" (Figure 7-2), as quoted at
# https://www.besthub.dev/articles/how-to-compute-headroom-for-lossless-ethernet-links-part-2-6f1dc894e989
# (cited in shared/reference/peers-and-numbers.md §5):
#   D-Max-Frame-Len  9216-byte frame: 9216 x 8 + 96 (IFG) + 64 (preamble/SFD) = 73,888 bit times
#   D-Pause          64-byte PFC frame + IFG + preamble = 672 bit times
#   D-Cable          5 ns per metre
#   D-Resp           201,728 bit times at 100 GbE, 463,360 at 400 GbE (IEEE 802.3 Annex 31D: 394 and 905 quanta)
# A 9216-byte frame is an L3 MTU of 9194 plus the 22 bytes SONiC's swss portsorch setPortMtu adds
# ("mtu + 14 + 4 + 4 = 22 bytes": Ethernet header, 802.1Q tag, FCS).
PUBLISHED = [
    # speed, cable m, L3 MTU, MTU_R, PAUSE, 2 x cable, D_resp, total bits
    (400_000, 100, 9194, 73_888, 672, 400_000, 463_360, 1_011_808),
    (100_000, 100, 9194, 73_888, 672, 100_000, 201_728, 450_176),
    (100_000, 3, 9194, 73_888, 672, 3_000, 201_728, 353_176),
]


@pytest.mark.parametrize(("speed", "cable", "mtu", "frame", "pause", "cable_bits", "resp", "total"), PUBLISHED)
def test_headroom_terms_match_the_published_bit_times(speed, cable, mtu, frame, pause, cable_bits, resp, total):
    t = headroom_terms(speed, cable, mtu)
    assert (t.receiver_frame_bits, t.pause_bits, t.cable_bits, t.response_bits, t.sender_frame_bits) == (
        frame, pause, cable_bits, resp, frame)
    assert t.total_bits == total and not t.response_derived


def test_frame_takes_the_whole_ethernet_frame_not_the_l3_mtu():
    # 9214 (the EOS/SONiC routed-port L3 MTU dc1 uses) + 14 header + 4 tag + 4 FCS + 8 preamble/SFD + 12 IFG
    assert frame_bytes(9214) == 9256
    assert headroom_terms(400_000, 30, 9214, 254).xoff_bytes == 361 * 254


def test_pfc_trigger_follows_the_dynamic_threshold():
    # T = alpha S / (1 + n alpha): one congested PG with alpha 1 holds half the shared buffer, alpha 2 two thirds
    assert pfc_trigger_bytes(1_200_000, 0, 1) == 600_000
    assert pfc_trigger_bytes(1_200_000, 1, 1) == 800_000
    assert pfc_trigger_bytes(1_200_000, 0, 5) == 200_000


# --- dc1 and one defect per case ----------------------------------------------------------------------------
def test_dc1_pools_hold_and_every_port_profile_is_derived():
    result = analyse(DC1_FABRIC, OPTIONS)
    assert result.ok
    pools = {row[0]: row for row in result.tables[1].rows}
    assert sorted(pools) == ["rtsw3", "rtsw4"]                  # the SONiC RTSWs: nr-run configures their buffers
    # the SKU's shared headroom pool (buffers_defaults_t1.j2 xoff) against the derived xoff of its lossless ports
    assert pools["rtsw3"][3] == 29_423_360 and pools["rtsw3"][4] == DC1_FABRIC.devices["rtsw3"].buffers.headroom_bytes
    # the SKU's table (612,140 B for every 400G row) beside the derivation, per switch and profile
    table = result.tables[2].rows
    assert {(r[0], r[3], r[4], r[7]) for r in table} >= {("rtsw3", 3, 612_140, "ok"), ("rtsw3", 30, 612_140, "ok")}
    assert all(r[4] >= r[5] for r in table)
    profiles = result.tables[0].rows
    assert sum(row[11] for row in profiles) == sum(len(d.interfaces) for d in DC1_FABRIC.switches())
    assert {row[1] for row in profiles} == {3, 30, 45}           # host, leaf-spine and the 45 m override
    assert result.figures[0].kind == "bar" and result.figures[0].data["stacked"]


def with_device(fabric: FabricIntent, name: str, change: Callable[[DeviceIntent], DeviceIntent]) -> FabricIntent:
    devices = dict(fabric.devices)
    devices[name] = change(devices[name])
    return fabric.model_copy(update={"devices": devices})


def _sku(d: DeviceIntent, tmp: Path, name: str, pools: dict | None = None, xoff: str | None = None) -> DeviceIntent:
    """rtsw3 on a copy of its HWSKU folder with a changed pool or table xoff (a user SKU folder)."""
    src = resources.files("nr_run.platforms.sonic").joinpath("sku", d.model)
    dest = tmp / "skus" / name
    shutil.copytree(str(src), dest)
    meta = json.loads((dest / "sku.json").read_text())
    (dest / "sku.json").write_text(json.dumps({**meta, "hwsku": name}))
    if xoff is not None:
        text = (dest / "pg_profile_lookup.ini").read_text().replace("612140", xoff)
        (dest / "pg_profile_lookup.ini").write_text(text)
    for old, new in (pools or {}).items():
        text = (dest / "buffers_defaults_t1.j2").read_text().replace(old, new)
        (dest / "buffers_defaults_t1.j2").write_text(text)
    return d.model_copy(update={"model": name, "hardware": d.hardware.model_copy(
        update={"sku_dir": str(tmp / "skus")})})


def late_ecn(d: DeviceIntent, tmp: Path) -> DeviceIntent:
    ecn = d.roce.ecn.model_copy(update={"max_bytes": 50_000_000, "max_kbytes": 50_000})
    return d.model_copy(update={"roce": d.roce.model_copy(update={"ecn": ecn})})


def low_table(d: DeviceIntent, tmp: Path) -> DeviceIntent:
    return _sku(d, tmp, "Low-Table", xoff="2540")


def small_headroom_pool(d: DeviceIntent, tmp: Path) -> DeviceIntent:
    return _sku(d, tmp, "Small-Xoff", pools={'"xoff": "29423360"': '"xoff": "100000"'})


def huge_headroom_pool(d: DeviceIntent, tmp: Path) -> DeviceIntent:
    return _sku(d, tmp, "Huge-Xoff", pools={'"xoff": "29423360"': '"xoff": "200000000"'})


CASES: list[tuple[str, Callable[[DeviceIntent, Path], DeviceIntent], str, str]] = [
    ("table-xoff-below-derived", low_table, "rtsw3:Ethernet0 headroom", "sku_dir"),
    ("headroom-pool-too-small", small_headroom_pool, "rtsw3 headroom pool", "nr_run/platforms/sonic"),
    ("ecn-max-above-pfc-trigger", late_ecn, "rtsw3 ECN before PFC", "roce_profiles.roce.ecn.max_kbytes"),
    ("pool-overflow", huge_headroom_pool, "rtsw3 ingress lossless pool", "cable_length_m"),
]


@pytest.mark.parametrize(("case", "defect", "subject", "fix"), CASES, ids=[c[0] for c in CASES])
def test_one_defect_fails_its_check_only(case, defect, subject, fix, tmp_path):
    result = analyse(with_device(DC1_FABRIC, "rtsw3", lambda d: defect(d, tmp_path)), OPTIONS)
    failed = [f for f in result.findings if not f.passed]
    assert [f.subject for f in failed] == [subject]
    assert fix in failed[0].fix


# --- properties -------------------------------------------------------------------------------------------
@settings(max_examples=examples(200), deadline=None)
@given(speed=st.sampled_from(sorted(RESPONSE_QUANTA)), cable=st.integers(0, 10_000), extra=st.integers(1, 5_000),
       mtu=st.integers(1500, 9216), cell=st.integers(1, 512))
def test_longer_cables_never_lower_headroom(speed, cable, extra, mtu, cell):
    short, long = headroom_terms(speed, cable, mtu, cell), headroom_terms(speed, cable + extra, mtu, cell)
    assert long.total_bits > short.total_bits and long.xoff_bytes >= short.xoff_bytes
    assert long.cable_bits - short.cable_bits == 2 * extra * 5 * speed // 1000 or speed * extra % 100


@settings(max_examples=examples(100), deadline=None)
@given(speed=st.sampled_from(sorted(RESPONSE_QUANTA)), cable=st.integers(0, 1000), mtu=st.integers(1500, 9000),
       more=st.integers(1, 216), cell=st.integers(1, 512))
def test_a_larger_mtu_never_lowers_headroom_and_cells_round_up(speed, cable, mtu, more, cell):
    small, large = headroom_terms(speed, cable, mtu, cell), headroom_terms(speed, cable, mtu + more, cell)
    assert large.xoff_bytes >= small.xoff_bytes
    assert large.xoff_bytes % cell == 0 and large.xoff_bytes * 8 >= large.total_bits > (large.xoff_bytes - cell) * 8


@settings(max_examples=examples(100), deadline=None)
@given(shared=st.integers(1, 10**9), th=st.integers(-7, 3), n=st.integers(1, 512))
def test_more_congested_pgs_never_raise_the_pfc_trigger(shared, th, n):
    assert pfc_trigger_bytes(shared, th, n + 1) <= pfc_trigger_bytes(shared, th, n) <= shared




@pytest.mark.parametrize(("case", "defect", "check", "field"), [
    ("pool-overflow", huge_headroom_pool, "pool", "hardware.sonic-rtsw.asic"),
    ("headroom-pool-too-small", small_headroom_pool, "headroom-pool", ""),
])
def test_unsafe_buffers_are_preflight_errors_naming_host_and_field(case, defect, check, field, tmp_path):
    from nr_run.analysis.safety import preflight_findings

    fabric = with_device(DC1_FABRIC, "rtsw3", lambda d: defect(d, tmp_path))
    [finding] = [f for f in preflight_findings(fabric) if f.rule == "unsafe-buffers"]
    assert (finding.severity, finding.host, finding.field) == ("error", "rtsw3", field)
    failed = [f for f in analyse(fabric, OPTIONS).findings if not f.passed]
    assert [f.data["check"] for f in failed] == [check]


def test_a_table_below_the_physics_warns_but_does_not_block(tmp_path):
    from nr_run.analysis.safety import preflight_findings

    fabric = with_device(DC1_FABRIC, "rtsw3", lambda d: low_table(d, tmp_path))
    assert not [f for f in preflight_findings(fabric) if f.rule == "unsafe-buffers"]
    [warn] = [f for f in analyse(fabric, OPTIONS).findings if not f.passed]
    assert warn.severity == "warning" and warn.data["check"] == "xoff" and "2,540 B" in warn.message


def test_ecn_after_pfc_fails_the_proof_but_is_no_preflight_error():
    from nr_run.analysis.safety import preflight_findings

    fabric = with_device(DC1_FABRIC, "rtsw3", lambda d: late_ecn(d, Path()))
    assert not [f for f in preflight_findings(fabric) if f.rule == "unsafe-buffers"]
