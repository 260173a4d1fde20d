"""Property tests of napalm_sonic's JSON Patch generation: for any running/candidate pair, the GCU
phases turn running into candidate, never leave an empty table (GCU refuses those) and rebuild a BGP
neighbor whose non-admin fields change (bgpcfgd applies only admin_status in place)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from napalm_sonic.configdb import apply_patch, make_patch, make_patch_phases
from tests.corpus import examples

TABLES = ["PORT", "INTERFACE", "BGP_NEIGHBOR", "PFC_WD", "LOOPBACK_INTERFACE"]
keys = st.sampled_from(["Ethernet0", "Ethernet8", "Ethernet0|10.0.0.1/31", "10.254.0.0", "10.254.0.2",
                        "GLOBAL", "Loopback0|10.255.1.3/32"])
fields = st.dictionaries(st.sampled_from(["asn", "admin_status", "mtu", "speed", "name", "action"]),
                         st.sampled_from(["up", "down", "9214", "1500", "65100", "65101", "drop"]), max_size=4)
tables = st.dictionaries(keys, fields, min_size=1, max_size=5)
config_db = st.dictionaries(st.sampled_from(TABLES), tables, max_size=5)


def without_empty_tables(doc: dict) -> dict:
    return {t: v for t, v in doc.items() if v}


@settings(max_examples=examples(300), deadline=None)
@given(running=config_db, candidate=config_db)
def test_phases_turn_running_into_candidate_without_empty_tables(running, candidate):
    doc = running
    for phase in make_patch_phases(running, candidate):
        assert phase and {op["op"] for op in phase} <= {"add", "remove", "replace"}
        doc = apply_patch(doc, phase)
        assert all(doc[t] for t in doc), f"phase left an empty table: {phase}"
    assert doc == without_empty_tables(candidate)


@settings(max_examples=examples(200), deadline=None)
@given(doc=config_db)
def test_identical_documents_need_no_patch(doc):
    assert make_patch(doc, doc) == []


@settings(max_examples=examples(200), deadline=None)
@given(running=config_db, asn=st.sampled_from(["65200", "65300"]))
def test_bgp_neighbor_asn_change_is_a_remove_then_add(running, asn):
    running = {**running, "BGP_NEIGHBOR": {"10.254.0.0": {"asn": "65100", "admin_status": "up"},
                                           "10.254.0.2": {"asn": "65100", "admin_status": "up"}}}
    candidate = {**running, "BGP_NEIGHBOR": {**running["BGP_NEIGHBOR"],
                                             "10.254.0.0": {"asn": asn, "admin_status": "up"}}}
    phases = make_patch_phases(running, candidate)
    assert phases[0] == [{"op": "remove", "path": "/BGP_NEIGHBOR/10.254.0.0"}]
    assert {"op": "add", "path": "/BGP_NEIGHBOR/10.254.0.0", "value": {"asn": asn, "admin_status": "up"}} in phases[1]
    # an admin_status change alone is applied in place
    shut = {**running, "BGP_NEIGHBOR": {**running["BGP_NEIGHBOR"],
                                        "10.254.0.2": {"asn": "65100", "admin_status": "down"}}}
    assert make_patch_phases(running, shut) == [[
        {"op": "replace", "path": "/BGP_NEIGHBOR/10.254.0.2/admin_status", "value": "down"}]]
