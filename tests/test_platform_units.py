"""Hardware profiles and units: lanes per link speed on both platforms, a real 400G HWSKU, and ECN
thresholds / buffer sizes meaning the same bytes on EOS and SONiC."""

from __future__ import annotations

import json

import pytest

from nr_run.intent import compile_site
from nr_run.intent.models import HardwareFacts
from nr_run.platforms.eos.config import EosConfig
from nr_run.platforms.eos.structured import eos_speed
from nr_run.platforms.sonic import hwsku
from nr_run.platforms.sonic.config import SonicConfig
from nr_run.platforms.sonic.config_db import port_facts
from nr_run.runbooks.render import render_device
from tests.conftest import DC1


@pytest.fixture(scope="module")
def fabric():
    return compile_site(DC1)


def test_real_400g_hwsku_is_its_port_config_ini():
    prof = hwsku.profile("Arista-7060X6-64PE-O128S2")
    assert prof is not None and prof.asic == "th5" and prof.platform == "x86_64-arista_7060x6_64pe"
    assert len(prof.ports) == 130 and sum(p.speed_mbps == 400_000 for p in prof.ports) == 128
    first = prof.by_name("Ethernet0")
    assert (first.lanes, first.alias, first.index) == ((17, 18, 19, 20), "etp1a", "1")     # master's alias
    assert hwsku.profile("Force10-S6000").asic == "td2"
    assert hwsku.profile("../etc/passwd") is None and hwsku.profile("No-Such-SKU") is None


@pytest.mark.parametrize(("speed", "lanes"), [(400_000, "17,18,19,20"), (200_000, "17,18"), (100_000, "17")])
def test_sonic_lanes_follow_the_link_speed(speed, lanes):
    entry = hwsku.port_entry(hwsku.profile("Arista-7060X6-64PE-O128S2"), "Ethernet0", speed)
    assert entry == {"lanes": lanes, "alias": "etp1a", "index": "1", "speed": str(speed)}


def test_sonic_refuses_what_the_port_cannot_run():
    prof = hwsku.profile("Arista-7060X6-64PE-O128S2")
    with pytest.raises(hwsku.HwskuError, match="no breakout mode of Ethernet0"):
        hwsku.port_entry(prof, "Ethernet4", 800_000)          # 800G only as the cage's one port, Ethernet0
    with pytest.raises(hwsku.HwskuError, match="has Ethernet2 at 400G"):      # Ethernet2 exists in 4x200G only
        hwsku.port_entry(prof, "Ethernet2", 400_000)
    with pytest.raises(hwsku.HwskuError, match="not a port"):
        hwsku.port_entry(prof, "Ethernet9999", 400_000)


def test_dc1_sonic_ports_per_speed(fabric):
    dev = fabric.devices["rtsw3"]
    itf = dev.interfaces[0]
    slow = itf.model_copy(update={"speed_mbps": 100_000})
    assert len(port_facts(itf, dev)["lanes"].split(",")) == 4
    assert len(port_facts(slow, dev)["lanes"].split(",")) == 1


@pytest.mark.parametrize(("speed", "want"), [(400_000, "400g-8"), (200_000, "200g-4"), (100_000, "100g-2")])
def test_eos_speed_names_the_lane_count(speed, want):
    hw = HardwareFacts(name="x", lanes_per_port=8, speed_mbps=400_000)
    assert eos_speed(speed, hw) == want
    assert eos_speed(speed, HardwareFacts(name="y")) == f"{speed // 1000}g"


def test_eos_renders_a_speed_line_per_link(fabric):
    dev = fabric.devices["rtsw1"]
    slow = dev.model_copy(update={"interfaces": [dev.interfaces[0].model_copy(update={"speed_mbps": 100_000}),
                                                 *dev.interfaces[1:]]})
    text = render_device(slow)
    lines = text.splitlines()
    first = lines.index(f"interface {dev.interfaces[0].name}")
    second = lines.index(f"interface {dev.interfaces[1].name}")
    assert "   speed 100g-2" in lines[first:second] and "   speed 400g-8" in lines[second:]


def test_ecn_thresholds_and_buffers_are_the_same_bytes_on_both_platforms(fabric):
    """EOS `random-detect ecn ... bytes` and SONiC WRED_PROFILE thresholds (sonic-wred-profile.yang, `units
    bytes`) carry the identical integer; SONiC's lossless PG profile (the SKU's table) is at least the intent's headroom."""
    eos_dev, sonic_dev = fabric.devices["rtsw1"], fabric.devices["rtsw3"]
    text = render_device(eos_dev)
    line = next(ln.split() for ln in text.splitlines() if "random-detect ecn minimum-threshold" in ln)
    assert line[4] == "bytes" and line[7] == "bytes"
    eos_min, eos_max = int(line[3]), int(line[6])
    db = json.loads(render_device(sonic_dev))
    (wred,) = db["WRED_PROFILE"].values()
    assert (int(wred["green_min_threshold"]), int(wred["green_max_threshold"])) == (eos_min, eos_max)
    assert (eos_min, eos_max) == (eos_dev.roce.ecn.min_kbytes * 1000, eos_dev.roce.ecn.max_kbytes * 1000)
    for itf in sonic_dev.interfaces:
        prof = db["BUFFER_PROFILE"][db["BUFFER_PG"][f"{itf.name}|3"]["profile"]]
        assert int(prof["xoff"]) >= itf.headroom.xoff_bytes      # the SKU's table, at least the physics
    assert EosConfig().suffix == ".cfg" and SonicConfig().suffix == ".json"


