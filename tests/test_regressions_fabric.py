"""Regression tests: the address plan cannot collide, preflight covers what a real fabric needs, checks hold on
sites other than dc1, server port roles (one test per defect found on a second site)."""

from __future__ import annotations

import ipaddress

import pytest

from nr_run.intent.models import FabricIntent
from nr_run.platforms.site import load_site
from nr_run.validators.base import evaluate_all, select
from nr_run.validators.rdma import AUTO_ALL_MAX_PAIRS, Pair, ping_size, plan_pairs
from tests.conftest import unexpected
from tests.validators.healthy import healthy_states


def compiled(site) -> tuple[FabricIntent | None, list]:
    return load_site(site.path)


def errors(site) -> list:
    return [f for f in compiled(site)[1] if f.severity == "error"]


def all_addresses(intent: FabricIntent) -> list[str]:
    out = []
    for d in intent.devices.values():
        out.append(d.mgmt_address)
        out += [d.loopback.split("/")[0]] if d.loopback else []
        out += [i.ip for i in d.interfaces] + [n.ip for n in d.nics]
    return out


# ---- address plan ---------------------------------------------------------------------------------------

def test_different_port_layouts_never_share_a_host_p31(site):
    """rtsw3/rtsw4 get 64 host slots, rtsw1/rtsw2 keep 30: one site-wide /25 block size, all addresses unique."""
    site.edit("fabric.yaml", lambda d: d["hardware"]["sonic-rtsw"].__setitem__("ports", 64))
    intent, findings = compiled(site)
    assert unexpected(findings) == [] and intent is not None
    addrs = all_addresses(intent)
    assert len(addrs) == len(set(addrs))
    blocks = [ipaddress.IPv4Network(intent.devices[f"rtsw{i}"].host_block) for i in range(1, 5)]
    assert {b.prefixlen for b in blocks} == {25}
    assert all(not a.overlaps(b) for i, a in enumerate(blocks) for b in blocks[i + 1:])


@pytest.mark.parametrize("edit, field, other", [
    (lambda d: d["pools"].__setitem__("host_p2p", d["pools"]["fabric_p2p"]), "pools.host_p2p", "pools.fabric_p2p"),
    (lambda d: d["pools"]["loopback"].__setitem__("rtsw", "10.254.1.0/24"), "pools.fabric_p2p",
     "pools.loopback.rtsw"),
    (lambda d: d["pools"]["loopback"].__setitem__("ctsw", "10.255.1.0/25"), "pools.loopback.rtsw",
     "pools.loopback.ctsw"),
])
def test_overlapping_pools_are_refused_naming_both(site, edit, field, other):
    site.edit("fabric.yaml", edit)
    found = [f for f in errors(site) if f.rule == "pool-overlap"]
    assert found and found[0].field == field and other in found[0].message


def test_loopbacks_equal_to_the_management_network_are_refused(site):
    site.edit("fabric.yaml", lambda d: d["pools"]["loopback"].__setitem__("rtsw", "172.20.20.0/24"))
    found = errors(site)
    assert any(f.rule == "pool-overlap" and "management network 172.20.20.0/24" in f.message for f in found)
    assert any(f.rule == "duplicate-address" for f in found)         # and the colliding pair is named


def test_gateway_outside_the_management_network(site):
    site.edit("fabric.yaml", lambda d: d["management"].__setitem__("gateway", "10.0.0.1"))
    assert {f.field for f in errors(site)} == {"management.gateway"}


def test_asn_plan_past_4294967295_is_refused_per_device(site):
    site.edit("fabric.yaml", lambda d: d["asn"].__setitem__("rtsw_base", 4294967294))
    found = errors(site)
    assert sorted(f.host for f in found if f.rule == "asn-range") == ["rtsw3", "rtsw4"]
    assert [(f.field, str(4294967294 + n) in f.message) for n, f in enumerate(found, 2)] == [("asn.rtsw_base", True)] * 2


