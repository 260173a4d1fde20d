"""SONiC buffers as the SKU's own files make them: rendered BUFFER_* rows against the vendored files, row by row."""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path

import pytest

from nr_run.intent import compile_site
from nr_run.platforms.site import load_site
from nr_run.platforms.sonic import hwsku
from nr_run.platforms.sonic.config import SonicConfig

DC1 = Path(__file__).resolve().parents[1] / "inventory" / "dc1"
SKUS = resources.files("nr_run.platforms.sonic").joinpath("sku")
SHIPPED = ["Arista-7060X6-64PE-O128S2", "Force10-S6000", "Mellanox-SN5600-O128", "Nokia-IXR7220-H4-64D",
           "Nokia-IXR7220-H5-64D"]


def _lookup_rows(text: str) -> dict[tuple[str, str], list[str]]:
    """pg_profile_lookup.ini read independently of the plug-in: (speed, cable) -> the remaining columns."""
    out = {}
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            cols = line.split()
            out[(cols[0], cols[1])] = cols[2:]
    return out


@pytest.fixture(scope="module")
def dc1():
    return compile_site(DC1)


def test_every_shipped_sku_has_its_source_and_loads():
    assert hwsku.known() == SHIPPED
    for name in SHIPPED:
        source = SKUS.joinpath(name, "SOURCE.txt").read_text()
        assert "sonic-net/sonic-buildimage" in source and "Apache License 2.0" in source
        assert "086b03bd70f9e211aaaf5f6aefe0790b508d2a94" in source
        prof = hwsku.profile(name)
        assert prof is not None and prof.ports and prof.pg_rows and "ingress_lossless_pool" in prof.pools
    asics = {n: hwsku.profile(n).asic for n in SHIPPED}          # Tomahawk 5/4 and Spectrum-4
    assert {"th5", "th4", "spc4"} <= set(asics.values())


@pytest.mark.parametrize("name", ["rtsw3", "rtsw4"])
def test_rendered_buffers_are_the_skus_rows(dc1, name):
    dev = dc1.devices[name]
    db = SonicConfig().structured_config(dev, dc1)
    folder = SKUS.joinpath(dev.model)
    rows = _lookup_rows(folder.joinpath("pg_profile_lookup.ini").read_text())
    t1 = folder.joinpath("buffers_defaults_t1.j2").read_text()
    for itf in dev.interfaces:
        cable = db["CABLE_LENGTH"]["AZURE"][itf.name]
        # the row is the shortest of the table at the port's speed that is at least the cable's length
        lengths = sorted(int(c[:-1]) for s, c in rows if s == str(itf.speed_mbps))
        assert int(cable[:-1]) == min(n for n in lengths if n >= itf.cable_length_m)
        pg = db["BUFFER_PG"][f"{itf.name}|3"]["profile"]
        assert pg == f"pg_lossless_{itf.speed_mbps}_{cable}_profile"
        size, xon, xoff, threshold, xon_offset = rows[(str(itf.speed_mbps), cable)]
        assert db["BUFFER_PROFILE"][pg] == {"pool": "ingress_lossless_pool", "size": size, "xon": xon,
                                            "xoff": xoff, "dynamic_th": threshold, "xon_offset": xon_offset}
    # the pools and fixed profiles are the template's own numbers
    for pool, fields in db["BUFFER_POOL"].items():
        for value in fields.values():
            assert f'"{value}"' in t1, (pool, value)
    assert db["BUFFER_POOL"]["ingress_lossless_pool"]["xoff"] == "29423360"
    assert db["BUFFER_POOL"]["ingress_lossless_pool"]["size"] == "166115492"


def test_no_cable_length_is_off_the_table(dc1):
    """Every rendered cable length is a row of the SKU's table, so buffermgrd can look each one up."""
    for dev in dc1.devices.values():
        if dev.platform != "sonic":
            continue
        db = SonicConfig().structured_config(dev, dc1)
        rows = _lookup_rows(SKUS.joinpath(dev.model, "pg_profile_lookup.ini").read_text())
        for port, cable in db["CABLE_LENGTH"]["AZURE"].items():
            assert (db["PORT"][port]["speed"], cable) in rows


