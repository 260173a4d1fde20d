"""Growth renumbers nothing (hypothesis): a star or multi-zone site, and the same site grown by a unit, a zone,
a server, a CTSW or an ATSW inside its plan, compile to intents where every device of the first keeps its
loopback, ASN, host block and every port it had, with the same peer and address."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms.site import load_site
from tests.sitegen import SmallSite, write_shaped_site

GROWTH = ("unit", "zone", "server", "ctsw", "atsw")


def grown(spec: SmallSite, step: str) -> SmallSite:
    if step == "unit":
        return replace(spec, rtsw_platforms=spec.rtsw_platforms + spec.rtsw_platforms[:spec.rails])
    if step == "zone":
        return replace(spec, zones=spec.zones + 1)
    if step == "server":
        return replace(spec, servers_per_unit=spec.servers_per_unit + 1)
    if step == "ctsw":
        return replace(spec, ctsw_platforms=spec.ctsw_platforms + ("sonic",))
    return replace(spec, atsw_platforms=spec.atsw_platforms + ("eos",))


@st.composite
def growths(draw: st.DrawFn) -> tuple[SmallSite, str]:
    shape = draw(st.sampled_from(["star", "multi-zone"]))
    rails = draw(st.integers(1, 2))
    platforms = st.sampled_from(["eos", "sonic"])
    spec = SmallSite(
        shape=shape, rails=rails, zones=draw(st.integers(1, 2)),
        rtsw_platforms=tuple(draw(st.lists(platforms, min_size=rails, max_size=rails))) * draw(st.integers(1, 2)),
        ctsw_platforms=tuple(draw(st.lists(platforms, min_size=1, max_size=2))),
        atsw_platforms=("eos",) * draw(st.integers(1, 2)),      # SONiC ATSWs are refused (sonic-aggregation)
        servers_per_unit=draw(st.integers(1, 2)),
        nics_per_leaf=draw(st.integers(1, 2)) if shape == "star" else 1,
        asn4=draw(st.booleans()), pool_seed=draw(st.integers(0, 49)), sonic_lanes=8,
    )
    steps = ("unit", "server") if shape == "star" else GROWTH
    return spec, draw(st.sampled_from(steps))


def _compile(spec: SmallSite, room: SmallSite) -> FabricIntent:
    site = write_shaped_site(Path(tempfile.mkdtemp(prefix="grow-")) / "inventory", spec, room)
    intent, findings = load_site(site)
    errors = [f for f in findings if f.severity == "error"]
    assert intent is not None and not errors, errors
    return intent


def _identity(dev: DeviceIntent) -> dict[str, object]:
    return {"asn": dev.asn, "loopback": dev.loopback, "host_block": dev.host_block,
            "zone_summary": dev.zone_summary,
            "ports": {i.name: (i.peer_device, i.peer_port, i.address) for i in dev.interfaces},
            "nics": {n.name: (n.peer_device, n.peer_port, n.address) for n in dev.nics}}


def assert_nothing_renumbers(before: FabricIntent, after: FabricIntent) -> None:
    for name, dev in before.devices.items():
        assert name in after.devices, f"{name} disappeared"
        old, new = _identity(dev), _identity(after.devices[name])
        for key in ("asn", "loopback", "host_block", "zone_summary"):
            assert old[key] == new[key], (name, key, old[key], new[key])
        for key in ("ports", "nics"):
            kept, now = old[key], new[key]
            assert isinstance(kept, dict) and isinstance(now, dict)
            for port, value in kept.items():
                assert now.get(port) == value, (name, port, value, now.get(port))


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(growths())
def test_growth_inside_the_plan_renumbers_nothing(case: tuple[SmallSite, str]) -> None:
    spec, step = case
    bigger = grown(spec, step)
    before, after = _compile(spec, bigger), _compile(bigger, bigger)
    assert len(after.devices) > len(before.devices)
    assert_nothing_renumbers(before, after)


def test_growth_outside_the_plan_is_refused_naming_the_key(tmp_path: Path) -> None:
    """A unit beyond plan.units_per_zone is refused (it would need a new plan, which renumbers)."""
    spec = SmallSite(shape="multi-zone", rails=1, rtsw_platforms=("eos",), ctsw_platforms=("eos",),
                     atsw_platforms=("eos",))
    room = spec                             # plan: 2 units per zone
    big = replace(spec, rtsw_platforms=("eos", "eos", "eos"))
    site = write_shaped_site(tmp_path / "inventory", big, room)
    intent, findings = load_site(site)
    errors = [f for f in findings if f.severity == "error"]
    assert intent is None and errors
    assert {(f.rule, f.field) for f in errors} == {("shape", "data.su")}
    assert all("plan.units_per_zone" in f.message for f in errors)


def test_a_star_grows_into_a_clos_without_renumbering(tmp_path: Path) -> None:
    """star1 plus two CTSWs and a leaf-spine rule under the same plan: a clos in which every device of the star
    keeps its loopback, ASN, host block and ports (the RTSWs gain their reserved uplinks)."""
    import shutil

    import yaml

    from tests.conftest import REPO

    star = REPO / "inventory" / "star1"
    grown_site = tmp_path / "star1"
    shutil.copytree(star, grown_site)
    fabric = yaml.safe_load((grown_site / "fabric.yaml").read_text())
    fabric["shape"] = "clos"
    fabric["roles"]["ctsw"] = dict(fabric["roles"]["rtsw"])
    fabric["hardware"]["eos-ctsw"] = {"platform": "eos", "model": "cEOSLab", "port_name": "Ethernet{n}",
                                      "first_port": 1, "lanes_per_port": 8, "ports": 32, "speed": "400G",
                                      "downlinks": {"from": 0}}
    fabric["cabling"]["rules"].append({"type": "leaf-spine", "speed": "400G", "cable_length_m": 30})
    fabric["policy"] = {"min_ctsw": 2}
    (grown_site / "fabric.yaml").write_text(yaml.safe_dump(fabric, sort_keys=False))
    hosts = yaml.safe_load((grown_site / "hosts.yaml").read_text())
    for i in (1, 2):
        hosts[f"ctsw{i}"] = {"hostname": f"172.22.20.{10 + i}", "groups": ["ctsw", "eos"],
                             "data": {"role": "ctsw", "index": i, "hardware": "eos-ctsw"}}
    (grown_site / "hosts.yaml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    before, _ = load_site(star)
    after, findings = load_site(grown_site)
    assert before is not None and after is not None, [f for f in findings if f.severity == "error"]
    assert after.shape == "clos" and {p.peer_device for p in after.devices["rtsw1"].bgp.peers} == {"ctsw1", "ctsw2"}
    assert_nothing_renumbers(before, after)
