"""Zone summaries as BGP aggregates (mz1): each multi-zone CTSW originates its zone's summary, the ATSWs keep
only the summaries, the zone's own RTSWs keep every specific. Rendered per platform; on the twin (real clients:
pyeapi, SSH + vtysh) the aggregate exists only while a contributing host block does, summary-only suppresses
the specifics, and the zone-summary check judges a leak and a missing summary."""

from __future__ import annotations

import contextlib
import io
import ipaddress
import json
from pathlib import Path

import pytest

from nr_run.cli.main import main
from nr_run.intent import compile_site
from nr_run.platforms.site import load_site
from nr_run.runbooks.render import render_site
from tests.conftest import REPO
from tests.site_twin import FAST_OPTIONS, site_twin
from tests.sitegen import SmallSite, write_small_site
from tests.twin_site import TwinSite, ssh_run

MZ1 = REPO / "inventory" / "mz1"
POOL = ipaddress.IPv4Network("10.40.0.0/16")           # mz1's host_p2p pool: every host block is inside it
Z1, Z2 = "10.40.0.0/24", "10.40.1.0/24"


@pytest.fixture(scope="module")
def mz1():
    return compile_site(MZ1)


def test_ctsws_originate_their_zone_and_atsws_accept_only_summaries(mz1):
    d = mz1.devices
    assert (d["z1-ctsw1"].zone_summary, d["z2-ctsw2"].zone_summary) == (Z1, Z2)
    assert d["atsw1"].zone_summaries == [Z1, Z2] and d["z1-rtsw1"].zone_summaries == []
    cfg = render_site(mz1, ["z1-ctsw1", "z1-rtsw1", "z2-ctsw1", "atsw1"])
    assert f"   aggregate-address {Z1}\n" in cfg["z1-ctsw1"]           # not summary-only: RTSWs keep specifics
    assert "aggregate-address" not in cfg["z1-rtsw1"] and "aggregate-address" not in cfg["atsw1"]
    assert json.loads(cfg["z2-ctsw1"])["BGP_AGGREGATE_ADDRESS"] == {
        Z2: {"bbr-required": "false", "summary-only": "false", "as-set": "false"}}
    assert (f"ip prefix-list PL-ZONE-SPECIFICS\n   seq 10 permit {Z1} ge 25\n   seq 20 permit {Z2} ge 25\n"
            in cfg["atsw1"])
    assert ("route-map RM-ZONE-SUMMARIES-IN deny 10\n   match ip address prefix-list PL-ZONE-SPECIFICS\n!\n"
            "route-map RM-ZONE-SUMMARIES-IN permit 20\n!\n") in cfg["atsw1"]
    assert "   address-family ipv4\n      neighbor FABRIC activate\n      neighbor FABRIC route-map " \
           "RM-ZONE-SUMMARIES-IN in\n" in cfg["atsw1"]
    assert "RM-ZONE-SUMMARIES-IN" not in cfg["z1-ctsw1"]


def test_a_sonic_aggregation_switch_is_refused_naming_the_key(tmp_path):
    site = write_small_site(tmp_path / "inventory", SmallSite(shape="multi-zone", zones=2, rails=2,
                                                             atsw_platforms=("eos", "sonic")))
    _, findings = load_site(site)
    refused = [f for f in findings if f.rule == "sonic-aggregation"]
    assert [f.host for f in refused] == ["atsw2"] and all(f.severity == "error" for f in refused)
    assert refused[0].field.endswith(".platform") and "EOS" in refused[0].message


def _routes(twin: TwinSite, host: str) -> dict[str, list[str]]:
    """host's routing table as its own CLI serves it: prefix -> next-hop addresses."""
    if twin.addresses[host]["platform"] == "eos":
        out = twin.eapi(host).enable(["show ip route vrf default"])[0]["result"]
        routes = out["vrfs"]["default"]["routes"]
        return {p: sorted(v["nexthopAddr"] for v in r.get("vias", []) if v.get("nexthopAddr"))
                for p, r in routes.items()}
    client = twin.ssh(host, password="YourPaSsWoRd")
    try:
        _, text = ssh_run(client, "vtysh -c 'show ip route json'")
    finally:
        client.close()
    return {p: sorted(h["ip"] for r in rs for h in r.get("nexthops", []) if h.get("ip"))
            for p, rs in json.loads(text).items()}


def _in_pool(routes: dict[str, list[str]], inside: str | None = None) -> set[str]:
    """The routes inside the host pool (or inside `inside`), the device's own connected /31s aside."""
    within = ipaddress.IPv4Network(inside) if inside else POOL
    return {p for p, hops in routes.items() if ipaddress.IPv4Network(p).subnet_of(within) and hops}


def _p31(dev) -> str:
    """The /31 of an RTSW's first host port: what an EOS RTSW advertises of its hosts."""
    first = min((i for i in dev.interfaces if i.role == "host"), key=lambda i: i.name)
    return str(ipaddress.ip_interface(first.address).network)


def _cli(state: Path, artifacts: Path, monkeypatch, *argv: str) -> tuple[int, dict]:
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(state))
    with contextlib.redirect_stdout(io.StringIO()) as out:
        rc = main([*argv, "--site", "mz1", "--inventory-dir", str(MZ1.parent), "--lab", "--artifacts",
                   str(artifacts), "--json", *FAST_OPTIONS])
    text = out.getvalue()
    return rc, json.loads(text) if text.strip().startswith("{") else {}


