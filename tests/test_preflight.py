"""Every preflight rule: the finding names the file, the host and the field, and compile_site refuses."""

from __future__ import annotations

import pytest

from nr_run.cli.main import main
from nr_run.intent import InventoryError, compile_site
from nr_run.platforms.site import load_site


def findings_of(site, rule: str):
    _, findings = load_site(site.path)
    return [f for f in findings if f.rule == rule]


def only(site, rule: str):
    found = findings_of(site, rule)
    assert found, f"no {rule} finding"
    return found[0]


def test_dc1_is_clean(site):
    _, findings = load_site(site.path)
    # no error; the SONiC RTSWs warn that bgpcfgd cannot carry the BFD and peer-group intent
    assert [(f.severity, f.rule, f.host) for f in findings] == [("warning", "sonic-bgp-intent", "rtsw3"),
                                                                ("warning", "sonic-bgp-intent", "rtsw4")]
    assert "BFD" in findings[0].message and "PEER_V4" in findings[0].message
    assert "maximum-paths" not in findings[0].message        # dc1 asks for 64, what bgpcfgd runs


def test_sonic_bgp_intent_it_cannot_carry(site):
    site.edit("fabric.yaml", lambda d: d["bgp"].update(maximum_paths=8, bfd=False, peer_group="PEER_V4"))
    _, findings = load_site(site.path)
    assert [f.host for f in findings] == ["rtsw3", "rtsw4"]
    assert "maximum-paths 8 (runs 64" in findings[0].message and "BFD" not in findings[0].message


def test_unknown_platform_names_file_host_and_field(site):
    def edit(d):
        d["hardware"]["eos-ctsw"]["platform"] = "junos"
    site.edit("fabric.yaml", edit)
    site.edit("groups.yaml", lambda d: d.update(junos={"platform": "junos"}))
    site.edit("hosts.yaml", lambda d: [d[h].update(groups=["ctsw", "junos"]) for h in ("ctsw1", "ctsw2")])
    intent, findings = load_site(site.path)
    found = [f for f in findings if f.rule == "unknown-platform"]
    assert [(f.host, f.field) for f in found] == [("ctsw1", "hardware.eos-ctsw.platform"),
                                                  ("ctsw2", "hardware.eos-ctsw.platform")]
    assert all(f.severity == "error" and f.file.endswith("fabric.yaml") and "'junos'" in f.message for f in found)


def test_cli_refuses_an_unknown_platform(site, capsys):
    site.edit("fabric.yaml", lambda d: d["hardware"]["gpu-2nic"].update(platform="windows"))
    site.edit("groups.yaml", lambda d: d["linux"].update(platform="windows"))
    rc = main(["inventory", "validate", "--site", "dc1", "--inventory-dir", str(site.path.parent), "--json"])
    assert rc == 3
    out = capsys.readouterr().out
    assert '"rule": "unknown-platform"' in out and '"field": "hardware.gpu-2nic.platform"' in out


def test_platform_name_must_be_a_safe_name(site):
    site.edit("fabric.yaml", lambda d: d["hardware"]["eos-ctsw"].update(platform="../eos"))
    f = only(site, "schema")
    assert f.file.endswith("fabric.yaml") and f.field == "hardware.eos-ctsw.platform"


def test_sonic_asic_that_is_not_the_hwskus(site):
    site.edit("fabric.yaml", lambda d: d["hardware"]["sonic-rtsw"].update(asic="td9"))
    found = findings_of(site, "sonic-hardware")
    assert [(f.host, f.field) for f in found] == [("rtsw3", "hardware.sonic-rtsw.asic"),
                                                  ("rtsw4", "hardware.sonic-rtsw.asic")]
    assert "is a th5 switch, not td9" in found[0].message


def test_unknown_key_in_fabric(site):
    site.edit("fabric.yaml", lambda d: d["bgp"].update(maximum_path=8))
    f = only(site, "schema")
    assert f.file.endswith("fabric.yaml") and f.field == "bgp.maximum_path" and f.message == "unknown key"
    with pytest.raises(InventoryError, match="bgp.maximum_path"):
        compile_site(site.path)


