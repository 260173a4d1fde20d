"""Shapes in fabric.yaml: what each shape refuses (in words, naming the key), the plan's capacity proof, host
blocks sized from downlinks.count, and the modular-chassis port cap."""

from __future__ import annotations

import ipaddress
import shutil
from pathlib import Path

import pytest

from nr_run.intent.compile import compile_with_findings
from tests.conftest import REPO, SiteCopy


def _errors(path: Path) -> list:
    _intent, findings = compile_with_findings(path)
    return [f for f in findings if f.severity == "error"]


@pytest.fixture
def star(tmp_path: Path) -> SiteCopy:
    shutil.copytree(REPO / "inventory" / "star1", tmp_path / "star1")
    return SiteCopy(tmp_path / "star1")


@pytest.fixture
def mz(tmp_path: Path) -> SiteCopy:
    shutil.copytree(REPO / "inventory" / "mz1", tmp_path / "mz1")
    return SiteCopy(tmp_path / "mz1")


def test_a_star_has_no_spine_rule_and_says_so(star: SiteCopy) -> None:
    star.edit("fabric.yaml", lambda f: f["cabling"]["rules"].append(
        {"type": "leaf-spine", "speed": "400G", "cable_length_m": 30}))
    [err] = _errors(star.path)
    assert (err.rule, err.field) == ("shape", "cabling.rules.1.type")
    assert "shape 'star'" in err.message and "no leaf-spine links" in err.message


def test_a_role_outside_the_shape_names_the_key(star: SiteCopy) -> None:
    star.edit("fabric.yaml", lambda f: f["roles"].update(ctsw={"mtu": 9214, "roce_profile": "roce"}))
    star.edit("hosts.yaml", lambda h: h.update(ctsw1={"hostname": "172.22.20.11", "groups": ["ctsw", "eos"],
                                                      "data": {"role": "ctsw", "index": 1, "hardware": "eos-star"}}))
    errors = {(e.rule, e.host, e.field) for e in _errors(star.path)}
    assert errors == {("shape", "", "roles.ctsw"), ("shape", "ctsw1", "data.role")}


def test_a_star_needs_no_uplinks_and_no_ctsw(star: SiteCopy) -> None:
    intent, findings = compile_with_findings(star.path)
    assert intent is not None
    assert not [f for f in findings if f.rule in ("oversubscription", "min-ctsw")]


def test_multi_zone_needs_a_plan_and_a_declared_cross_zone_oversubscription(mz: SiteCopy) -> None:
    def strip(f: dict) -> None:
        del f["plan"]
        del f["policy"]["cross_zone_oversubscription"]
    mz.edit("fabric.yaml", strip)
    fields = {e.field for e in _errors(mz.path) if e.rule == "shape"}
    assert fields == {"plan", "policy.cross_zone_oversubscription"}


def test_cross_zone_oversubscription_above_the_declared_is_refused(mz: SiteCopy) -> None:
    mz.edit("fabric.yaml", lambda f: f["policy"].update(cross_zone_oversubscription=0.5))
    errors = _errors(mz.path)
    assert {e.host for e in errors} == {"z1-ctsw1", "z1-ctsw2", "z2-ctsw1", "z2-ctsw2"}
    assert {(e.rule, e.field) for e in errors} == {("oversubscription", "policy.cross_zone_oversubscription")}
    assert "800G / toward the ATSWs 800G = 1.00:1" in errors[0].message


def test_zones_only_in_multi_zone_and_not_on_the_aggregation_tier(mz: SiteCopy, star: SiteCopy) -> None:
    star.edit("hosts.yaml", lambda h: h["rtsw1"]["data"].update(zone=1))
    [err] = _errors(star.path)
    assert (err.host, err.field) == ("rtsw1", "data.zone") and "has no zones" in err.message
    mz.edit("hosts.yaml", lambda h: h["atsw1"]["data"].update(zone=1))
    [err] = _errors(mz.path)
    assert (err.host, err.field) == ("atsw1", "data.zone")
    mz.edit("hosts.yaml", lambda h: (h["atsw1"]["data"].pop("zone"), h["z2-rtsw1"]["data"].pop("zone")))
    [err] = _errors(mz.path)
    assert (err.host, err.field) == ("z2-rtsw1", "data.zone")


def test_the_plan_proves_every_capacity_not_only_what_exists(mz: SiteCopy) -> None:
    """Zone 4 of the plan would take CTSW ASN 65013; an RTSW range starting there collides, though no such
    device exists yet."""
    mz.edit("fabric.yaml", lambda f: f["asn"].update(rtsw_base=65013))
    errors = _errors(mz.path)
    assert [(e.rule, e.field) for e in errors] == [("plan-capacity", "asn.ctsw")]
    mz.edit("fabric.yaml", lambda f: (f["asn"].update(rtsw_base=65101), f["pools"].update(host_p2p="10.40.0.0/23")))
    errors = _errors(mz.path)
    assert [(e.rule, e.field) for e in errors] == [("plan-capacity", "pools.host_p2p")]


