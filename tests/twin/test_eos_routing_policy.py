"""What the EOS switches advertise: only loopbacks and host blocks (prefix-list + route-map on redistribute
connected), read on their BGP peers' routing tables through eAPI (pyeapi), as an operator would."""

from __future__ import annotations

import ipaddress

from tests.twin_site import FABRIC

EOS_LEAVES = sorted(d.name for d in FABRIC.devices.values() if d.platform == "eos" and d.role == "rtsw")


def _bgp_routes(twin, host: str) -> dict[str, dict]:
    result = twin.eapi(host).enable(["show ip route vrf default"])[0]["result"]
    return {p: r for p, r in result["vrfs"]["default"]["routes"].items() if "BGP" in r["routeType"].upper()}


def _allowed(prefix: str) -> bool:
    """A loopback of some switch, or a subnet inside some RTSW's host block."""
    net = ipaddress.ip_network(prefix)
    for dev in FABRIC.devices.values():
        if dev.loopback and net == ipaddress.ip_network(dev.loopback):
            return True
        if dev.host_block and net.subnet_of(ipaddress.ip_network(dev.host_block)):
            return True
    return False


def test_no_connected_subnet_outside_loopbacks_and_host_blocks_is_advertised(deployed_twin):
    fabric_p2p = [ipaddress.ip_network(i.address, strict=False) for d in FABRIC.switches() for i in d.interfaces
                  if i.role == "fabric"]
    for ctsw in ("ctsw1", "ctsw2"):
        learned = _bgp_routes(deployed_twin, ctsw)
        leaked = sorted(p for p in learned if not _allowed(p))
        assert not leaked, f"{ctsw} learned {leaked}"
        # the EOS leaves' loopbacks and host subnets still arrive (the filter is not a blanket deny)
        for leaf in EOS_LEAVES:
            dev = FABRIC.devices[leaf]
            assert dev.loopback in learned, (ctsw, leaf)
            assert any(ipaddress.ip_network(p).subnet_of(ipaddress.ip_network(dev.host_block)) for p in learned)
        # no fabric /31 of another link reached this spine through BGP
        assert not [p for p in learned if ipaddress.ip_network(p) in fabric_p2p]
    # nor did a leaf learn another leaf's uplink /31
    for leaf in EOS_LEAVES:
        assert not [p for p in _bgp_routes(deployed_twin, leaf) if ipaddress.ip_network(p) in fabric_p2p]


def test_management_is_in_its_vrf_with_eapi_ssh_and_default_route(deployed_twin):
    running = deployed_twin.running("rtsw1")
    lines = running.splitlines()
    mgmt = lines[lines.index("interface Management0"):]
    assert mgmt[1] == "   vrf MGMT"
    assert "ip route vrf MGMT 0.0.0.0/0 172.20.20.1" in lines and "no ip routing vrf MGMT" in lines
    api = lines[lines.index("management api http-commands"):]
    assert api[api.index("   vrf MGMT") + 1] == "      no shutdown"
    # the management subnet never reaches the fabric's routing table
    routes = deployed_twin.eapi("rtsw1").enable(["show ip route vrf default"])[0]["result"]["vrfs"]["default"]["routes"]
    assert not [p for p in routes if ipaddress.ip_network(p).overlaps(ipaddress.ip_network("172.20.20.0/24"))]
