"""Deploy policy: secrets never reach printed/saved diffs; removing management access is refused."""

from __future__ import annotations

from nr_run.platforms import registry


def redact(diff: str, platform: str) -> str:
    return registry.get(platform).deploy.redact(diff)


def lockouts(diff: str, platform: str) -> list[str]:
    return registry.get(platform).deploy.lockouts(diff)

EOS_DIFF = """\
-username admin privilege 15 role network-admin secret sha512 $6$salt$hash
+username ops privilege 15 secret 0 plaintext
-snmp-server community public ro
 interface Ethernet1
-   mtu 1500
+   mtu 9214
"""

SONIC_DIFF = """\
- TACPLUS_SERVER|10.0.0.9
-     passkey: s3cret
-     priority: 1
  MGMT_INTERFACE|eth0|172.20.20.23/24
-     gwaddr: 172.20.20.1
- MGMT_INTERFACE|eth0|172.20.20.99/24
"""


def test_eos_secrets_are_masked():
    text = redact(EOS_DIFF, "eos")
    assert "$6$salt$hash" not in text and "plaintext" not in text and "public" not in text
    assert "-username admin privilege 15 role network-admin secret sha512 <removed>" in text
    assert "+   mtu 9214" in text


def test_sonic_secrets_are_masked():
    text = redact(SONIC_DIFF, "sonic")
    assert "s3cret" not in text and "-     passkey: <removed>" in text and "-     priority: 1" in text


def test_removing_management_access_is_detected():
    assert lockouts(EOS_DIFF, "eos") == ["username admin privilege 15 role network-admin secret sha512 $6$salt$hash"]
    assert lockouts(SONIC_DIFF, "sonic") == ["TACPLUS_SERVER|10.0.0.9", "MGMT_INTERFACE|eth0|172.20.20.99/24"]
    assert lockouts("+username ops privilege 15\n-   mtu 1500\n", "eos") == []
