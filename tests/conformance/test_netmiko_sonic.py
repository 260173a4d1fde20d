"""netmiko, unchanged (device_type linux, as for community SONiC), against the deployed twin's SONiC switches:
the commands an engineer types on a SONiC 202305 switch answer in SONiC's formats, and a GPU server's shell lets
netmiko log out at once.

Formats are checked against published samples: ntc-templates' SONiC test data (tests/sonic/*.raw:
sonic_linux_show_version, sonic_linux_portstat, sonic_linux_show_lldp_table, sonic_linux_show_ip_bgp_summary
for FRR's text) and sonic-utilities' own headers (`Neighbhor` is sonic-utilities' spelling in its bgp summary).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from netmiko import ConnectHandler

from nr_run.runbooks.render import render_device
from tests.twin_site import CREDS, FABRIC, TwinSite

# command -> a line (regex) its output must contain: the format's own header or key
COMMANDS: dict[str, str] = {
    "show version": r"^SONiC Software Version: SONiC\.\d{8}\.\d+$",
    "show platform summary": r"^HwSKU: ",
    "show interfaces status": r"Interface\s+Lanes\s+Speed\s+MTU\s+FEC\s+Alias\s+Vlan\s+Oper\s+Admin",
    "show interfaces counters": r"IFACE\s+STATE\s+RX_OK\s+RX_BPS\s+RX_UTIL\s+RX_ERR\s+RX_DRP\s+RX_OVR\s+TX_OK",
    "show interfaces counters errors": r"IFACE\s+STATE\s+RX_ERR\s+RX_DRP\s+RX_OVR\s+TX_ERR\s+TX_DRP\s+TX_OVR",
    "show interfaces description": r"Interface\s+Oper\s+Admin\s+Alias\s+Description",
    "show interfaces alias": r"Name\s+Alias",
    "show ip interfaces": r"Interface\s+Master\s+IPv4 address/mask\s+Admin/Oper\s+BGP Neighbor\s+Neighbor IP",
    "show ip route": r"^B>\* \d+\.\d+\.\d+\.\d+/\d+ \[20/0\] via ",
    "show ip bgp summary": r"Neighbhor\s+V\s+AS\s+MsgRcvd\s+MsgSent\s+TblVer\s+InQ\s+OutQ\s+Up/Down\s+State/PfxRcd",
    "vtysh -c 'show ip bgp summary'": r"Neighbor\s+V\s+AS\s+MsgRcvd\s+MsgSent\s+TblVer\s+InQ\s+OutQ\s+Up/Down\s+State/PfxRcd",
    "vtysh -c 'show ip bgp summary json'": r'"ipv4Unicast"',
    "show runningconfiguration bgp": r"^router bgp \d+",
    "show lldp table": r"LocalPort\s+RemoteDevice\s+RemotePortID\s+Capability\s+RemotePortDescr",
    "show lldp neighbors": r"^Interface:\s+Ethernet\d+, via: LLDP",
    "show pfc counters": r"Port Rx\s+PFC0",
    "show pfc priority": r"Interface\s+Lossless priorities",
    "show queue counters": r"Port\s+TxQ\s+Counter/pkts",
    "show buffer_pool watermark": r"^Shared pool maximum occupancy:",
    "show priority-group watermark shared": r"^Ingress shared pool occupancy per PG:",
    "show priority-group persistent-watermark headroom": r"^Ingress headroom per PG:",
    "show pfcwd config": r"PORT\s+ACTION\s+DETECTION TIME",
    "show pfcwd stats": r"QUEUE\s+STATUS",
    "mmuconfig -l": r"^Pool: ingress_lossless_pool",
    "ecnconfig -l": r"^Profile: ",
    "redis-cli -n 4 HGETALL 'DEVICE_METADATA|localhost'": r"^hostname$",
    "sonic-db-cli CONFIG_DB KEYS 'PORT|*'": r"^PORT\|Ethernet0$",
    "sonic-cfggen -d --print-data": r'"DEVICE_METADATA"',
    "docker ps": r"CONTAINER ID\s+IMAGE\s+COMMAND",
}
REFUSALS = ("command not found", "No such command", "% Unknown command", "not modelled", "Traceback")


@pytest.fixture(scope="module")
def sonic_twin(dc1_lab: Path, dc1_deployed: str, tmp_path_factory: pytest.TempPathFactory) -> TwinSite:
    from nr_run.lab.twin.lab import lab_reset

    lab_reset(dc1_lab, dc1_deployed)
    return TwinSite(dc1_lab, tmp_path_factory.mktemp("netmiko"))


def _connect(site: TwinSite, host: str, platform: str) -> Any:
    user, password = CREDS[platform]
    return ConnectHandler(device_type="linux", host="127.0.0.1", port=site.addresses[host]["port"],
                          username=user, password=password, ssh_strict=False, system_host_keys=False,
                          allow_agent=False, use_keys=False, fast_cli=True)


@pytest.fixture(scope="module")
def rtsw3(sonic_twin: TwinSite) -> Iterator[Any]:
    conn = _connect(sonic_twin, "rtsw3", "sonic")
    yield conn
    conn.disconnect()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_answers_in_sonic_format(rtsw3: Any, command: str):
    out = rtsw3.send_command(command, read_timeout=20)
    assert not any(r in out for r in REFUSALS), out
    assert re.search(COMMANDS[command], out, re.MULTILINE), out


def test_outputs_agree_with_the_fabric(rtsw3: Any):
    d = FABRIC.devices["rtsw3"]
    assert d.bgp is not None
    summary = json.loads(rtsw3.send_command("vtysh -c 'show ip bgp summary json'"))["ipv4Unicast"]
    assert sorted(summary["peers"]) == sorted(p.address for p in d.bgp.peers)
    table = rtsw3.send_command("show ip bgp summary")
    for peer in d.bgp.peers:
        assert re.search(rf"^{re.escape(peer.address)}\s+4\s+{peer.remote_asn}\s", table, re.MULTILINE), table
    db = json.loads(rtsw3.send_command("sonic-cfggen -d --print-data"))
    assert db["DEVICE_METADATA"]["localhost"]["hostname"] == "rtsw3"
    alias = rtsw3.send_command("redis-cli -n 4 HGET 'PORT|Ethernet0' alias").strip()
    assert alias == db["PORT"]["Ethernet0"]["alias"]


def test_eos_neighbor_sees_the_sonic_port_alias(sonic_twin: TwinSite):
    """lldpmgrd sends each port's CONFIG_DB alias as a locally assigned LLDP port ID; EOS shows that."""
    itf = next(i for i in FABRIC.devices["ctsw1"].interfaces if i.peer_device == "rtsw3")
    rows = sonic_twin.eapi("ctsw1").enable(["show lldp neighbors"])[0]["result"]["lldpNeighbors"]
    row = next(r for r in rows if r["port"] == itf.name)
    deployed = json.loads(render_device(FABRIC.devices["rtsw3"]))
    alias = deployed["PORT"][itf.peer_port]["alias"]
    assert alias != itf.peer_port
    assert row["neighborDevice"] == "rtsw3" and row["neighborPort"] == alias


def test_gpu_server_logout_is_immediate(sonic_twin: TwinSite):
    conn = _connect(sonic_twin, "gpu1", "linux")
    assert conn.send_command("hostname").strip() == "gpu1"
    # a `#` prompt would be config mode to netmiko: its logout would send `exit` and wait 10 s for `$`
    assert not conn.check_config_mode()
    conn.disconnect()