def test_host_blocks_are_sized_from_downlinks_count(site: SiteCopy) -> None:
    """A 128-port RTSW with 32 host slots gets a /26 (32 /31s), not a /24 for all its ports."""
    def big(f: dict) -> None:
        f["hardware"]["eos-rtsw"].update(ports=128, downlinks={"from": 2, "count": 32})
        f["pools"]["host_p2p"] = "10.10.0.0/24"            # four /26 blocks, exactly
    site.edit("fabric.yaml", big)
    intent, findings = compile_with_findings(site.path)
    assert intent is not None and not [f for f in findings if f.severity == "error"], findings
    blocks = [ipaddress.IPv4Network(intent.devices[f"rtsw{i}"].host_block) for i in range(1, 5)]
    assert [b.prefixlen for b in blocks] == [26] * 4 and len(set(blocks)) == 4


def test_ports_up_to_a_modular_chassis(site: SiteCopy) -> None:
    site.edit("fabric.yaml", lambda f: f["hardware"]["eos-ctsw"].update(ports=2304))
    assert not _errors(site.path)
    site.edit("fabric.yaml", lambda f: f["hardware"]["eos-ctsw"].update(ports=100_000))
    [err] = _errors(site.path)
    assert err.field == "hardware.eos-ctsw.ports"


def test_analyze_reports_tiers_and_what_a_cross_zone_job_gets(mz: SiteCopy) -> None:
    """100G links to the ATSWs: each zone's CTSWs carry 800G down, 200G up (4:1, as declared), so a job spread
    over the two zones gets a quarter of its NIC bandwidth across the boundary."""
    from nr_run.analysis.capacity import analyse
    from nr_run.analysis.options import AnalysisOptions

    mz.edit("fabric.yaml", lambda f: f["cabling"]["rules"][2].update(speed="100G"))
    intent, findings = compile_with_findings(mz.path)
    assert intent is not None and not [f for f in findings if f.severity == "error"], findings
    result = analyse(intent, AnalysisOptions(failures=0))
    tiers = {row[0]: row for row in next(t for t in result.tables if t.title == "Oversubscription per tier").rows}
    assert sorted(tiers) == ["atsw", "ctsw", "rtsw"] and tiers["ctsw"][4] == 4.0
    zones = next(t for t in result.tables if t.title.startswith("Across zones")).rows
    assert zones == [["z1", 1600, 400, 400, 25.0, 4.0], ["z2", 1600, 400, 400, 25.0, 4.0]]
    assert result.summary["cross_zone_percent"] == 25.0


def test_the_lossless_proof_covers_the_cross_zone_hops() -> None:
    """A 1500-byte MTU on one atsw1 port breaks exactly the class through atsw1, at that port."""
    from nr_run.analysis.lossless import analyse
    from nr_run.analysis.options import AnalysisOptions
    from nr_run.intent import compile_site

    fabric = compile_site(REPO / "inventory" / "mz1")
    atsw1 = fabric.devices["atsw1"]
    itfs = [i.model_copy(update={"mtu": 1500}) if i.name == "Ethernet3" else i for i in atsw1.interfaces]
    broken = fabric.model_copy(update={"devices": {**fabric.devices,
                                                   "atsw1": atsw1.model_copy(update={"interfaces": itfs})}})
    classes = {f.subject: f for f in analyse(fabric, AnalysisOptions(failures=0)).findings}
    assert {"cross-zone via atsw1", "cross-zone via atsw2"} <= set(classes)
    failed = [f for f in analyse(broken, AnalysisOptions(failures=0)).findings if not f.passed]
    assert [f.subject for f in failed] == ["cross-zone via atsw1"]
    assert failed[0].data["device"] == "atsw1" and failed[0].data["port"] == "Ethernet3"


def test_power_budgets_refuse_a_rack_or_zone_over_them_naming_rack_zone_and_key(mz: SiteCopy) -> None:
    """A hotter GPU generation (10.2 -> 19 kW a server): zone 2's rack of two servers and two RTSWs draws 41 kW
    (budget 40); zone 1, its second server moved to a rack of its own, has 3 racks (allowed 2); each zone draws
    45 kW (budget 44)."""
    mz.edit("fabric.yaml", lambda f: (f["hardware"]["gpu-2nic"].update(power_kw=19),
                                      f["power"].update(racks_per_zone=2, zone_kw=44)))
    mz.edit("hosts.yaml", lambda h: h["z1-gpu2"]["data"].update(rack="z1-rack2"))
    errors = sorted((e.field, e.host, e.message) for e in _errors(mz.path))
    assert [(f, h) for f, h, _ in errors] == [("power.rack_kw", "z2-gpu1"), ("power.racks_per_zone", ""),
                                              ("power.zone_kw", ""), ("power.zone_kw", "")]
    assert errors[0][2].startswith("rack z2-rack1 draws 41 kW (4 devices: z2-gpu1, z2-gpu2, z2-rtsw1, z2-rtsw2)")
    assert errors[1][2] == "zone 1 has 3 racks, above power.racks_per_zone 2"
    assert [m for _, _, m in errors[2:]] == ["zone 1 draws 45 kW, above power.zone_kw 44 kW",
                                             "zone 2 draws 45 kW, above power.zone_kw 44 kW"]


