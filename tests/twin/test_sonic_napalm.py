"""napalm_sonic against the SONiC twin over SSH: the config lifecycle."""

from __future__ import annotations

import json
import subprocess
import time

import napalm
import pytest
from napalm.base.exceptions import CommitError, ConnectionException

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
    # a factory switch has every port of its HWSKU's port_config.ini (128 x 400G and 2 x 10G here)
    assert len(facts["interface_list"]) == 130 and facts["interface_list"][:3] == ["Ethernet0", "Ethernet4", "Ethernet8"]
    assert {"Ethernet0", "Ethernet8", "Ethernet16", "Ethernet24"} <= set(facts["interface_list"])
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
    # the window counts from the timer, armed before the apply: it must outlast the commit itself
    dev.commit_config(revert_in=4)
    assert dev.has_pending_commit()
    assert _running(dev)["PORT"]["Ethernet8"]["mtu"] == "9214"
    deadline = time.monotonic() + 15
    while dev.has_pending_commit() and time.monotonic() < deadline:
        time.sleep(0.2)
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


def test_cli_on_exec_channels(dev):
    out = dev.cli(["show interfaces status", "show nosuchthing"])
    assert "Ethernet0" in out["show interfaces status"] and "Asym PFC" in out["show interfaces status"]
    assert "Error" in out["show nosuchthing"] or "Usage" in out["show nosuchthing"]


def _reads(twin: TwinSite, host: str) -> int:
    """How many times the switch was asked for its running config (its command log; none yet after a reset)."""
    try:
        return sum(1 for c in twin.log_commands(host) if c == "show runningconfiguration all")
    except FileNotFoundError:
        return 0


def test_a_loaded_candidate_reads_the_running_config_once_and_a_commit_reads_again(twin: TwinSite, dev):
    before = _reads(twin, "rtsw4")
    dev.load_merge_candidate(config=json.dumps({"PORT": {"Ethernet24": {"description": "once"}}}))
    diff = dev.compare_config()
    running = _running(dev)                        # what the candidate was built on
    assert "description: once" in diff and "once" not in json.dumps(running)
    assert _reads(twin, "rtsw4") == before + 1
    dev.commit_config()
    # the switch changed: the next read goes to it, not to the snapshot taken at load
    assert _running(dev)["PORT"]["Ethernet24"]["description"] == "once"
    dev.load_merge_candidate(config=json.dumps({"PORT": {"Ethernet24": {"description": "once"}}}))
    assert dev.compare_config() == ""


def test_rollback_forgets_the_loaded_candidate_and_its_snapshot(dev):
    dev.load_merge_candidate(config=json.dumps({"PORT": {"Ethernet16": {"description": "first"}}}))
    dev.commit_config()
    dev.load_merge_candidate(config=json.dumps({"PORT": {"Ethernet16": {"description": "second"}}}))
    dev.rollback()
    assert "description" not in _running(dev)["PORT"]["Ethernet16"]
    assert dev.compare_config() == ""


def _keyscan(port: int) -> str:
    out = subprocess.run(["ssh-keyscan", "-p", str(port), "127.0.0.1"], capture_output=True, text=True, timeout=20)
    assert out.stdout.strip(), out.stderr
    return out.stdout


def test_host_keys_are_checked_by_default(twin: TwinSite, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))          # an empty ~/.ssh/known_hosts
    port = twin.addresses["rtsw4"]["port"]
    unknown = napalm.get_network_driver("sonic")("127.0.0.1", "admin", "YourPaSsWoRd", optional_args={"port": port})
    with pytest.raises(ConnectionException, match="not found in known_hosts"):
        unknown.open()
    known = tmp_path / "lab_known_hosts"
    known.write_text(_keyscan(port))
    drv = napalm.get_network_driver("sonic")("127.0.0.1", "admin", "YourPaSsWoRd", optional_args={
        "port": port, "alt_host_keys": True, "alt_key_file": str(known)})
    drv.open()
    try:
        assert drv.get_facts()["hostname"] == "rtsw4"
    finally:
        drv.close()
    # another key under the switch's name (a replaced or spoofed switch) is refused, and not learned
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True)
    blob = (tmp_path / "other.pub").read_text().split()[1]
    known.write_text(f"[127.0.0.1]:{port} ssh-ed25519 {blob}\n")
    spoofed = napalm.get_network_driver("sonic")("127.0.0.1", "admin", "YourPaSsWoRd", optional_args={
        "port": port, "alt_host_keys": True, "alt_key_file": str(known)})
    with pytest.raises(ConnectionException, match="does not match"):
        spoofed.open()
    assert known.read_text() == f"[127.0.0.1]:{port} ssh-ed25519 {blob}\n"


def test_an_ssh_config_names_the_switch(twin: TwinSite, tmp_path):
    """HostName and Port from an ssh_config entry (netmiko's ssh_config_file option, same meaning)."""
    config = tmp_path / "ssh_config"
    config.write_text(f"Host leaf-rtsw4\n  HostName 127.0.0.1\n  Port {twin.addresses['rtsw4']['port']}\n")
    drv = napalm.get_network_driver("sonic")("leaf-rtsw4", "admin", "YourPaSsWoRd", optional_args={
        "ssh_config_file": str(config), "ssh_strict": False})
    drv.open()
    try:
        assert drv.get_facts()["hostname"] == "rtsw4"
    finally:
        drv.close()


def test_output_beyond_the_limit_is_refused(dev, monkeypatch):
    """A switch that answers with more than the driver holds in memory fails the read instead of growing it."""
    from napalm_sonic import ssh

    monkeypatch.setattr(ssh, "MAX_OUTPUT", 200)       # the factory running config is larger than this
    with pytest.raises(Exception, match="more than 200 bytes of output"):
        dev.get_config(retrieve="running")
    monkeypatch.undo()
    assert "DEVICE_METADATA" in _running(dev)        # the connection is still usable
