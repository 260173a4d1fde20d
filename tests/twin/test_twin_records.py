"""The twin keeps a per-device command log for every protocol, and sanitized configs hide secrets
(through the real NAPALM drivers)."""

from __future__ import annotations

import json

from tests.twin_site import TwinSite


def test_eos_sanitized_config_masks_secrets(twin: TwinSite):
    drv = twin.driver("rtsw2")
    try:
        drv.load_merge_candidate(config="username ops privilege 15 secret sha512 $6$saltsalt$hashhash\n")
        drv.commit_config()
        assert "$6$saltsalt$hashhash" in drv.get_config(retrieve="running")["running"]
        masked = drv.get_config(retrieve="running", sanitized=True)["running"]
        assert "username ops privilege 15 secret sha512 <removed>" in masked and "hashhash" not in masked
    finally:
        drv.close()


def test_sonic_sanitized_config_masks_secrets(twin: TwinSite):
    drv = twin.driver("rtsw3")
    try:
        drv.load_merge_candidate(config=json.dumps(
            {"DEVICE_NEIGHBOR_METADATA": {"ctsw1": {"hwsku": "cEOSLab", "mgmt_addr": "172.20.20.11"}},
             "TACPLUS_SERVER": {"10.0.0.9": {"priority": "1", "passkey": "tacacs-s3cret"}}}))
        drv.commit_config()
        assert "tacacs-s3cret" in drv.get_config(retrieve="running")["running"]
        masked = drv.get_config(retrieve="running", sanitized=True)["running"]
        assert "tacacs-s3cret" not in masked and "<removed>" in masked
    finally:
        drv.close()


def test_every_protocol_logs_commands_per_device(twin: TwinSite):
    drv = twin.driver("rtsw4")
    try:
        drv.get_facts()
    finally:
        drv.close()
    assert any(c.startswith("show version") for c in twin.log_commands("rtsw4"))
    eos = twin.driver("ctsw2")
    try:
        eos.get_lldp_neighbors()
    finally:
        eos.close()
    assert "show lldp neighbors" in twin.log_commands("ctsw2")