def test_mellanox_profile_has_no_xon_offset_and_lossy_queues_use_q_lossy():
    prof = hwsku.profile("Mellanox-SN5600-O128")
    row = prof.pg_row(400_000, 30)
    assert (row.cable, row.size, row.xon, row.xoff, row.xon_offset) == ("40m", "303104", "19456", "283648", "")
    assert "q_lossy_profile" in prof.fixed_profiles and "ingress_lossy_pool" in prof.pools


def test_cable_longer_than_every_row_is_an_error(site):
    site.edit("fabric.yaml", lambda d: d["cabling"]["rules"][1].update(cable_length_m=200))
    _, findings = load_site(site.path)
    found = [f for f in findings if f.rule == "sonic-headroom-table"]
    assert found and found[0].severity == "error" and found[0].host in ("rtsw3", "rtsw4")
    assert "200 m" in found[0].message and "5m, 40m, 150m" in found[0].message
    assert found[0].field.startswith("cabling cable_length_m")


def _user_sku(tmp: Path, name: str, edit) -> Path:
    root = tmp / "skus"
    dest = root / name
    shutil.copytree(str(SKUS.joinpath("Arista-7060X6-64PE-O128S2")), dest)
    meta = json.loads((dest / "sku.json").read_text())
    meta["hwsku"] = name
    (dest / "sku.json").write_text(json.dumps(meta))
    edit(dest)
    return root


def test_a_user_sku_folder_is_used_and_its_table_below_physics_warns(site, tmp_path):
    def halve(dest: Path) -> None:
        lookup = (dest / "pg_profile_lookup.ini").read_text().replace("612140", "50000")
        (dest / "pg_profile_lookup.ini").write_text(lookup)
    _user_sku(site.path, "My-7060X6", halve)
    site.edit("fabric.yaml", lambda d: d["hardware"]["sonic-rtsw"].update(model="My-7060X6", sku_dir="skus"))
    fabric, findings = load_site(site.path)
    assert not [f for f in findings if f.severity == "error"]
    warn = [f for f in findings if f.rule == "sonic-headroom-below-physics"]
    assert sorted({f.host for f in warn}) == ["rtsw3", "rtsw4"]
    assert "xoff 50000 B" in warn[0].message and "My-7060X6" in warn[0].message
    db = SonicConfig().structured_config(fabric.devices["rtsw3"], fabric)
    assert db["BUFFER_PROFILE"]["pg_lossless_400000_40m_profile"]["xoff"] == "50000"


def test_a_broken_user_sku_folder_is_an_error_naming_the_file(site):
    _user_sku(site.path, "Bad-SKU", lambda dest: (dest / "pg_profile_lookup.ini").write_text("400000 5m x\n"))
    site.edit("fabric.yaml", lambda d: d["hardware"]["sonic-rtsw"].update(model="Bad-SKU", sku_dir="skus"))
    _, findings = load_site(site.path)
    bad = [f for f in findings if f.severity == "error" and f.rule == "sonic-hardware"]
    assert bad and bad[0].field == "hardware.sonic-rtsw.sku_dir" and "pg_profile_lookup.ini line 1" in bad[0].message


@pytest.mark.parametrize("value", ["../etc", "/abs", "a/../b", "a b"])
def test_sku_dir_must_be_a_plain_relative_path(site, value):
    site.edit("fabric.yaml", lambda d: d["hardware"]["sonic-rtsw"].update(sku_dir=value))
    _, findings = load_site(site.path)
    assert any(f.rule == "schema" and "sku_dir" in f.field for f in findings)


def test_template_code_in_a_user_sku_runs_sandboxed(tmp_path):
    root = _user_sku(tmp_path, "Evil-SKU", lambda dest: (dest / "buffers_defaults_t1.j2").write_text(
        "{% set x = ''.__class__.__mro__ %}{%- macro generate_buffer_pool_and_profiles() %}{{ x }}{% endmacro %}"))
    with pytest.raises(hwsku.HwskuError):
        hwsku.profile("Evil-SKU", [str(root)])