def test_adding_a_scalable_unit_renumbers_nothing(site):
    before, _ = compiled(site)
    hosts = site.load("hosts.yaml")
    for i in (1, 2):
        hosts[f"rtsw{4 + i}"] = {"hostname": f"172.20.20.{24 + i}", "groups": ["rtsw", "eos"],
                                 "data": {"role": "rtsw", "su": 3, "index": i, "hardware": "eos-rtsw"}}
        hosts[f"gpu{4 + i}"] = {"hostname": f"172.20.20.{34 + i}", "groups": ["gpu"],
                                "data": {"role": "gpu", "su": 3, "index": i, "hardware": "gpu-2nic"}}
    site.save("hosts.yaml", hosts)
    after, findings = compiled(site)
    assert unexpected(findings) == [] and before is not None and after is not None
    for name, old in before.devices.items():
        new = after.devices[name]
        assert (new.asn, new.loopback, new.host_block) == (old.asn, old.loopback, old.host_block), name
        kept = {i.name: i.address for i in new.interfaces}
        assert all(kept[i.name] == i.address for i in old.interfaces), name
        assert [n.address for n in new.nics] == [n.address for n in old.nics], name
    assert len(set(all_addresses(after))) == len(all_addresses(after))


# ---- preflight for a real fabric -------------------------------------------------------------------------

def test_link_faster_than_the_nic_is_refused(site):
    site.edit("fabric.yaml", lambda d: d["hardware"]["gpu-2nic"].__setitem__("speed", "200G"))
    found = errors(site)
    assert {(f.rule, f.field) for f in found} == {("link-speed", "cabling.rules.1.speed")}
    assert len(found) == 1 and "hardware.gpu-2nic.speed" in found[0].message


def test_link_faster_than_the_switch_port_is_refused(site):
    site.edit("fabric.yaml", lambda d: d["cabling"]["rules"][0].__setitem__("speed", "800G"))
    found = errors(site)
    assert {f.rule for f in found} == {"link-speed"}
    assert {f.field for f in found} == {"cabling.rules.0.speed"}


def test_ctsw_beyond_uplinks_count_gets_a_warning(site):
    hosts = site.load("hosts.yaml")
    hosts["ctsw3"] = {"hostname": "172.20.20.13", "groups": ["ctsw", "eos"],
                      "data": {"role": "ctsw", "index": 3, "hardware": "eos-ctsw"}}
    site.save("hosts.yaml", hosts)
    intent, findings = compiled(site)
    [f] = unexpected(findings)
    assert (f.severity, f.rule, f.host) == ("warning", "ctsw-no-uplinks", "ctsw3")
    assert f.field in ("hardware.eos-rtsw.uplinks.count", "hardware.sonic-rtsw.uplinks.count")


def test_per_host_mtu_problem_is_blamed_on_the_host(site):
    site.edit("hosts.yaml", lambda d: d["gpu2"]["data"].__setitem__("mtu", 4000))
    [f] = errors(site)
    assert (f.rule, f.host, f.field) == ("mtu-too-small", "gpu2", "data.mtu") and f.file.endswith("hosts.yaml")
    site.edit("hosts.yaml", lambda d: d["gpu2"]["data"].__setitem__("mtu", 9216))
    assert {(f.rule, f.host, f.field) for f in errors(site)} == {("mtu-mismatch", "gpu2", "data.mtu")}


def test_ecmp_and_oversubscription_messages_name_the_key_to_change(site):
    site.edit("fabric.yaml", lambda d: d["bgp"].__setitem__("maximum_paths", 1))
    found = errors(site)
    assert found and all("raise bgp.maximum_paths to 2" in f.message for f in found)
    site.edit("fabric.yaml", lambda d: (d["bgp"].__setitem__("maximum_paths", 64),
                                       d["hardware"]["eos-rtsw"].__setitem__("uplinks", {"from": 0, "count": 1})))
    found = [f for f in errors(site) if f.rule == "oversubscription"]
    assert found and "policy.max_oversubscription" in found[0].message and "uplinks.count" in found[0].message


# ---- server port roles -----------------------------------------------------------------------------------

def test_storage_ports_outside_the_rail_block_are_left_alone(site):
    """A server with 2 compute NICs and 2 storage NICs: downlinks.count keeps the rail rule to 2 rails."""
    site.edit("fabric.yaml", lambda d: d["hardware"]["gpu-2nic"].update(ports=4, downlinks={"from": 0, "count": 2}))
    intent, findings = compiled(site)
    assert unexpected(findings) == [] and intent is not None
    assert [n.name for n in intent.devices["gpu1"].nics] == intent.devices["gpu1"].rails == ["eth1", "eth2"]


