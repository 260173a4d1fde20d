"""Pure parts of napalm_sonic: merge, GCU patch generation, diff text."""

import json
from pathlib import Path

import jsonpatch
import napalm

from napalm_sonic import configdb
from napalm_sonic.sonic import SonicDriver

EXAMPLE = Path("/work/shared/reference/sonic_example_config_db.json")


def _example() -> dict:
    if EXAMPLE.exists():
        return configdb.normalize(json.loads(EXAMPLE.read_text()))
    return {"PORT": {"Ethernet0": {"admin_status": "up", "mtu": "9100"}}}


def test_get_network_driver_returns_sonic_driver():
    assert napalm.get_network_driver("sonic") is SonicDriver


def test_normalize_stringifies_and_drops_bgpraw():
    doc = configdb.normalize({"bgpraw": "router bgp 1", "PORT": {"Ethernet0": {"mtu": 9100, "x": True}}})
    assert doc == {"PORT": {"Ethernet0": {"mtu": "9100", "x": "true"}}}


def test_deep_merge_keeps_running_fields_and_adds_new():
    running = {"PORT": {"Ethernet0": {"mtu": "9100", "admin_status": "down"}}, "A": {"k": {}}}
    merged = configdb.deep_merge(running, {"PORT": {"Ethernet0": {"admin_status": "up"}}, "B": {"x": {"f": "1"}}})
    assert merged == {"PORT": {"Ethernet0": {"mtu": "9100", "admin_status": "up"}}, "A": {"k": {}},
                      "B": {"x": {"f": "1"}}}
    assert running["PORT"]["Ethernet0"]["admin_status"] == "down"


def test_patch_applies_to_candidate_and_escapes_slash_in_keys():
    running = _example()
    cand = json.loads(json.dumps(running))
    cand["INTERFACE"] = {"Ethernet0": {}, "Ethernet0|10.0.0.0/31": {}}
    cand["PORT"]["Ethernet0"]["mtu"] = "9216"
    del cand["PORT"]["Ethernet4"]["fec"]
    del cand["SCHEDULER"]["scheduler.0"]
    ops = configdb.make_patch(running, cand)
    assert jsonpatch.JsonPatch(ops).apply(running) == cand
    assert {o["op"] for o in ops} <= {"add", "remove", "replace"}
    added_iface = configdb.make_patch({"INTERFACE": {"Ethernet0": {}}}, {"INTERFACE": {"Ethernet0": {}, "Ethernet0|10.0.0.0/31": {}}})
    assert added_iface == [{"op": "add", "path": "/INTERFACE/Ethernet0|10.0.0.0~131", "value": {}}]


def test_patch_empty_when_equal():
    assert configdb.make_patch_phases(_example(), _example()) == []


def test_bgp_neighbor_field_change_is_remove_then_add_in_separate_phase():
    nb = {"asn": "65100", "local_addr": "10.0.0.1", "admin_status": "up", "name": "ctsw1"}
    running = {"BGP_NEIGHBOR": {"10.0.0.0": nb, "10.0.0.2": dict(nb)}}
    cand = {"BGP_NEIGHBOR": {"10.0.0.0": dict(nb, asn="65200"), "10.0.0.2": dict(nb, admin_status="down")}}
    phases = configdb.make_patch_phases(running, cand)
    assert phases[0] == [{"op": "remove", "path": "/BGP_NEIGHBOR/10.0.0.0"}]
    assert {"op": "add", "path": "/BGP_NEIGHBOR/10.0.0.0", "value": cand["BGP_NEIGHBOR"]["10.0.0.0"]} in phases[1]
    # admin_status alone is updated in place (bgpcfgd supports it)
    assert {"op": "replace", "path": "/BGP_NEIGHBOR/10.0.0.2/admin_status", "value": "down"} in phases[1]
    doc = running
    for ops in phases:
        doc = configdb.apply_patch(doc, ops)
    assert doc == cand


def test_bgp_rebuild_of_every_neighbor_removes_table_not_leaving_it_empty():
    running = {"BGP_NEIGHBOR": {"10.0.0.0": {"asn": "1"}}}
    phases = configdb.make_patch_phases(running, {"BGP_NEIGHBOR": {"10.0.0.0": {"asn": "2"}}})
    assert phases[0] == [{"op": "remove", "path": "/BGP_NEIGHBOR"}]


def test_removing_all_keys_removes_the_table():
    ops = configdb.make_patch({"A": {"x": {}}, "B": {"y": {"f": "1"}}}, {"B": {"y": {"f": "1"}}})
    assert ops == [{"op": "remove", "path": "/A"}]


def test_patch_orders_removes_before_adds():
    ops = configdb.make_patch({"T": {"a": {"f": "1"}}, "U": {"k": {}}}, {"T": {"b": {"f": "1"}}, "U": {"k": {}}})
    assert [o["op"] for o in ops] == ["remove", "add"]


def test_diff_text_readable_and_deterministic():
    running = {"PORT": {"Ethernet0": {"admin_status": "down", "mtu": "9100"}, "Ethernet4": {"mtu": "9100"}}}
    cand = {"PORT": {"Ethernet0": {"admin_status": "up", "mtu": "9100"}},
            "BGP_NEIGHBOR": {"10.0.0.1": {"asn": "65100"}}}
    text = configdb.diff_text(running, cand)
    assert text == "\n".join([
        "+ BGP_NEIGHBOR|10.0.0.1",
        "+     asn: 65100",
        "  PORT|Ethernet0",
        "-     admin_status: down",
        "+     admin_status: up",
        "- PORT|Ethernet4",
        "-     mtu: 9100",
    ])
    assert configdb.diff_text(cand, cand) == ""


