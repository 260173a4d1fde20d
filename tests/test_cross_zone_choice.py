"""policy.cross_zone: lossless (the default, what mz1 renders) or lossy, on a generated two-zone site with EOS and
SONiC CTSWs: a lossy aggregation tier has no PFC and no headroom on the CTSW-ATSW links (ECN still marks),
the in-zone links are unchanged, and the lossless proof, deadlock and job-check say cross-zone RoCE is lossy."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
import yaml

from nr_run.analysis.options import AnalysisOptions
from nr_run.cli.main import main
from nr_run.intent import compile_site
from nr_run.intent.models import FabricIntent
from nr_run.platforms.site import load_site
from nr_run.runbooks.job import job_scope
from nr_run.runbooks.render import render_site
from tests.site_twin import FAST_OPTIONS, site_twin
from tests.sitegen import SmallSite, write_shaped_site, write_small_site
from tests.test_sonic_yang import validate_text

SPEC = SmallSite(shape="multi-zone", zones=2, rails=2, ctsw_platforms=("eos", "sonic"), atsw_platforms=("eos",))


def _site(tmp: Path, choice: str | None, spec: SmallSite = SPEC) -> Path:
    site = (write_shaped_site if spec.shape != "clos" else write_small_site)(tmp / "inventory", spec)
    if choice is not None:
        doc = yaml.safe_load((site / "fabric.yaml").read_text())
        doc.setdefault("policy", {})["cross_zone"] = choice
        (site / "fabric.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return site


def _aggregation_ports(fabric: FabricIntent):
    for dev in fabric.switches():
        for itf in dev.interfaces:
            peer = fabric.devices[itf.peer_device]
            yield dev, itf, {dev.tier, peer.tier} == {2, 3}


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    return {c: _site(tmp_path_factory.mktemp(c), c) for c in ("lossless", "lossy")}


def test_default_is_lossless_and_writing_it_changes_nothing(sites, tmp_path):
    default = render_site(compile_site(_site(tmp_path, None)))
    assert default == render_site(compile_site(sites["lossless"]))
    fabric = compile_site(sites["lossless"])
    assert fabric.cross_zone == "lossless"
    assert all(itf.lossless_priorities and itf.headroom for _, itf, _ in _aggregation_ports(fabric))


def test_lossy_leaves_pfc_and_headroom_off_the_aggregation_links_only(sites):
    lossless, lossy = compile_site(sites["lossless"]), compile_site(sites["lossy"])
    assert lossy.cross_zone == "lossy"
    ports = list(_aggregation_ports(lossy))
    assert any(agg for _, _, agg in ports) and any(not agg for _, _, agg in ports)
    for _, itf, agg in ports:
        assert (itf.lossless_priorities, itf.headroom is None) == (([], True) if agg else ([3], False)), itf.name
    before = {(d.name, i.name): i for d in lossless.switches() for i in d.interfaces}
    for dev, itf, agg in ports:
        if not agg:
            assert itf == before[(dev.name, itf.name)]           # in-zone links keep their PFC and headroom
    rendered = render_site(lossy)
    eos_ctsw = next(d for d in lossy.switches() if d.tier == 2 and d.platform == "eos")
    text = rendered[eos_ctsw.name]
    profile = text.split("qos profile roce-lossy\n", 1)[1].split("\n!\n", 1)[0]
    assert "priority-flow-control" not in profile and "random-detect ecn minimum-threshold" in profile
    for itf in eos_ctsw.interfaces:
        block = text.split(f"interface {itf.name}\n", 1)[1].split("\n!", 1)[0]
        want = "roce" if itf.lossless_priorities else "roce-lossy"
        assert f"   service-profile {want}\n" in block + "\n", itf.name
    sonic_ctsw = next(d for d in lossy.switches() if d.tier == 2 and d.platform == "sonic")
    db = json.loads(rendered[sonic_ctsw.name])
    report = validate_text(rendered[sonic_ctsw.name])
    assert report.errors == []
    for itf in sonic_ctsw.interfaces:
        up = not itf.lossless_priorities
        assert db["PORT_QOS_MAP"][itf.name]["pfc_enable"] == ("" if up else "3")
        assert (f"{itf.name}|3" in db["BUFFER_PG"]) is not up          # no lossless PG, so no headroom reserved
        assert db["QUEUE"][f"{itf.name}|3"]["wred_profile"]           # ECN still marks


def test_lossless_proof_deadlock_and_job_check_say_cross_zone_is_lossy(sites):
    from nr_run.analysis import deadlock, lossless
    for choice, site in sites.items():
        fabric, findings = load_site(site)
        assert fabric is not None and not [f for f in findings if f.severity == "error"], findings
        proof = lossless.analyse(fabric, AnalysisOptions())
        cross = [f for f in proof.findings if f.subject.startswith("cross-zone")]
        assert cross and proof.summary["broken"] == 0
        if choice == "lossless":
            assert all(f.passed for f in proof.findings) and proof.summary["lossy_by_choice"] == 0
        else:
            assert all(not f.passed and f.severity == "warning" and "lossy by choice" in f.message for f in cross)
            assert all(f.passed for f in proof.findings if f not in cross)
            assert proof.summary["lossy_by_choice"] == len(cross)
        said = [f.message for f in deadlock.analyse(fabric, AnalysisOptions(failures=0)).findings]
        assert any("cross-zone RoCE traffic is lossy" in m for m in said) is (choice == "lossy")
        servers = sorted({d.zone: d.name for d in fabric.servers()}.values())
        assert len(servers) == 2
        span = job_scope(fabric, servers).span
        assert span.cross_zone and ("lossy" in (span.warning() or "")) is (choice == "lossy")
        assert span.as_dict()["cross_zone_lossy"] is (choice == "lossy")
        assert job_scope(fabric, servers[:1]).span.warning() is None


def test_a_lossy_choice_without_an_aggregation_tier_is_refused(tmp_path):
    site = _site(tmp_path, "lossy", SmallSite())
    _, findings = load_site(site)
    refused = [f for f in findings if f.field == "policy.cross_zone"]
    assert refused and refused[0].severity == "error" and "multi-zone" in refused[0].message


@pytest.mark.long
def test_a_lossy_site_deploys_and_checks_clean_on_the_twin(sites, tmp_path_factory, tmp_path, monkeypatch):
    """The twin serves the lossy configs (no PFC on the aggregation links) and every check agrees with the
    intent, which says those ports carry no lossless priority."""
    site = sites["lossy"]
    with site_twin(site, tmp_path_factory.mktemp("lossy-lab")) as state:
        monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(state))
        common = ["--site", site.name, "--inventory-dir", str(site.parent), "--lab", "--artifacts", str(tmp_path),
                  "--json", *FAST_OPTIONS]
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["deploy", *common, "--commit", "--yes", "--skip-checks", "--canary", "0",
                         "--batch", "100%"]) == 0
        with contextlib.redirect_stdout(io.StringIO()) as out:
            rc = main(["check", *common])
        report = json.loads(out.getvalue())
        assert rc == 0, [(f["check"], f["device"], f["target"], f["expected"], f["observed"]) for f in report["findings"] if not f["passed"]][:12]
        pfc = [f for f in report["findings"] if f["check"] == "pfc"]
        assert pfc and all(f["passed"] for f in pfc)


def test_a_lossy_tier_without_ecn_is_refused_naming_the_profile(tmp_path):
    site = _site(tmp_path, "lossy")
    doc = yaml.safe_load((site / "fabric.yaml").read_text())
    name = sorted(doc["roce_profiles"])[0]
    doc["roce_profiles"][name]["ecn"]["enabled"] = False
    (site / "fabric.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    _, findings = load_site(site)
    assert [f.severity for f in findings if f.field == f"roce_profiles.{name}.ecn.enabled"] == ["error"]


def test_long_cross_zone_optics_need_headroom_only_when_lossless(tmp_path):
    """1 km CTSW-ATSW optics: the generated SONiC CTSWs' SKU has no headroom row that long, so a lossless tier is
    refused there; a lossy one reserves no headroom on those links and is accepted."""
    verdicts = {}
    for choice in ("lossless", "lossy"):
        site = _site(tmp_path / choice, choice)
        doc = yaml.safe_load((site / "fabric.yaml").read_text())
        rule = next(r for r in doc["cabling"]["rules"] if r["type"] == "spine-aggregation")
        rule["cable_length_m"] = 1000
        (site / "fabric.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
        _, findings = load_site(site)
        verdicts[choice] = sorted({f.rule for f in findings if f.severity == "error"})
    assert verdicts == {"lossless": ["sonic-headroom-table"], "lossy": []}
