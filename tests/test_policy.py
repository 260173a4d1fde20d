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


RUNNING = """! device: rtsw1 (cEOS-lab)
hostname rtsw1
username admin privilege 15 role network-admin secret sha512 $6$abc
username ops role network-operator secret sha512 $6$def
aaa authorization exec default local
role ro-fabric
   10 permit command show .*
!
interface Ethernet1
   description old
end
"""


def test_eos_replace_carries_local_users_aaa_and_roles_over_only() -> None:
    policy = registry.get("eos").deploy
    out = policy.replace_candidate(RUNNING, "hostname rtsw1\ninterface Ethernet1\n   description new\nend\n")
    lines = out.splitlines()
    assert lines[-1] == "end" and lines.count("end") == 1
    assert "username ops role network-operator secret sha512 $6$def" in lines
    assert "aaa authorization exec default local" in lines
    assert lines[lines.index("role ro-fabric") + 1] == "   10 permit command show .*"     # the block, whole
    assert "   description old" not in lines and lines.count("hostname rtsw1") == 1          # nothing else


def test_eos_replace_does_not_duplicate_what_the_candidate_configures() -> None:
    policy = registry.get("eos").deploy
    candidate = "username admin privilege 15 role network-admin secret sha512 $6$abc\n"
    out = policy.replace_candidate(RUNNING, candidate)
    assert out.splitlines().count("username admin privilege 15 role network-admin secret sha512 $6$abc") == 1
    assert policy.replace_candidate("hostname x\n", candidate) == candidate      # nothing to keep: unchanged
