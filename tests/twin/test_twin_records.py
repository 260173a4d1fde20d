"""The twin keeps a per-device command log for every protocol, and sanitized configs hide secrets
(through the real NAPALM drivers)."""

from __future__ import annotations

import json

import napalm
import pytest

from tests.twin.eos_lab import napalm_eos, start_dc1


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    lab = start_dc1(tmp_path_factory.mktemp("twin"))
    yield lab
    lab.stop()


def sonic(lab, host: str):
    drv = napalm.get_network_driver("sonic")("127.0.0.1", "admin", "YourPaSsWoRd", timeout=30,
                                             optional_args={"port": lab.addresses[host]["port"], "ssh_strict": False})
    drv.open()
    return drv


def log_commands(lab, host: str) -> list[str]:
    lines = (lab.state_dir / "logs" / f"{host}.log").read_text().splitlines()
    return [json.loads(line.split("\t", 2)[2]) for line in lines]


def test_eos_sanitized_config_masks_secrets(lab):
    drv = napalm_eos(lab, "rtsw2")
    try:
        drv.load_merge_candidate(config="username ops privilege 15 secret sha512 $6$saltsalt$hashhash\n")
        drv.commit_config()
        assert "$6$saltsalt$hashhash" in drv.get_config(retrieve="running")["running"]
        masked = drv.get_config(retrieve="running", sanitized=True)["running"]
        assert "username ops privilege 15 secret sha512 <removed>" in masked and "hashhash" not in masked
    finally:
        drv.close()


def test_sonic_sanitized_config_masks_secrets(lab):
    drv = sonic(lab, "rtsw3")
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


def test_every_protocol_logs_commands_per_device(lab):
    drv = sonic(lab, "rtsw4")
    try:
        drv.get_facts()
    finally:
        drv.close()
    assert any(c.startswith("show version") for c in log_commands(lab, "rtsw4"))
    eos = napalm_eos(lab, "ctsw2")
    try:
        eos.get_lldp_neighbors()
    finally:
        eos.close()
    assert "show lldp neighbors" in log_commands(lab, "ctsw2")
