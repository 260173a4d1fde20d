"""SONiC `config` verbs an engineer types, over SSH (paramiko): each changes CONFIG_DB as sonic-utilities does or
fails with its text and exit status, and drift made the usual way is what the switch then reports."""

from __future__ import annotations

import ast

import pytest

from tests.twin_site import TwinSite, ssh_run

SONIC = "rtsw3"


@pytest.fixture
def sonic(twin: TwinSite):
    client = twin.ssh(SONIC, password="YourPaSsWoRd")
    yield client
    client.close()


def _port(client, port: str) -> dict:
    rc, out = ssh_run(client, f'sonic-db-cli CONFIG_DB HGETALL "PORT|{port}"')
    assert rc == 0, out
    return ast.literal_eval(out)          # sonic-db-cli prints a Python dict


def test_interface_mtu_speed_and_admin_status_change_config_db(sonic):
    assert ssh_run(sonic, "sudo config interface mtu Ethernet8 1500")[0] == 0
    assert ssh_run(sonic, "sudo config interface speed Ethernet8 100000")[0] == 0
    assert ssh_run(sonic, "sudo config interface startup Ethernet8")[0] == 0
    port = _port(sonic, "Ethernet8")
    assert (port["mtu"], port["speed"], port["admin_status"]) == ("1500", "100000", "up")
    assert ssh_run(sonic, "sudo config interface shutdown Ethernet8")[0] == 0
    assert _port(sonic, "Ethernet8")["admin_status"] == "down"


def test_interface_ip_add_and_remove(sonic):
    assert ssh_run(sonic, "sudo config interface ip add Ethernet8 10.99.0.0/31")[0] == 0
    rc, out = ssh_run(sonic, 'sonic-db-cli CONFIG_DB KEYS "INTERFACE|Ethernet8*"')
    assert "INTERFACE|Ethernet8|10.99.0.0/31" in out
    assert ssh_run(sonic, "sudo config interface ip remove Ethernet8 10.99.0.0/31")[0] == 0
    rc, out = ssh_run(sonic, 'sonic-db-cli CONFIG_DB KEYS "INTERFACE|Ethernet8*"')
    assert "10.99.0.0/31" not in out


@pytest.mark.parametrize(("command", "status", "text"), [
    ("sudo config interface mtu Ethernet999 1500", 1, "Invalid port Ethernet999"),
    ("sudo config interface startup Ethernet999", 2, "Interface name is invalid"),
    ("sudo config interface mtu Ethernet8", 2, "Missing argument"),
    ("sudo config interface fec Ethernet8 bogus", 1, "fec bogus is not in"),
    ("sudo config interface ip add Ethernet8 10.99.0.300/31", 2, "is not a valid IPv4 or IPv6 address"),
    ("sudo config apply-patch", 2, "Missing argument 'PATCH_FILE_PATH'"),
])
def test_refused_the_way_the_real_cli_refuses(sonic, command: str, status: int, text: str):
    rc, out = ssh_run(sonic, command)
    assert rc == status and text in out, out


def test_appl_db_port_table_through_redis_cli(sonic):
    rc, out = ssh_run(sonic, 'redis-cli -n 0 HGETALL "PORT_TABLE:Ethernet8"')
    fields = dict(zip(out.splitlines()[::2], out.splitlines()[1::2], strict=True))
    assert rc == 0 and fields["speed"] and fields["oper_status"] in ("up", "down"), out


def test_apply_patch_help(sonic):
    rc, out = ssh_run(sonic, "config apply-patch --help")
    assert rc == 0 and out.startswith("Usage: config apply-patch [OPTIONS] PATCH_FILE_PATH")
    assert "-d, --dry-run" in out


def test_drift_with_config_interface_mtu_is_seen(twin: TwinSite, sonic):
    twin.fault("drift", device=SONIC, lines=["config interface mtu Ethernet8 1500"])
    assert _port(sonic, "Ethernet8")["mtu"] == "1500"
    with pytest.raises(ValueError, match="Invalid port Ethernet999"):
        twin.fault("drift", device=SONIC, lines=["config interface mtu Ethernet999 1500"])


@pytest.mark.parametrize(("command", "expect"), [("show ecn", "Profile: "), ("show buffer_pool", "watermark")])
def test_show_commands_engineers_type(deployed_twin: TwinSite, command: str, expect: str):
    client = deployed_twin.ssh(SONIC, password="YourPaSsWoRd")
    try:
        rc, out = ssh_run(client, command)
    finally:
        client.close()
    assert rc == 0 and expect in out, out


def test_qos_reload_puts_the_hwsku_qos_back(deployed_twin: TwinSite):
    """`config qos reload` after a deploy: the deployed QoS is replaced by the HWSKU's own (AZURE maps, PFC on 3,4),
    drift the way engineers make it."""
    client = deployed_twin.ssh(SONIC, password="YourPaSsWoRd")
    try:
        before = ssh_run(client, 'sonic-db-cli CONFIG_DB HGET "PORT_QOS_MAP|Ethernet0" pfc_enable')[1].strip()
        rc, out = ssh_run(client, "sudo config qos reload")
        after = ssh_run(client, 'sonic-db-cli CONFIG_DB HGET "PORT_QOS_MAP|Ethernet0" pfc_enable')[1].strip()
        maps = ssh_run(client, 'sonic-db-cli CONFIG_DB KEYS "DSCP_TO_TC_MAP|*"')[1]
    finally:
        client.close()
    assert rc == 0, out
    assert before == "3" and after == "3,4"
    assert "DSCP_TO_TC_MAP|AZURE" in maps
