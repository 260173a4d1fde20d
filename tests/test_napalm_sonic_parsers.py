"""napalm_sonic parsers on the sonic-utilities output formats (samples from sonic.md)."""

from napalm_sonic import parsers
from napalm_sonic.sonic import _gcu_reason

IF_STATUS = """\
  Interface        Lanes    Speed    MTU    FEC    Alias             Vlan    Oper    Admin    Type    Asym PFC
-----------  -----------  -------  -----  -----  -------  ---------------  ------  -------  ------  ----------
 Ethernet32  13,14,15,16      40G   9100     rs     etp9  PortChannel1001      up       up     N/A         off
  Ethernet0      0,1,2,3     400G   9214     rs     etp1           routed    down     down     N/A         off
"""

LLDP = """\
Capability codes: (R) Router, (B) Bridge, (O) Other
LocalPort    RemoteDevice    RemotePortID       Capability    RemotePortDescr
-----------  --------------  -----------------  ------------  -----------------
Ethernet0    dummy           00:00:00:00:00:01  BR            First MAC
Ethernet4    ctsw1           Ethernet3          R             P2P link
--------------------------------------------------
Total entries displayed:  2
"""

VERSION = """\

SONiC Software Version: SONiC.202205.1
SONiC OS Version: 11
Distribution: Debian 11.6
Platform: x86_64-kvm_x86_64-r0
HwSKU: Force10-S6000
ASIC: vs
Serial Number: N/A
Uptime: 10:00:01 up 1 day
Docker images:
REPOSITORY   TAG
"""


def test_interfaces_status():
    rows = parsers.parse_interfaces_status(IF_STATUS)
    assert rows["Ethernet32"]["Vlan"] == "PortChannel1001"
    assert rows["Ethernet32"]["Oper"] == "up" and rows["Ethernet0"]["Admin"] == "down"
    assert rows["Ethernet0"]["Lanes"] == "0,1,2,3" and rows["Ethernet0"]["Asym PFC"] == "off"
    assert parsers.parse_speed_mbps(rows["Ethernet0"]["Speed"]) == 400000.0


def test_lldp_table_stops_at_footer():
    assert parsers.parse_lldp_table(LLDP) == {
        "Ethernet0": [{"hostname": "dummy", "port": "00:00:00:00:00:01"}],
        "Ethernet4": [{"hostname": "ctsw1", "port": "Ethernet3"}],
    }


def test_show_version():
    v = parsers.parse_show_version(VERSION)
    assert v["SONiC Software Version"] == "SONiC.202205.1" and v["HwSKU"] == "Force10-S6000"
    assert "REPOSITORY" not in v


def test_frr_uptime():
    assert parsers.parse_frr_uptime("1d21h11m") == 86400 + 21 * 3600 + 11 * 60
    assert parsers.parse_frr_uptime("00:01:02") == 62
    assert parsers.parse_frr_uptime("never") == 0


def test_gcu_reason_extracts_failure_block():
    out = ("Patch Applier: localhost: Patch application starting.\n"
           "Failed to apply patch due to: Failed to apply patch on the following scopes:\n"
           "- localhost: given patch is not valid\nError: given patch is not valid\n")
    assert _gcu_reason(out).startswith("Failed to apply patch due to:")
    assert "given patch is not valid" in _gcu_reason(out)


def test_table_keeps_empty_cells_and_picks_a_table_by_header():
    text = ("Port Rx    PFC0    PFC3\n---------  ------  ------\nEthernet0       1\n\n"
            "Port Tx    PFC0    PFC3\n---------  ------  ------\nEthernet0       7      9\n")
    assert parsers.parse_table(text) == [{"Port Rx": "Ethernet0", "PFC0": "1", "PFC3": ""}]
    assert parsers.parse_table(text, "Port Tx") == [{"Port Tx": "Ethernet0", "PFC0": "7", "PFC3": "9"}]
