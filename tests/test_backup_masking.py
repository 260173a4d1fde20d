"""Backups are masked exactly as diffs are: an EOS switch carrying SNMP communities, SNMPv3 auth/priv keys and
an NTP key is deployed through the CLI; its pre-deploy backup and the run's diffs hold none of them, and the
policy masks each kind the same way in a diff line and a config line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from nr_run.platforms import registry
from tests.conftest import DC1
from tests.twin_site import run_json

SECRETS = {"COMMUNITY_RO": "snmp-server community COMMUNITY_RO ro",
           "HOSTCOMM": "snmp-server host 192.0.2.10 version 2c HOSTCOMM",
           "AUTHKEY123": "snmp-server user ops opsgroup v3 auth sha AUTHKEY123 priv aes PRIVKEY456",
           "PRIVKEY456": "snmp-server user ops opsgroup v3 auth sha AUTHKEY123 priv aes PRIVKEY456",
           "NTPKEY789": "ntp authentication-key 3 md5 NTPKEY789"}


def test_a_diff_line_and_a_config_line_are_masked_alike():
    policy = registry.get("eos").deploy
    for secret, line in SECRETS.items():
        assert secret not in policy.redact(line), line
        assert secret not in policy.redact(f"+{line}"), line
        assert secret not in policy.redact(f"-{line}"), line


def test_eos_backups_hold_no_secret(deployed_twin, tmp_path, capsys):
    lines = sorted(set(SECRETS.values()))
    deployed_twin.eapi("rtsw1").config(lines)
    running = deployed_twin.running("rtsw1")
    assert all(s in running for s in SECRETS), running            # the switch holds them in clear
    inv = tmp_path / "inv"
    shutil.copytree(DC1, inv / "dc1")
    fabric = inv / "dc1" / "fabric.yaml"
    data = yaml.safe_load(fabric.read_text())
    data["roce_profiles"]["roce"]["ecn"]["min_kbytes"] = 200
    fabric.write_text(yaml.safe_dump(data, sort_keys=False))
    rc, report = run_json(deployed_twin, capsys, "deploy", "--inventory-dir", str(inv), "--hosts", "rtsw1",
                          "--commit", "--yes", "--confirm-timeout", "60")
    # the other switches still run the old ECN threshold: the final check reports them as pre-existing
    assert {d["device"]: d["state"] for d in report["devices"]}["rtsw1"] == "confirmed", report["message"]
    run = Path(report["artifacts"])
    backup = (run / "backup" / "rtsw1.running").read_text()
    assert "snmp-server community" in backup and "ntp authentication-key" in backup, [ln for ln in backup.splitlines() if "snmp" in ln or "ntp" in ln]
    written = [p.read_text(errors="replace") for p in run.rglob("*") if p.is_file()]
    written.append((deployed_twin.artifacts / "audit.jsonl").read_text())
    for secret in SECRETS:
        assert not any(secret in text for text in written), secret
    assert json.dumps(report).count("AUTHKEY123") == 0