def test_wrong_type_and_missing_field(site):
    def edit(d):
        d["roce_profiles"]["roce"]["ecn"]["min_kbytes"] = "lots"
        del d["pools"]["host_p2p"]
    site.edit("fabric.yaml", edit)
    fields = {f.field: f.message for f in findings_of(site, "schema")}
    assert "roce_profiles.roce.ecn.min_kbytes" in fields and "integer" in fields["roce_profiles.roce.ecn.min_kbytes"]
    assert fields["pools.host_p2p"] == "Field required"


def test_unknown_key_in_host_data(site):
    site.edit("hosts.yaml", lambda d: d["rtsw2"]["data"].update(shelf="r12"))
    f = only(site, "schema")
    assert (f.file.endswith("hosts.yaml"), f.host, f.field) == (True, "rtsw2", "data.shelf")


def test_unknown_hardware(site):
    site.edit("hosts.yaml", lambda d: d["rtsw2"]["data"].update(hardware="7060x9"))
    f = only(site, "schema")
    assert (f.host, f.field) == ("rtsw2", "data.hardware") and "7060x9" in f.message


def test_platform_differs_from_hardware(site):
    site.edit("hosts.yaml", lambda d: d["rtsw3"]["data"].update(hardware="eos-rtsw"))
    f = only(site, "schema")
    assert (f.host, f.field) == ("rtsw3", "platform") and "'sonic'" in f.message


def test_duplicate_mgmt_address(site):
    site.edit("hosts.yaml", lambda d: d["rtsw4"].update(hostname="172.20.20.21"))
    f = only(site, "duplicate-mgmt")
    assert (f.host, f.field) == ("rtsw4", "hostname") and "rtsw1" in f.message


def test_duplicate_loopback(site):
    site.edit("fabric.yaml", lambda d: d["pools"]["loopback"].update(rtsw="10.255.0.0/26"))
    f = only(site, "duplicate-loopback")
    assert f.host == "rtsw1" and "10.255.0.1/32" in f.message and "ctsw1" in f.message


def test_duplicate_asn(site):
    site.edit("fabric.yaml", lambda d: d["asn"].update(rtsw_base=65099))
    f = only(site, "duplicate-asn")
    assert f.field == "asn" and "65100" in f.message and {"rtsw2", "CTSW tier"} & {f.host}


def test_duplicate_index(site):
    site.edit("hosts.yaml", lambda d: d["rtsw2"]["data"].update(index=1))
    f = only(site, "duplicate-index")
    assert f.host == "rtsw2" and f.field == "data.index" and "rtsw1" in f.message


def test_pool_exhausted(site):
    site.edit("fabric.yaml", lambda d: d["pools"].update(fabric_p2p="10.254.0.0/29"))
    f = only(site, "pool-exhausted")
    assert f.field == "pools.fabric_p2p" and "10.254.0.0/29" in f.message


def test_loopback_pool_exhausted(site):
    site.edit("fabric.yaml", lambda d: d["pools"]["loopback"].update(rtsw="10.255.1.0/30"))
    f = only(site, "pool-exhausted")
    assert f.field == "pools.loopback.rtsw"


def test_port_cabled_twice(site):
    site.edit("fabric.yaml", lambda d: d["cabling"]["overrides"].append(
        {"a": "rtsw1:Ethernet1", "b": "ctsw2:Ethernet9", "speed": "400G", "cable_length_m": 5, "add": True}))
    f = only(site, "port-cabled-twice")
    assert f.host == "rtsw1" and "Ethernet1" in f.message and "cabling.overrides.1" in f.message


def test_unknown_device_and_port_in_override(site):
    site.edit("fabric.yaml", lambda d: d["cabling"]["overrides"].extend([
        {"a": "rtsw9:Ethernet1", "cable_length_m": 5},
        {"a": "rtsw3:Ethernet3", "cable_length_m": 5},
    ]))
    found = findings_of(site, "cabling")
    messages = sorted(f.message for f in found)
    assert any("unknown device 'rtsw9'" in m for m in messages)
    assert any("unknown port 'Ethernet3' on rtsw3" in m for m in messages)
    assert {f.field for f in found} == {"cabling.overrides.1", "cabling.overrides.2"}


def test_lossless_priorities_differ_between_link_ends(site):
    def edit(d):
        alt = dict(d["roce_profiles"]["roce"])
        alt["lossless_priorities"] = [4]
        alt["ecn"] = {**alt["ecn"], "queue": 4}
        d["roce_profiles"]["alt"] = alt
    site.edit("fabric.yaml", edit)
    site.edit("hosts.yaml", lambda d: d["rtsw2"]["data"].update(roce_profile="alt"))
    found = findings_of(site, "lossless-mismatch")
    assert found and all("rtsw2" in f.message for f in found)
    assert any("[4]" in f.message and "[3]" in f.message for f in found)