def _failed(report: dict) -> set[tuple[str, str]]:
    return {(f["device"], f["target"].split()[0]) for f in report["findings"] if not f["passed"]}


@pytest.mark.long
def test_twin_atsws_see_one_prefix_per_zone_and_the_check_judges_leaks_and_withdrawals(
        mz1, tmp_path_factory, tmp_path, monkeypatch):
    d = mz1.devices
    z2_blocks = {d[n].host_block for n in ("z2-rtsw1", "z2-rtsw2")}
    with site_twin(MZ1, tmp_path_factory.mktemp("mz1-lab")) as state:
        rc, _ = _cli(state, tmp_path, monkeypatch, "deploy", "--commit", "--yes", "--skip-checks", "--canary", "0",
                     "--batch", "100%")
        assert rc == 0
        twin = TwinSite(state, tmp_path)
        for atsw in ("atsw1", "atsw2"):
            routes = _routes(twin, atsw)
            assert _in_pool(routes) == {Z1, Z2}, routes
            assert len(routes[Z1]) == 2 and len(routes[Z2]) == 2       # each from both CTSWs of the zone
        # a zone's RTSWs keep the specifics of their own zone, and see the other zone as one prefix
        z1 = _routes(twin, "z1-rtsw1")                                  # EOS: the RTSWs advertise host /31s
        assert len(z1[_p31(d["z1-rtsw2"])]) == 2 and z1[Z1] and z1[Z2]
        assert _in_pool(z1, Z2) == {Z2}
        z2 = _routes(twin, "z2-rtsw1")                                  # SONiC (vtysh): the RTSWs' host blocks
        assert len(z2[d["z2-rtsw2"].host_block]) == 2 and z2[Z1]
        assert _in_pool(z2, Z1) == {Z1}
        rc, report = _cli(state, tmp_path, monkeypatch, "check", "--checks", "zone-summary,ecmp,bgp")
        assert rc == 0 and report["passed"], [f for f in report["findings"] if not f["passed"]]
        judged = {f["device"] for f in report["findings"] if f["check"] == "zone-summary"}
        assert judged == {"atsw1", "atsw2", "z1-ctsw1", "z1-ctsw2", "z2-ctsw1", "z2-ctsw2"}

        # atsw1 stops filtering: it holds every specific, and passes them on to each zone's CTSWs
        twin.push("atsw1", "router bgp 65000\n   address-family ipv4\n"
                           "      no neighbor FABRIC route-map RM-ZONE-SUMMARIES-IN in\n")
        leaked = _in_pool(_routes(twin, "atsw1"))
        assert z2_blocks | {_p31(d["z1-rtsw1"]), _p31(d["z1-rtsw2"])} <= leaked and {Z1, Z2} <= leaked
        rc, report = _cli(state, tmp_path, monkeypatch, "check", "--checks", "zone-summary")
        assert rc == 1
        failed = _failed(report)
        assert {b for dev, b in failed if dev == "atsw1"} == z2_blocks | {_p31(d[n]) for n in ("z1-rtsw1", "z1-rtsw2")}
        assert {dev for dev, _ in failed} == {"atsw1", "z1-ctsw1", "z1-ctsw2", "z2-ctsw1", "z2-ctsw2"}
        twin.push("atsw1", "router bgp 65000\n   address-family ipv4\n"
                           "      neighbor FABRIC route-map RM-ZONE-SUMMARIES-IN in\n")
        assert _in_pool(_routes(twin, "atsw1")) == {Z1, Z2}

        # summary-only on one CTSW suppresses its specifics toward its own RTSWs too (why it is not rendered)
        twin.push("z1-ctsw1", f"router bgp 65010\n   aggregate-address {Z1} summary-only\n")
        z1 = _routes(twin, "z1-rtsw1")
        assert len(z1[_p31(d["z1-rtsw2"])]) == 1 and len(z1[Z1]) == 2
        twin.push("z1-ctsw1", f"router bgp 65010\n   aggregate-address {Z1}\n")
        assert len(_routes(twin, "z1-rtsw1")[_p31(d["z1-rtsw2"])]) == 2

        # zone 2's RTSWs stop advertising: no contributing route, so its CTSWs originate no summary
        for rtsw in ("z2-rtsw1", "z2-rtsw2"):
            client = twin.ssh(rtsw, password="YourPaSsWoRd")
            try:
                assert ssh_run(client, "sudo config bgp shutdown all")[0] == 0
            finally:
                client.close()
        assert Z2 not in _routes(twin, "atsw1") and Z1 in _routes(twin, "atsw1")
        rc, report = _cli(state, tmp_path, monkeypatch, "check", "--checks", "zone-summary")
        assert rc == 1
        assert {("atsw1", Z2), ("atsw2", Z2), ("z1-ctsw1", Z2), ("z1-ctsw2", Z2)} == _failed(report)
        missing = next(f for f in report["findings"] if not f["passed"] and f["device"] == "atsw1")
        assert missing["observed"] == "no route"
