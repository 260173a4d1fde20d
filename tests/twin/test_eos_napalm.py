"""NAPALM eos driver against the twin: getters and the whole config lifecycle (real driver, real eAPI)."""

from __future__ import annotations

import time

import pyeapi
import pytest
from napalm.base.exceptions import MergeConfigException

from tests.twin_site import TwinSite, wait_until


def test_getters(twin: TwinSite):
    drv = twin.driver("rtsw1")
    try:
        facts = drv.get_facts()
        assert facts["hostname"] == "rtsw1" and facts["vendor"] == "Arista" and facts["model"] == "cEOSLab"
        assert {"Ethernet1", "Ethernet2", "Management0"} <= set(facts["interface_list"])
        ifs = drv.get_interfaces()
        assert ifs["Ethernet1"]["speed"] == 400000.0 and ifs["Ethernet1"]["is_enabled"]
        assert drv.get_lldp_neighbors()["Ethernet1"] == [{"hostname": "ctsw1", "port": "Ethernet1"}]
        assert drv.get_bgp_neighbors() == {}          # day-0 config: no BGP yet
        cfg = drv.get_config()
        assert "hostname rtsw1" in cfg["running"] and "hostname rtsw1" in cfg["startup"]
    finally:
        drv.close()


def test_bad_credentials_rejected(twin: TwinSite):
    a = twin.addresses["rtsw1"]
    conn = pyeapi.client.connect(transport="https", host="127.0.0.1", username="admin", password="wrong",
                                 port=a["port"])
    with pytest.raises(pyeapi.eapilib.ConnectionError):
        pyeapi.client.Node(conn).enable(["show version"])


def test_plain_http_only_when_configured(twin: TwinSite):
    """cEOS's startup config enables eAPI over HTTPS only: plain HTTP is closed until `protocol http`."""
    with pytest.raises(pyeapi.eapilib.ConnectionError):
        twin.eapi("rtsw1", "http").enable(["show version"])
    twin.eapi("rtsw1").config(["management api http-commands", "protocol http"])
    assert twin.eapi("rtsw1", "http").enable(["show hostname"])[0]["result"]["hostname"] == "rtsw1"
    twin.eapi("rtsw1").config(["management api http-commands", "no protocol https"])
    with pytest.raises(pyeapi.eapilib.ConnectionError):
        twin.eapi("rtsw1").enable(["show version"])


def test_merge_compare_commit(twin: TwinSite):
    drv = twin.driver("rtsw2")
    try:
        drv.load_merge_candidate(config="interface Ethernet3\n   description merged-by-test\n")
        diff = drv.compare_config()
        assert [ln for ln in diff.splitlines() if ln.startswith(("+", "-"))] == ["+   description merged-by-test"]
        drv.commit_config()
        assert "description merged-by-test" in drv.get_config(retrieve="running")["running"]
        assert "description merged-by-test" in drv.get_config(retrieve="startup")["startup"]  # write memory
        # committed config persists in the lab state dir
        saved = (twin.state / "devices" / "rtsw2" / "running-config").read_text()
        assert "description merged-by-test" in saved
    finally:
        drv.close()


def test_discard_and_replace(twin: TwinSite):
    drv = twin.driver("ctsw2")
    try:
        drv.load_merge_candidate(config="hostname discarded\n")
        assert "+hostname discarded" in drv.compare_config()
        drv.discard_config()
        assert drv.compare_config() == ""
        assert "hostname ctsw2" in drv.get_config(retrieve="running")["running"]
        running = drv.get_config(retrieve="running")["running"]
        replaced = running.replace("hostname ctsw2", "hostname ctsw2-replaced")
        drv.load_replace_candidate(config=replaced)
        diff = drv.compare_config()
        assert "-hostname ctsw2" in diff and "+hostname ctsw2-replaced" in diff
        drv.commit_config()
        assert drv.get_facts()["hostname"] == "ctsw2-replaced"
        drv.rollback()
        assert drv.get_facts()["hostname"] == "ctsw2"
    finally:
        drv.close()


def test_invalid_line_rejected_running_unchanged(twin: TwinSite):
    drv = twin.driver("rtsw1")
    try:
        before = drv.get_config(retrieve="running")["running"]
        for bad in ("interface Ethernet1\n ip address\n", "interface Ethernet1\n mtu 99999\n",
                    "this is not a command\n"):
            with pytest.raises(MergeConfigException, match=r"1002.*invalid command"):
                drv.load_merge_candidate(config="interface Ethernet1\n description ok\n" + bad)
        assert drv.compare_config() == ""
        assert drv.get_config(retrieve="running")["running"] == before
        sessions = twin.eapi("rtsw1").enable(["show configuration sessions"])[0]["result"]["sessions"]
        assert not [s for s in sessions.values() if s["state"] == "pending"]
    finally:
        drv.close()


def test_commit_timer_reverts_unless_confirmed(twin: TwinSite):
    drv = twin.driver("ctsw1")
    try:
        drv.load_merge_candidate(config="interface Ethernet1\n   description timer-test\n")
        drv.commit_config(revert_in=1)
        assert drv.has_pending_commit()
        assert "description timer-test" in drv.get_config(retrieve="running")["running"]
        wait_until(lambda: not drv.has_pending_commit(), timeout=5)
        assert "description timer-test" not in drv.get_config(retrieve="running")["running"]

        drv.load_merge_candidate(config="interface Ethernet1\n   description confirmed\n")
        drv.commit_config(revert_in=1)
        drv.confirm_commit()
        time.sleep(1.3)            # past the timer a confirmed commit no longer has
        assert not drv.has_pending_commit()
        assert "description confirmed" in drv.get_config(retrieve="running")["running"]
    finally:
        drv.close()


def test_pending_session_blocks_other_driver(twin: TwinSite):
    from napalm.base.exceptions import SessionLockedException

    first = twin.driver("rtsw1")
    second = twin.driver("rtsw1")
    try:
        first.load_merge_candidate(config="interface Ethernet4\n   description first\n")
        second.config_session = "napalm_other"
        with pytest.raises(SessionLockedException):
            second._lock()
        first.discard_config()
        second._lock()
    finally:
        second.config_session = None
        first.close()
        second.close()


def test_commit_rejected_fault(twin: TwinSite):
    drv = twin.driver("rtsw2")
    twin.fault("commit_rejected", device="rtsw2")
    try:
        drv.load_merge_candidate(config="interface Ethernet4\n   description never\n")
        with pytest.raises(pyeapi.eapilib.CommandError, match="rejected"):
            drv.commit_config()
        assert "description never" not in drv.get_config(retrieve="running")["running"]
        drv.discard_config()
    finally:
        twin.clear_faults("commit_rejected")
        drv.close()


def test_drift_and_command_log(twin: TwinSite):
    twin.fault("drift", device="rtsw1", lines=["interface Ethernet2", "description drifted"])
    node = twin.eapi("rtsw1")
    text = node.enable(["show running-config"], encoding="text")[0]["result"]["output"]
    assert "description drifted" in text
    log = (twin.state / "logs" / "rtsw1.log").read_text()
    assert '"show running-config"' in log