def test_server_missing_a_rail_link_is_a_warning_and_a_check_finding(site):
    site.edit("fabric.yaml", lambda d: d["cabling"]["overrides"].append({"a": "gpu3:eth2", "remove": True}))
    intent, findings = compiled(site)
    [f] = unexpected(findings)
    assert (f.severity, f.rule, f.host) == ("warning", "rail-link-missing", "gpu3") and "eth2" in f.message
    failed = [x for x in evaluate_all(select(None), intent, healthy_states(intent)) if not x.passed]
    assert [(x.check, x.device, x.port) for x in failed] == [("rails", "gpu3", "eth2")]


# ---- checks on any site ----------------------------------------------------------------------------------

def test_ecmp_expects_the_paths_the_cabling_provides(site):
    """rtsw2 loses its uplink to ctsw2: the others reach rtsw2 over ctsw1 only, rtsw2 reaches them over its one
    uplink, and RTSWs that keep both uplinks still expect both (tests/test_dc2.py proves it on the twin)."""
    site.edit("fabric.yaml", lambda d: (d["cabling"]["overrides"].append({"a": "rtsw2:Ethernet2", "remove": True}),
                                       d["policy"].__setitem__("max_oversubscription", 2.0)))
    intent, findings = compiled(site)
    assert intent is not None and not [f for f in findings if f.severity == "error"]
    [ecmp] = select(["ecmp"])
    expected = {(r.device, r.peer_device): r.expected
                for r in evaluate_all([ecmp], intent, healthy_states(intent))}
    assert expected[("rtsw1", "rtsw2")] == "1 next-hops via Ethernet1"
    assert expected[("rtsw3", "rtsw2")] == "1 next-hops via Ethernet0"      # SONiC ports count from 0
    assert expected[("rtsw2", "rtsw3")] == "1 next-hops via Ethernet1"
    assert expected[("rtsw1", "rtsw3")] == "2 next-hops via Ethernet1, Ethernet2"
    assert expected[("rtsw3", "rtsw4")] == "2 next-hops via Ethernet0, Ethernet8"


def test_rdma_ping_size_comes_from_the_roce_mtu_and_the_path(site):
    site.edit("hosts.yaml", lambda d: d["gpu1"]["data"].__setitem__("mtu", 9000))
    intent, _ = compiled(site)
    assert intent is not None
    pair = plan_pairs(intent, "all")[0]
    assert pair.src_device == "gpu1" and ping_size(intent, pair) == 4096 + 60
    # a path with a 4200-byte hop: still the 4096 RDMA MTU; a 3000-byte one: the 2048 RDMA MTU
    small = intent.devices["gpu1"].model_copy(update={"nics": [n.model_copy(update={"mtu": 3000})
                                                               for n in intent.devices["gpu1"].nics]})
    smaller = intent.model_copy(update={"devices": {**intent.devices, "gpu1": small}})
    assert ping_size(smaller, pair) == 2048 + 60


def test_check_covers_every_nic_pair_by_default(site):
    intent, _ = compiled(site)
    assert intent is not None
    pairs = plan_pairs(intent, "auto")
    assert len(pairs) == 48 and len({(p.src_device, p.src_nic, p.dst_device, p.dst_nic) for p in pairs}) == 48
    assert sum(p.bandwidth for p in pairs) == 8          # the bandwidth test runs on a ring
    assert isinstance(pairs[0], Pair) and AUTO_ALL_MAX_PAIRS >= 48


def test_the_address_plan_proof_names_a_colliding_pair(site):
    """The proof re-checks the compiled result, whatever computed it: a tampered address is named with its twin."""
    from nr_run.intent.addressplan import check_address_plan
    from nr_run.intent.schema import FabricFile

    intent, _ = compiled(site)
    assert intent is not None
    fabric = FabricFile.model_validate(site.load("fabric.yaml"))
    assert check_address_plan(intent, fabric, "fabric.yaml", "hosts.yaml") == []
    rtsw2 = intent.devices["rtsw2"]
    stolen = intent.devices["rtsw1"].interfaces[-1]
    moved = rtsw2.interfaces[-1].model_copy(update={"ip": stolen.ip})
    bad = intent.model_copy(update={"devices": {**intent.devices, "rtsw2": rtsw2.model_copy(
        update={"interfaces": [*rtsw2.interfaces[:-1], moved]})}})
    found = check_address_plan(bad, fabric, "fabric.yaml", "hosts.yaml")
    assert {f.rule for f in found} == {"duplicate-address", "address-outside-pool"}
    dup = next(f for f in found if f.rule == "duplicate-address")
    assert dup.host == "rtsw2" and f"rtsw1 port {stolen.name}" in dup.message