def test_gcu_rules_of_driver_and_twin_are_the_same_transcription():
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    driver = json.loads((repo / "napalm_sonic" / "gcu_rules.json").read_text())
    twin = json.loads((repo / "lab" / "twin" / "sonic" / "gcu_rules.json").read_text())
    assert driver == twin and "691b1bbc" in driver["source"]
    assert driver["tables"]["BUFFER_POOL"]["scenarios"]["Shared/headroom pool size changes"]["fields"] == []
    per_release = json.loads((repo / "napalm_sonic" / "gcu_rules_releases.json").read_text())
    assert per_release == json.loads((repo / "lab" / "twin" / "sonic" / "gcu_rules_releases.json").read_text())
    assert sorted(per_release["releases"]) == ["202305", "202311", "202405", "202411", "202505", "202511"]
    for release, rules in per_release["releases"].items():
        assert f"({release} branch)" in rules["source"]


def test_gcu_prediction_per_asic_family_and_release():
    from napalm_sonic import gcu

    assert gcu.asic_family("Arista-7060X6-64PE-O128S2", "broadcom") == "th5"
    assert gcu.asic_family("Mellanox-SN5600-O128", "mellanox") == "spc4"
    assert gcu.asic_family("Force10-S6000") == "td2" and gcu.asic_family("Nope-1") == "unknown"
    running = {"PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "100"}, "Ethernet0": {"detection_time": "200"}},
               "BUFFER_PROFILE": {"p": {"pool": "x", "size": "0", "xoff": "1", "dynamic_th": "0"}}}
    wd = {**running, "PFC_WD": {**running["PFC_WD"], "Ethernet0": {"detection_time": "300"}}}
    assert gcu.refusals(running, wd, "Arista-7060X6-64PE-O128S2") == []
    # the switch's release picks its branch's rules: 202311 lists no th5 switch at all, 202405 the Nokia H5
    # only, 202411 "Arista-7060X6-64PE" (matched as a substring of the O128S2 HWSKU, as GCU does)
    [old] = gcu.refusals(running, wd, "Arista-7060X6-64PE-O128S2", "broadcom", "SONiC.20231110.5")
    assert "no ASIC family" in old.reason and "PFC_WD table is illegal" in old.message
    assert gcu.refusals(running, wd, "Arista-7060X6-64PE-O128S2", "broadcom", "SONiC.20240515.1")
    assert gcu.refusals(running, wd, "Nokia-IXR7220-H5-64D", "broadcom", "SONiC.20240515.1") == []
    assert gcu.refusals(running, wd, "Arista-7060X6-64PE-O128S2", "broadcom", "SONiC.20241110.3") == []
    xoff = {**running, "BUFFER_PROFILE": {"p": {**running["BUFFER_PROFILE"]["p"], "xoff": "2"}}}
    size = {**running, "BUFFER_PROFILE": {"p": {**running["BUFFER_PROFILE"]["p"], "size": "2"}}}
    assert gcu.refusals(running, xoff, "Arista-7060X6-64PE-O128S2") == []
    assert [r.path for r in gcu.refusals(running, size, "Arista-7060X6-64PE-O128S2")] == ["/BUFFER_PROFILE/p/size"]
    assert gcu.apply_method(running, size, "Arista-7060X6-64PE-O128S2")[0] == "drained apply"
    assert gcu.apply_method(running, xoff, "Arista-7060X6-64PE-O128S2")[0] == "gcu"


@pytest.mark.parametrize(("build", "release"), [
    ("SONiC.20230531.24", "202305"), ("SONiC.20231110.5", "202311"), ("SONiC.20240510.12", "202405"),
    ("SONiC.20241130.2", "202411"), ("SONiC.20250515.1", "202505"), ("SONiC.20251120.9", "202511"),
    ("SONiC.master.923411-3f1d7c2a", "master"), ("SONiC.20260601.1", "master"), ("SONiC.20221130.1", "202305")])
def test_gcu_rules_follow_the_reported_release(build, release):
    from napalm_sonic import gcu

    assert gcu.release_of(build) == release


def test_wred_changes_per_release():
    """202305-202411: only AZURE_LOSSLESS's green thresholds (exact field names); 202505: those fields of any
    profile (matched by their end); 202511 and master: WRED_PROFILE has no validator."""
    from napalm_sonic import gcu

    running = {"WRED_PROFILE": {"ROCE_LOSSLESS": {"green_min_threshold": "1", "ecn": "ecn_all"}}}
    target = {"WRED_PROFILE": {"ROCE_LOSSLESS": {"green_min_threshold": "2", "ecn": "ecn_all"}}}
    sku = "Nokia-IXR7220-H5-64D"
    assert [r.table for r in gcu.refusals(running, target, sku, "broadcom", "SONiC.20240515.1")] == ["WRED_PROFILE"]
    assert gcu.refusals(running, target, sku, "broadcom", "SONiC.20250515.1") == []
    assert gcu.refusals(running, target, sku, "broadcom", "SONiC.20251115.1") == []


def test_eos_preflight_refuses_a_link_the_port_cannot_run(fabric):
    dev = fabric.devices["rtsw1"]

    def with_speed(mbps: int):
        link = dev.interfaces[0].model_copy(update={"speed_mbps": mbps})
        return fabric.model_copy(update={"devices": {**fabric.devices, "rtsw1": dev.model_copy(
            update={"interfaces": [link]})}})

    # 25G is no whole share of a 400G port's 8 lanes (50G each)
    [f] = EosConfig().preflight(with_speed(25_000))
    assert (f.severity, f.host, f.field) == ("error", "rtsw1", "hardware.eos-rtsw port Ethernet1")
    # above the port's native speed is the site's link-speed rule (one error naming the cabling key), not this
    assert EosConfig().preflight(with_speed(800_000)) == []