def test_strict_host_keys_by_default_and_insecure_opt_out():
    assert SonicDriver("h", "u", "p").ssh_options.strict is True
    assert SonicDriver("h", "u", "p", optional_args={"insecure": True}).ssh_options.strict is False
    d = SonicDriver("h", "u", "p", optional_args={"ssh_strict": False, "port": 2201})
    assert d.ssh_options.strict is False and d.ssh_options.port == 2201


def test_checkpoint_times_are_aware_even_without_an_offset():
    """A release that prints checkpoint times without an offset: taken as UTC, so a marker's age can be told."""
    from datetime import UTC, datetime

    driver = SonicDriver("192.0.2.1", "admin", "pw")
    listed = '[{"name": "a", "time": "2026-12-01T12:00:00"}, {"name": "b", "time": "2026-12-01T12:00:00+01:00"}]'
    driver._run = lambda command, stdin=None, timeout=None: (0, listed)       # the switch's answer
    got = dict(driver.list_checkpoints())
    assert got["a"] == datetime(2026, 12, 1, 12, tzinfo=UTC) and got["b"] == datetime(2026, 12, 1, 11, tzinfo=UTC)


def test_rollback_takes_only_a_well_formed_checkpoint_name_from_the_switch():
    """A checkpoint listed by the switch goes back into `config rollback NAME`: a name that is not one word of
    [A-Za-z0-9._-] is never used."""
    driver = SonicDriver("192.0.2.1", "admin", "pw")
    listed = '["napalm_sonic_20261201T120000", "napalm_sonic_20261201T130000; reboot", "napalm_sonic_2026\\u00e9"]'
    driver._run = lambda command, stdin=None, timeout=None: (0, listed)       # the switch's answer
    assert driver._latest_checkpoint() == "napalm_sonic_20261201T120000"


def test_merge_replaces_the_running_ranges_a_target_key_overlaps():
    """A factory switch's lossless PG/queue ranges (`|3-4`) give way to the target's (`|3`); other ports, other
    tables and non-overlapping keys stay."""
    from napalm_sonic.configdb import deep_merge, overlapped_keys

    running = {"BUFFER_PG": {"Ethernet0|0": {"profile": "lossy"}, "Ethernet0|3-4": {"profile": "f"},
                             "Ethernet4|3-4": {"profile": "f"}},
               "BUFFER_QUEUE": {"Ethernet0|0-2": {"profile": "q"}, "Ethernet0|3-4": {"profile": "l"},
                                "Ethernet0|5-6": {"profile": "q"}},
               "PORT": {"Ethernet0|3-4": {"x": "1"}}}
    target = {"BUFFER_PG": {"Ethernet0|3": {"profile": "t"}},
              "BUFFER_QUEUE": {"Ethernet0|3": {"profile": "l"}, "Ethernet0|4-7": {"profile": "q"}},
              "PORT": {"Ethernet0|3": {"x": "2"}}}
    merged = deep_merge(running, target)
    assert merged["BUFFER_PG"] == {"Ethernet0|0": {"profile": "lossy"}, "Ethernet0|3": {"profile": "t"},
                                   "Ethernet4|3-4": {"profile": "f"}}
    assert sorted(merged["BUFFER_QUEUE"]) == ["Ethernet0|0-2", "Ethernet0|3", "Ethernet0|4-7"]
    assert sorted(merged["PORT"]) == ["Ethernet0|3", "Ethernet0|3-4"]         # not a range table
    assert overlapped_keys(running["BUFFER_QUEUE"], target["BUFFER_QUEUE"]) == ["Ethernet0|3-4", "Ethernet0|5-6"]
    assert running["BUFFER_PG"]["Ethernet0|3-4"] == {"profile": "f"}            # the input is not changed


def test_a_config_for_other_hardware_is_named_before_anything_is_pushed():
    from napalm_sonic.configdb import hardware_mismatches

    running = {"DEVICE_METADATA": {"localhost": {"hwsku": "Arista-7060X6-64PE-O128S2"}},
               "PORT": {"Ethernet0": {"alias": "etp1a", "index": "1", "lanes": "17,18,19,20"}}}
    same = {"DEVICE_METADATA": {"localhost": {"hwsku": "Arista-7060X6-64PE-O128S2"}},
            "PORT": {"Ethernet0": {"alias": "etp1a", "index": "1", "lanes": "17,18"}}}         # a breakout
    assert hardware_mismatches(running, same) == []
    other = {"DEVICE_METADATA": {"localhost": {"hwsku": "Nokia-IXR7220-H4-64D"}},
             "PORT": {"Ethernet0": {"alias": "Ethernet1/1", "index": "1"}, "Ethernet2": {"alias": "x"}}}
    assert hardware_mismatches(running, other) == [
        "the switch is HWSKU Arista-7060X6-64PE-O128S2, the config is for Nokia-IXR7220-H4-64D",
        "Ethernet0 alias is etp1a on the switch, Ethernet1/1 in the config",
        "Ethernet2 is not a port of the switch's PORT table"]
    assert hardware_mismatches({}, other) == []          # a switch with nothing yet
