"""What render remembers between devices (equal NIC scripts, a SKU's port answers, SONiC's range texts) changes no
output: each answer equals the one computed afresh, and a different input never gets a remembered answer."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nr_run.intent import compile_site
from nr_run.platforms import registry
from nr_run.platforms.linux import config as linux_config
from nr_run.platforms.sonic import hwsku
from nr_run.platforms.sonic.buffers import sku
from nr_run.platforms.sonic.config import to_json
from nr_run.platforms.sonic.qosview import numbers
from tests.conftest import DC1
from tests.corpus import examples


@pytest.fixture(scope="module")
def dc1():
    return compile_site(DC1)


def test_nic_scripts_of_equal_and_different_settings(dc1) -> None:
    builder = registry.get("linux").config
    gpu = dc1.devices["gpu1"]
    base = builder.structured_config(gpu, dc1)
    other = copy.deepcopy(base)
    other["nics"][0]["mtu"] = base["nics"][0]["mtu"] - 100
    as_text = copy.deepcopy(base)
    as_text["nics"][0]["mtu"] = str(base["nics"][0]["mtu"])      # "9000" is not 9000 (same JSON key would be)
    linux_config._RENDERED.clear()
    first = builder.render(base)
    assert builder.render(other) != first and f"mtu {other['nics'][0]['mtu']}" in builder.render(other)
    assert builder.render(copy.deepcopy(base)) == first == builder._render(base)
    assert builder.render(as_text) == builder._render(as_text)
    assert len(linux_config._RENDERED) == 3


def test_nic_script_cache_is_bounded(dc1, monkeypatch: pytest.MonkeyPatch) -> None:
    builder = registry.get("linux").config
    base = builder.structured_config(dc1.devices["gpu1"], dc1)
    monkeypatch.setattr(linux_config, "_RENDERED_MAX", 4)
    linux_config._RENDERED.clear()
    for mtu in range(5000, 5010):
        changed = copy.deepcopy(base)
        changed["nics"][0]["mtu"] = mtu
        assert f"mtu {mtu}\n" in builder.render(changed)
    assert len(linux_config._RENDERED) <= 4


def test_sku_answers_are_the_computed_ones_and_not_shared(dc1) -> None:
    sonic = [d for d in dc1.devices.values() if d.platform == "sonic"]
    assert sonic
    for dev in sonic:
        prof = sku(dev)
        for itf in dev.interfaces:
            entry = hwsku.port_entry(prof, itf.name, itf.speed_mbps)
            assert entry == hwsku._port_entry(prof, itf.name, itf.speed_mbps)
            entry["lanes"] = "changed"                  # a caller's copy: the next answer is unchanged
            assert hwsku.port_entry(prof, itf.name, itf.speed_mbps)["lanes"] != "changed"
            assert prof.parent_of(itf.name) == prof._parent_of(itf.name)
            assert hwsku.breakout_mode(prof, itf.name, itf.speed_mbps) == \
                hwsku._breakout_mode(prof, itf.name, itf.speed_mbps)
            assert prof.by_name(itf.name) == next((p for p in prof.ports if p.name == itf.name), None)
        with pytest.raises(hwsku.HwskuError):      # a refusal is raised every time, not remembered as an answer
            hwsku.port_entry(prof, "Ethernet99999", 400_000)
        with pytest.raises(hwsku.HwskuError):
            hwsku.port_entry(prof, "Ethernet99999", 400_000)


def test_sonic_range_texts() -> None:
    assert numbers("3,4") == numbers("3-4") == frozenset({3, 4})
    assert numbers("") == frozenset() and numbers("0-2,6") == frozenset({0, 1, 2, 6})
    with pytest.raises(ValueError):
        numbers("x")


def test_pg_rows_are_the_looked_up_ones(dc1) -> None:
    for dev in (d for d in dc1.devices.values() if d.platform == "sonic"):
        prof = sku(dev)
        for speed in {r.speed_mbps for r in prof.pg_rows} | {1}:
            for length in (0, 5, 40, 300, 10**6):
                rows = sorted((r for r in prof.pg_rows if r.speed_mbps == speed), key=lambda r: r.cable_m)
                assert prof.pg_row(speed, length) == next((r for r in rows if r.cable_m >= length), None)


_name = st.text(alphabet=st.characters(codec="utf-8"), max_size=4)
_leaf = st.one_of(_name, st.integers(), st.none(), st.booleans(), st.lists(_name, max_size=2))


@given(st.dictionaries(_name, st.one_of(
    st.dictionaries(_name, st.one_of(st.dictionaries(_name, _leaf, max_size=3), _leaf), max_size=3), _leaf),
    max_size=3))
@settings(max_examples=examples(200), deadline=None)
def test_config_db_text_is_json_dumps_for_any_shape(doc: dict) -> None:
    """The CONFIG_DB layout is checked while it is written: any other shape gives json.dumps' bytes too."""
    assert to_json(doc) == json.dumps(doc, indent=4, sort_keys=True) + "\n"


def test_nic_views_follow_the_nic_script_settings(dc1) -> None:
    builder = registry.get("linux").config
    gpu = dc1.devices["gpu1"]
    structured = builder.structured_config(gpu, dc1)
    linux_config._VIEWS.clear()
    first = builder.qos_view(gpu, structured)
    linux_config._VIEWS.clear()
    assert builder.qos_view(gpu, structured) == first
    off = copy.deepcopy(structured)
    off["nics"][1]["pfc"] = [False] * 8
    view = builder.qos_view(gpu, off)
    name0, name1 = off["nics"][0]["name"], off["nics"][1]["name"]
    assert view.ports[name1].pfc_priorities == frozenset() != first.ports[name1].pfc_priorities
    assert view.ports[name0] == first.ports[name0]


def test_eos_profile_problems_are_reported_per_port_that_uses_the_profile(dc1) -> None:
    builder = registry.get("eos").config
    rtsw = dc1.devices["rtsw1"]
    structured = copy.deepcopy(builder.structured_config(rtsw, dc1))
    structured["qos_profiles"][0]["pfc"]["watchdog"]["action"] = "no-drop"
    users = [i for i in structured["ethernet_interfaces"] if i["service_profile"] == structured["qos_profiles"][0]["name"]]
    view = builder.qos_view(rtsw, structured)
    assert len(users) > 1 and sum("'no-drop'" in p for p in view.watchdog_problems) == len(users)
    assert all(view.ports[i["name"]].pfc_priorities == frozenset({3}) for i in users)