def test_mtu_too_small_for_roce(site):
    site.edit("fabric.yaml", lambda d: d["roles"]["gpu"].update(mtu=4000))
    f = only(site, "mtu-too-small")
    assert f.host == "gpu1" and f.field == "roles.gpu.mtu" and "4156" in f.message


def test_host_mtu_above_switch_port(site):
    site.edit("fabric.yaml", lambda d: d["roles"]["rtsw"].update(mtu=8000))
    f = only(site, "mtu-mismatch")
    assert "9000" in f.message and "8000" in f.message


def test_oversubscription(site):
    site.edit("fabric.yaml", lambda d: d["policy"].update(max_oversubscription=0.5))
    found = findings_of(site, "oversubscription")
    assert sorted(f.host for f in found) == ["rtsw1", "rtsw2", "rtsw3", "rtsw4"]
    assert "1.00:1 exceeds 0.5:1" in found[0].message


def test_oversubscription_allowed_by_policy(site):
    # one uplink removed: 800G down / 400G up = 2:1 -> error at 1.85, fine at 2.0
    site.edit("fabric.yaml", lambda d: d["cabling"]["overrides"].append({"a": "rtsw2:Ethernet2", "remove": True}))
    assert [f.host for f in findings_of(site, "oversubscription")] == ["rtsw2"]
    site.edit("fabric.yaml", lambda d: d["policy"].update(max_oversubscription=2.0))
    assert findings_of(site, "oversubscription") == []


def test_fewer_ctsw_than_policy_is_a_warning(site):
    site.edit("fabric.yaml", lambda d: d["policy"].update(min_ctsw=4))
    f = only(site, "min-ctsw")
    assert f.severity == "warning" and "2 CTSW" in f.message
    compile_site(site.path)  # warnings do not stop the run


def test_ecmp_width_above_maximum_paths(site):
    site.edit("fabric.yaml", lambda d: d["bgp"].update(maximum_paths=1))
    f = only(site, "ecmp-width")
    assert f.field == "bgp.maximum_paths" and "2 equal-cost uplinks" in f.message


def test_cnp_profile_rules(site):
    site.edit("fabric.yaml", lambda d: d["roce_profiles"]["roce"]["dscp_to_tc"].update({48: 5}))
    f = only(site, "roce-profile")
    assert f.field == "roce_profiles.roce.cnp" and "TC5" in f.message


def test_cli_exit_3_on_errors(site, capsys):
    site.edit("fabric.yaml", lambda d: d["bgp"].update(maximum_paths=1))
    rc = main(["inventory", "validate", "--site", "dc1", "--inventory-dir", str(site.path.parent), "--json"])
    assert rc == 3
    out = capsys.readouterr().out
    assert '"rule": "ecmp-width"' in out and '"valid": false' in out


def test_host_pool_without_room_for_every_rtsw_block(site):
    site.edit("fabric.yaml", lambda d: d["pools"].update(host_p2p="10.10.0.0/25"))
    found = findings_of(site, "pool-exhausted")
    assert sorted(f.host for f in found) == ["rtsw3", "rtsw4"]
    assert all(f.field == "pools.host_p2p" and "/26 host block" in f.message for f in found)


def test_real_devices_need_credentials_from_the_environment(monkeypatch, capsys):
    for var in ("NR_USERNAME", "NR_PASSWORD", "NR_EOS_USERNAME", "NR_EOS_PASSWORD"):
        monkeypatch.delenv(var, raising=False)
    assert main(["deploy", "--site", "dc1"]) == 3
    assert "no credentials for platform 'eos'" in capsys.readouterr().err


def test_commit_without_tty_needs_yes_and_bad_batch_is_refused(capsys):
    assert main(["deploy", "--site", "dc1", "--lab", "--commit"]) == 3
    assert "requires --yes" in capsys.readouterr().err
    assert main(["deploy", "--site", "dc1", "--lab", "--batch", "0"]) == 3
    assert main(["deploy", "--site", "dc1", "--hosts", "rtsw9"]) == 3