def test_power_needs_every_used_hardware_to_declare_its_draw(mz: SiteCopy) -> None:
    mz.edit("fabric.yaml", lambda f: f["hardware"]["eos-atsw"].pop("power_kw"))
    [err] = _errors(mz.path)
    assert (err.rule, err.field) == ("power", "hardware.eos-atsw.power_kw")


def test_analyze_shows_per_zone_utilisation() -> None:
    from nr_run.analysis.options import AnalysisOptions
    from nr_run.analysis.power import analyse
    from nr_run.intent import compile_site

    result = analyse(compile_site(REPO / "inventory" / "mz1"), AnalysisOptions(failures=0))
    rows = {r[0]: r for r in result.tables[0].rows}
    # zone 1: 2 servers x 10.2 + 2 RTSWs x 1.5 + 2 CTSWs x 2.0 = 27.4 kW in 2 racks; the rack of servers 23.4 kW
    assert rows["zone 1"][:6] == ["zone 1", 2, 16, 27.4, 400.0, 6.8]
    assert rows["zone 1"][6:] == ["z1-rack1", 58.5]
    assert rows["aggregation tier"][3] == 5.0


def test_an_exhausted_host_pool_is_one_error_per_rtsw_not_missing_rails(site: SiteCopy) -> None:
    """Too small a host_p2p is refused as pool-exhausted; the servers' NICs are still cabled, so no
    rail-link-missing warning ('0 of 2 rails') follows from it."""
    site.edit("fabric.yaml", lambda f: f["pools"].update(host_p2p="10.10.0.0/25"))
    _intent, findings = compile_with_findings(site.path)
    assert {(f.rule, f.host) for f in findings if f.severity == "error"} == {
        ("pool-exhausted", "rtsw3"), ("pool-exhausted", "rtsw4")}
    assert not [f for f in findings if f.rule == "rail-link-missing"]


def test_cross_zone_optics_longer_than_any_buffer_row_are_refused(mz: SiteCopy) -> None:
    """300 m to the ATSWs: the SONiC CTSWs' HWSKU has headroom rows up to 150 m only, so no buffer carries it."""
    from nr_run.platforms.site import load_site

    mz.edit("fabric.yaml", lambda f: f["cabling"]["rules"][2].update(cable_length_m=300))
    _intent, findings = load_site(mz.path)
    errors = [f for f in findings if f.severity == "error"]
    assert {(f.rule, f.host) for f in errors} == {("sonic-headroom-table", "z2-ctsw1"),
                                                 ("sonic-headroom-table", "z2-ctsw2")}
    assert all("300 m" in f.message for f in errors)


def test_rdma_cover_pairs_exercise_the_cross_zone_classes() -> None:
    from nr_run.intent import compile_site
    from nr_run.validators.rdma import coverage, leaf_kind, plan_pairs

    fabric = compile_site(REPO / "inventory" / "mz1")
    assert leaf_kind(fabric, "z1-rtsw1", "z2-rtsw1") == "cross-zone"
    assert leaf_kind(fabric, "z1-rtsw1", "z1-rtsw2") == "cross-rail"
    report = coverage(fabric, plan_pairs(fabric, "cover"))
    assert report["path_classes_missed"] == [] and report["path_classes"] == 7     # 5 in the zones, 2 across


def test_rdma_line_rate_is_the_slowest_link_a_pair_may_cross(mz: SiteCopy) -> None:
    """100G links to the ATSWs: a cross-zone pair of 400G NICs can carry 100G, an in-zone one 400G."""
    from nr_run.validators.rdma import Pair, path_rate_mbps

    mz.edit("fabric.yaml", lambda f: f["cabling"]["rules"][2].update(speed="100G"))
    intent, _ = compile_with_findings(mz.path)
    assert intent is not None
    ip = {(d.name, n.name): n.ip for d in intent.servers() for n in d.nics}

    def pair(a: tuple[str, str], b: tuple[str, str]) -> Pair:
        return Pair(a[0], a[1], ip[a], b[0], b[1], ip[b])

    assert path_rate_mbps(intent, pair(("z1-gpu1", "eth1"), ("z2-gpu1", "eth1"))) == 100_000
    assert path_rate_mbps(intent, pair(("z1-gpu1", "eth1"), ("z1-gpu2", "eth2"))) == 400_000
    assert path_rate_mbps(intent, pair(("z1-gpu1", "eth1"), ("z1-gpu2", "eth1"))) == 400_000
