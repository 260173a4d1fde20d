"""The star site (star1) and the two-zone multi-zone site (mz1): both render YANG-valid SONiC configs, deploy
with exit 0, check, compliance and analyze with exit 0 against their twins, built from `nr-run lab topology`."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest

from nr_run.cli.main import main
from nr_run.intent import compile_site
from nr_run.platforms.site import load_site
from nr_run.runbooks.clab import topology
from nr_run.runbooks.render import render_site
from tests.conftest import REPO, unexpected
from tests.site_twin import FAST_OPTIONS, site_twin
from tests.test_sonic_yang import validate_text

SITES = {"star1": REPO / "inventory" / "star1", "mz1": REPO / "inventory" / "mz1"}


@pytest.fixture(scope="module")
def star1():
    return compile_site(SITES["star1"])


@pytest.fixture(scope="module")
def mz1():
    return compile_site(SITES["mz1"])


@pytest.mark.parametrize("site", sorted(SITES))
def test_site_is_valid_without_findings(site):
    intent, findings = load_site(SITES[site])
    assert intent is not None and unexpected(findings) == []


def test_star_puts_two_nics_of_a_server_on_each_switch_and_has_no_spine(star1):
    assert star1.shape == "star" and {d.tier for d in star1.switches()} == {1}
    gpu1 = star1.devices["gpu1"]
    assert [(n.name, n.peer_device) for n in gpu1.nics] == [
        ("eth1", "rtsw1"), ("eth2", "rtsw1"), ("eth3", "rtsw2"), ("eth4", "rtsw2")]
    assert [n.rail for n in gpu1.nics] == [1, 2, 3, 4]        # one routing table per NIC on the server
    assert all(not d.bgp.peers for d in star1.switches())
    assert not [lk for lk in star1.links if lk.role == "fabric"]


def test_multi_zone_asns_are_per_tier_and_zone_and_zones_summarise(mz1):
    d = mz1.devices
    assert {d["atsw1"].asn, d["atsw2"].asn} == {65000}
    assert (d["z1-ctsw1"].asn, d["z2-ctsw2"].asn) == (65010, 65011)
    # RTSW ASNs come from their slot in the plan: zone 2 starts after zone 1's 8 slots
    assert [d[n].asn for n in ("z1-rtsw1", "z1-rtsw2", "z2-rtsw1", "z2-rtsw2")] == [65101, 65102, 65109, 65110]
    summary = ipaddress.IPv4Network(d["z2-ctsw1"].zone_summary)
    assert summary == ipaddress.IPv4Network("10.40.1.0/24")
    for name in ("z2-rtsw1", "z2-rtsw2"):
        assert ipaddress.IPv4Network(d[name].host_block).subnet_of(summary)
    atsw_peers = {p.peer_device for p in d["atsw1"].bgp.peers}
    assert atsw_peers == {"z1-ctsw1", "z1-ctsw2", "z2-ctsw1", "z2-ctsw2"}
    long = [lk for lk in mz1.links if "atsw1" in (lk.a_device, lk.b_device)]
    assert {lk.cable_length_m for lk in long} == {150}


@pytest.mark.parametrize("site,names", [("star1", ["rtsw2"]), ("mz1", ["z2-ctsw1", "z2-rtsw1"])])
def test_sonic_configs_pass_yang(site, names):
    rendered = render_site(compile_site(SITES[site]), names)
    for name in names:
        report = validate_text(rendered[name])
        assert report.errors == [] and report.entries > 50, (name, report.errors[:5])


@pytest.mark.parametrize("site", sorted(SITES))
def test_lab_topology_wires_every_link(site):
    intent = compile_site(SITES[site])
    topo = topology(intent)
    assert set(topo["topology"]["nodes"]) == set(intent.devices)
    assert len(topo["topology"]["links"]) == len(intent.links)


def _cli(monkeypatch, site: str, state: Path, artifacts: Path, *argv: str) -> int:
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(state))
    return main([*argv, "--site", site, "--inventory-dir", str(SITES[site].parent), "--lab",
                 "--artifacts", str(artifacts), *FAST_OPTIONS])


# star1 end to end is long: mz1 runs the same commands by default (the star shape: the tests above)
@pytest.mark.parametrize("site", [pytest.param("star1", marks=pytest.mark.long), "mz1"])
def test_deploy_commit_check_and_analyze_exit_0(site, tmp_path_factory, tmp_path, monkeypatch, capsys):
    with site_twin(SITES[site], tmp_path_factory.mktemp(f"{site}-lab")) as state:
        assert _cli(monkeypatch, site, state, tmp_path, "deploy", "--commit", "--yes", "--json") == 0
        deployed = json.loads(capsys.readouterr().out)
        assert deployed["final_check"]["passed"] is True, deployed["final_check"]
        assert _cli(monkeypatch, site, state, tmp_path, "check", "--json") == 0
        report = json.loads(capsys.readouterr().out)
        assert report["passed"]
        assert all(c["ping"] for c in report["rdma"]["cells"])
        assert _cli(monkeypatch, site, state, tmp_path, "compliance", "--json") == 0
        capsys.readouterr()
        assert _cli(monkeypatch, site, state, tmp_path, "watch", "--count", "1", "--every", "1s", "--json") == 0
        assert json.loads(capsys.readouterr().out.splitlines()[-1])["devices"] == len(compile_site(SITES[site]).devices)
        if site == "mz1":
            assert _cli(monkeypatch, site, state, tmp_path, "job-check", "--nodes", "z1-gpu[1-2]") == 0
            line = capsys.readouterr().out
            assert line.startswith("ok:") and "spans zone(s) z1; 2 CTSW(s)" in line and "warning" not in line
            assert _cli(monkeypatch, site, state, tmp_path, "job-check", "--nodes", "z1-gpu1,z2-gpu1", "--json") == 0
            verdict = json.loads(capsys.readouterr().out)
            assert verdict["span"]["zones"] == [1, 2] and verdict["span"]["atsws"] == ["atsw1", "atsw2"]
            assert "crosses the aggregation tier (1.00:1 oversubscribed)" in verdict["line"]
            assert {"atsw1", "atsw2"} <= set(verdict["ports"])       # the cross-zone path is checked too
    monkeypatch.delenv("NR_RUN_LAB_STATE_DIR")
    assert main(["analyze", "--site", site, "--inventory-dir", str(SITES[site].parent), "--json"]) == 0
