"""napalm_sonic against the SONiC twin over SSH: the config lifecycle (acceptance, issue 4)."""

from __future__ import annotations

import json
import time

import pytest
from napalm.base.exceptions import CommitError

from tests.twin_site import TwinSite


@pytest.fixture
def dev(twin: TwinSite):
    driver = twin.driver("rtsw4")     # factory config: the twin fixture reset the lab to day 0
    yield driver
    driver.close()


def _running(d) -> dict:
    return json.loads(d.get_config(retrieve="running")["running"])


def test_facts_and_factory_default(dev):
    facts = dev.get_facts()
    assert facts["hostname"] == "rtsw4" and facts["model"] == "Arista-7060X6-64PE-O128S2"
    assert facts["interface_list"] == ["Ethernet0", "Ethernet8", "Ethernet16", "Ethernet24"]
    ifs = dev.get_interfaces()
    assert ifs["Ethernet0"]["is_enabled"] is False and ifs["Ethernet0"]["speed"] == 400000.0


def test_merge_diff_commit_then_identical_load_diffs_empty(dev):
    frag = {"PORT": {"Ethernet24": {"description": "merged-by-test"}}}
    dev.load_merge_candidate(config=json.dumps(frag))
    diff = dev.compare_config()
    assert diff == "  PORT|Ethernet24\n+     description: merged-by-test"
    dev.commit_config()
    assert _running(dev)["PORT"]["Ethernet24"]["description"] == "merged-by-test"
    assert "merged-by-test" in dev.get_config(retrieve="startup")["startup"]   # saved
    dev.load_merge_candidate(config=json.dumps(frag))
    assert dev.compare_config() == ""


def test_discard(dev):
    dev.load_merge_candidate(config=json.dumps({"PORT": {"Ethernet16": {"mtu": "9000"}}}))
    assert dev.compare_config()
    dev.discard_config()
    assert dev.compare_config() == ""
    assert _running(dev)["PORT"]["Ethernet16"]["mtu"] == "9100"


def test_rejected_patch_leaves_running_untouched(dev):
    before = _running(dev)
    dev.load_merge_candidate(config=json.dumps({"QUEUE": {"Ethernet0|3": {"scheduler": "nosuch"}}}))
    with pytest.raises(CommitError) as err:
        dev.commit_config()
    assert "Failed to apply patch" in str(err.value) and "nosuch" in str(err.value)
    assert _running(dev) == before


def test_replace_and_rollback(dev):
    before = _running(dev)
    doc = json.loads(json.dumps(before))
    doc["PORT"]["Ethernet0"]["admin_status"] = "up"
    doc["PORT"]["Ethernet24"].pop("description", None)
    doc["LOOPBACK_INTERFACE"] = {"Loopback0": {}, "Loopback0|10.255.1.4/32": {}}
    dev.load_replace_candidate(config=json.dumps(doc))
    assert "+ LOOPBACK_INTERFACE|Loopback0|10.255.1.4/32" in dev.compare_config()
    dev.commit_config()
    assert _running(dev) == doc
    dev.rollback()
    assert _running(dev) == before


def test_revert_in_without_confirm_reverts(dev):
    before = _running(dev)
    dev.load_merge_candidate(config=json.dumps({"PORT": {"Ethernet8": {"mtu": "9214"}}}))
    dev.commit_config(revert_in=1)
    assert dev.has_pending_commit()
    assert _running(dev)["PORT"]["Ethernet8"]["mtu"] == "9214"
    time.sleep(1.3)
    assert not dev.has_pending_commit()
    assert _running(dev) == before


def test_revert_in_confirmed_stays(dev):
    dev.load_merge_candidate(config=json.dumps({"PORT": {"Ethernet8": {"fec": "none"}}}))
    dev.commit_config(revert_in=30)
    dev.confirm_commit()
    assert not dev.has_pending_commit()
    assert _running(dev)["PORT"]["Ethernet8"]["fec"] == "none"
    dev.load_merge_candidate(config=json.dumps({"PORT": {"Ethernet8": {"fec": "rs"}}}))
    dev.commit_config()


def test_cli_through_interactive_shell(dev):
    out = dev.cli(["show interfaces status"])["show interfaces status"]
    assert "Ethernet0" in out and "Asym PFC" in out
