"""`nr-run analyze`: exit codes 0/1/3, the JSON document, the report files, and the safety subset as preflight
errors (a fabric whose RoCE path is not lossless is refused by `inventory validate` and `deploy`)."""

from __future__ import annotations

import json

import pytest

from nr_run.analysis.registry import ANALYSES
from nr_run.analysis.safety import SAFETY_CHECKS, preflight_findings, safety_findings
from nr_run.cli.main import main
from nr_run.intent import compile_site
from tests.conftest import DC1


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def inventory_dir(site) -> str:
    return str(site.path.parent)


def two_profiles(site) -> None:
    """rtsw3 gets its own RoCE profile that puts DSCP 26 in TC 4: every intent preflight rule still passes
    (same lossless priorities, CNP and ECN queue), but RoCE through rtsw3 is lossy."""
    def edit(d):
        prof = json.loads(json.dumps(d["roce_profiles"]["roce"]))
        prof["dscp_to_tc"] = {26: 4, 48: 6}
        d["roce_profiles"]["roce2"] = prof
    site.edit("fabric.yaml", edit)
    site.edit("hosts.yaml", lambda d: d["rtsw3"]["data"].update(roce_profile="roce2"))


def test_dc1_every_proof_holds_json(capsys, site, tmp_path):
    code, out, _ = run(capsys, "analyze", "--site", "dc1", "--inventory-dir", inventory_dir(site), "--json",
                       "--format", "json,html", "--out", str(tmp_path / "out"))
    assert code == 0
    doc = json.loads(out)
    assert doc["ok"] and doc["schema"] == 1 and doc["site"] == "dc1"
    assert [a["name"] for a in doc["analyses"]] == list(ANALYSES)
    assert set(doc["timing"]) == set(ANALYSES) and all(s >= 0 for s in doc["timing"].values())
    assert doc["options"]["failures"] == 1 and doc["options"]["pattern"] == "alltoall"
    written = json.loads((tmp_path / "out" / "analyze.json").read_text())
    assert written["analyses"] == doc["analyses"]
    assert (tmp_path / "out" / "analyze.html").read_text().count("<svg") >= 2


def test_a_lossy_hop_fails_the_proof_exit_1_and_names_the_fix(capsys, site, tmp_path):
    two_profiles(site)
    code, out, _ = run(capsys, "analyze", "--site", "dc1", "--inventory-dir", inventory_dir(site), "--json",
                       "--only", "lossless")
    assert code == 1
    doc = json.loads(out)
    failed = [f for a in doc["analyses"] for f in a["findings"] if not f["passed"]]
    assert failed and all(f["data"]["device"] == "rtsw3" and "roce_profiles.roce2.dscp_to_tc" in f["fix"]
                          for f in failed)
    code, out, _ = run(capsys, "analyze", "--site", "dc1", "--inventory-dir", inventory_dir(site), "--only", "buffers")
    assert code == 0 and "every proof holds" in out


@pytest.mark.parametrize("argv", [
    ["--only", "nosuch"], ["--failures", "9"], ["--qps", "0"], ["--format", "xml"], ["--lab", "--live"],
    ["--pattern", "ring", "--qps", "x"],
])
def test_invalid_input_exits_3(capsys, site, argv):
    code, _, err = run(capsys, "analyze", "--site", "dc1", "--inventory-dir", inventory_dir(site), *argv)
    assert code == 3, err


def test_an_invalid_inventory_exits_3(capsys, site):
    site.edit("fabric.yaml", lambda d: d["roles"]["rtsw"].update(mtu=1500))
    code, out, _ = run(capsys, "analyze", "--site", "dc1", "--inventory-dir", inventory_dir(site), "--json")
    assert code == 3 and any(f["rule"] == "mtu-too-small" for f in json.loads(out)["findings"])


def test_an_unsafe_fabric_is_a_preflight_error_so_deploy_refuses(capsys, site, tmp_path):
    two_profiles(site)
    intent = compile_site(site.path)
    assert [f.data["device"] for f in safety_findings(intent)] and set(SAFETY_CHECKS) >= {"lossless", "buffers"}
    errors = preflight_findings(intent)
    assert errors and all(f.rule == "unsafe-lossless" and f.host == "rtsw3" and f.severity == "error"
                          and f.field == "roce_profiles.roce2.dscp_to_tc" for f in errors)
    code, out, _ = run(capsys, "inventory", "validate", "--site", "dc1", "--inventory-dir", inventory_dir(site),
                       "--json")
    assert code == 3 and any(f["rule"] == "unsafe-lossless" for f in json.loads(out)["findings"])
    # a dry-run deploy stops at preflight, before any device is contacted or any artifact is written
    code, out, _ = run(capsys, "deploy", "--site", "dc1", "--inventory-dir", inventory_dir(site), "--json",
                       "--artifacts", str(tmp_path / "artifacts"))
    assert code == 3 and any(f["rule"] == "unsafe-lossless" for f in json.loads(out)["findings"])
    assert not (tmp_path / "artifacts").exists()


def test_a_safe_fabric_adds_no_preflight_finding():
    assert preflight_findings(compile_site(DC1)) == []


def test_ecn_off_is_a_pfc_only_site_or_refused_as_mixed(capsys, site):
    # ECN off on the switches while the NICs still run DCQCN: a mixed site, refused before anything is pushed
    site.edit("fabric.yaml", lambda d: d["roce_profiles"]["roce"]["ecn"].update(enabled=False))
    code, out, _ = run(capsys, "inventory", "validate", "--site", "dc1", "--inventory-dir", inventory_dir(site),
                       "--json")
    mixed = [f for f in json.loads(out)["findings"] if f["rule"] == "mixed-congestion-control"]
    assert code == 3 and {f["host"] for f in mixed} == {"ctsw1", "ctsw2", "rtsw1", "rtsw2", "rtsw3", "rtsw4"}
    assert all(f["field"] == "roce_profiles.roce.ecn.enabled" for f in mixed)
    # declared PFC-only: valid, and the lossless proof judges it by PFC-only rules (no ECN required)
    site.edit("fabric.yaml", lambda d: d.update(nic={"congestion_control": "pfc-only"}))
    code, _, _ = run(capsys, "inventory", "validate", "--site", "dc1", "--inventory-dir", inventory_dir(site))
    assert code == 0
    code, out, _ = run(capsys, "analyze", "--site", "dc1", "--inventory-dir", inventory_dir(site), "--json",
                       "--only", "lossless")
    assert code == 0 and all(f["passed"] for f in json.loads(out)["analyses"][0]["findings"])