def test_a_hwsku_newer_than_the_lab_image_is_a_preflight_error(site):
    def later(dest: Path) -> None:
        meta = json.loads((dest / "sku.json").read_text())
        (dest / "sku.json").write_text(json.dumps({**meta, "first_release": "202605"}))
    _user_sku(site.path, "Future-SKU", later)
    site.edit("fabric.yaml", lambda d: d["hardware"]["sonic-rtsw"].update(model="Future-SKU", sku_dir="skus"))
    _, findings = load_site(site.path)
    found = [f for f in findings if f.rule == "sonic-release"]
    assert sorted(f.host for f in found) == ["rtsw3", "rtsw4"] and found[0].severity == "error"
    assert "first ships in SONiC 202605" in found[0].message and "202511" in found[0].message


@pytest.mark.parametrize(("speed", "mode", "ports"), [
    (800_000, "1x800G[400G]", {"Ethernet0": ("17,18,19,20,21,22,23,24", "etp1")}),
    (400_000, "2x400G", {"Ethernet0": ("17,18,19,20", "etp1a"), "Ethernet4": ("21,22,23,24", "etp1b")}),
    (200_000, "4x200G", {"Ethernet0": ("17,18", "etp1a"), "Ethernet2": ("19,20", "etp1b"),
                         "Ethernet4": ("21,22", "etp1c"), "Ethernet6": ("23,24", "etp1d")}),
    (100_000, "8x100G", {f"Ethernet{i}": (str(17 + i), f"etp1{'abcdefgh'[i]}") for i in range(8)}),
])
def test_breakouts_come_from_platform_json(speed, mode, ports):
    """The 7060X6's first OSFP cage (platform.json: lanes 17-24, aliases per mode) in each mode."""
    prof = hwsku.profile("Arista-7060X6-64PE-O128S2")
    platform = json.loads(SKUS.joinpath(prof.hwsku, "platform.json").read_text())["interfaces"]["Ethernet0"]
    assert mode in platform["breakout_modes"]
    for port, (lanes, alias) in ports.items():
        assert hwsku.breakout_mode(prof, port, speed) == mode
        assert hwsku.port_entry(prof, port, speed) == {"lanes": lanes, "alias": alias, "index": "1",
                                                       "speed": str(speed)}
        assert alias in platform["breakout_modes"][mode]


def test_200g_host_links_render_the_4x200g_breakout(site):
    site.edit("fabric.yaml", lambda d: d["cabling"]["rules"][1].update(speed="200G"))
    site.edit("fabric.yaml", lambda d: d["hardware"]["gpu-2nic"].update(speed="200G"))
    site.edit("fabric.yaml", lambda d: d["hardware"]["sonic-rtsw"].update(model="Mellanox-SN5600-O128",
                                                                          platform_id="x86_64-nvidia_sn5600-r0",
                                                                          asic="spc4"))
    fabric, findings = load_site(site.path)
    assert fabric is not None, [f.message for f in findings if f.severity == "error"]
    db = SonicConfig().structured_config(fabric.devices["rtsw3"], fabric)
    host = next(i for i in fabric.devices["rtsw3"].interfaces if i.role == "host")
    parent = hwsku.profile("Mellanox-SN5600-O128").parent_of(host.name)
    # Spectrum-4's 2x400G mode lists 200G among its speeds: the 4-lane port runs 200G without a breakout change
    assert db["BREAKOUT_CFG"][parent.name] == {"brkout_mode": "2x400G[200G,100G,50G,40G,25G,10G]"}
    assert db["PORT"][host.name]["speed"] == "200000" and len(db["PORT"][host.name]["lanes"].split(",")) == 4
    assert db["BUFFER_PG"][f"{host.name}|3"]["profile"] == "pg_lossless_200000_5m_profile"


def test_two_ports_of_one_cage_needing_different_modes_are_refused(site):
    def edit(d):
        d["hardware"]["sonic-rtsw"]["port_step"] = 4          # both 400G halves of each cage
        d["cabling"]["overrides"].append({"a": "rtsw3:Ethernet4", "speed": "200G"})
    site.edit("fabric.yaml", edit)
    _, findings = load_site(site.path)
    bad = [f for f in findings if f.rule == "sonic-breakout"]
    assert bad and bad[0].host == "rtsw3" and "one cage runs one mode" in bad[0].message
