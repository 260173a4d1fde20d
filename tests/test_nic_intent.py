"""The host end of every RoCE link in the compiled intent: NIC defaults from NVIDIA's documented DCQCN values,
site congestion control, overrides range-checked, and preflight refusing a NIC that disagrees with its switch
port or a mixed site."""

from __future__ import annotations

import copy

import pytest

from nr_run.intent import compile_site
from nr_run.intent.compile import compile_with_findings
from nr_run.runbooks.render import render_device
from tests.conftest import REPO


def _errors(site) -> list:
    _, findings = compile_with_findings(site.path)
    return [f for f in findings if f.severity == "error"]


def test_dc1_nics_carry_the_switch_ports_lossless_design_and_nvidia_defaults(site):
    fabric = compile_site(site.path)
    qos = fabric.devices["gpu1"].nics[0].qos
    assert (qos.trust, qos.pfc_priorities, qos.dscp_to_prio) == ("dscp", [3], {26: 3, 48: 6})
    assert (qos.congestion_control, qos.ecn_priorities, qos.roce_tos) == ("dcqcn", [3], 106)
    assert (qos.cnp_dscp, qos.cnp_priority) == (48, 6)
    # NVIDIA "DCQCN CC Parameters" defaults (ConnectX-4 and later)
    assert (qos.rp.rpg_time_reset, qos.rp.rpg_byte_reset, qos.rp.rpg_ai_rate, qos.rp.rpg_hai_rate) == (300, 32767, 5, 50)
    assert (qos.rp.dce_tcp_g, qos.rp.initial_alpha_value, qos.rp.rpg_min_dec_fac, qos.np.min_time_between_cnps) == \
        (1019, 1023, 50, 4)


def test_one_dcqcn_parameter_tuned_keeps_the_others_at_the_vendors_defaults(site):
    site.edit("fabric.yaml", lambda d: d.update(nic={"dcqcn": {"rp": {"rpg_ai_rate": 10}}}))
    qos = compile_site(site.path).devices["gpu2"].nics[1].qos
    assert (qos.rp.rpg_ai_rate, qos.rp.rpg_hai_rate) == (10, 50)
    assert "echo 10 > /sys/class/net/eth2/ecn/roce_rp/rpg_ai_rate" in render_device(compile_site(site.path).devices["gpu2"])


@pytest.mark.parametrize(("nic", "field"), [
    ({"dcqcn": {"rp": {"rpg_gd": 99}}}, "nic.dcqcn.rp.rpg_gd"),
    ({"congestion_control": "ecn-only"}, "nic.congestion_control"),
    ({"dcqcn": {"np": {"cnp_dscp": 48}}}, "nic.dcqcn.np.cnp_dscp"),   # the CNP comes from the RoCE profile
    ({"roce_dscp": 64}, "nic.roce_dscp"),
])
def test_a_bad_nic_value_is_an_error_naming_file_and_field(site, nic, field):
    site.edit("fabric.yaml", lambda d: d.update(nic=nic))
    errors = _errors(site)
    assert errors and all(f.file.endswith("fabric.yaml") for f in errors)
    assert any(f.field.startswith(field) for f in errors), [(f.field, f.message) for f in errors]


def test_a_pfc_only_site_with_ecn_marking_on_is_refused_as_mixed(site):
    site.edit("fabric.yaml", lambda d: d.update(nic={"congestion_control": "pfc-only"}))
    errors = _errors(site)
    assert {f.rule for f in errors} == {"mixed-congestion-control"}
    assert {f.host for f in errors} == {"ctsw1", "ctsw2", "rtsw1", "rtsw2", "rtsw3", "rtsw4"}


def test_a_nic_whose_lossless_priorities_differ_from_its_switch_port_is_refused(site):
    def other_profile(d):
        prof = copy.deepcopy(d["roce_profiles"]["roce"])
        prof["lossless_priorities"] = [4]
        prof["dscp_to_tc"] = {26: 4, 48: 6}
        prof["ecn"]["queue"] = 4
        prof["schedulers"] = [{"queue": 6, "type": "strict"}, {"queue": 4, "type": "dwrr", "weight": 50},
                              {"queue": 0, "type": "dwrr", "weight": 50}]
        d["roce_profiles"]["gpu4"] = prof
    site.edit("fabric.yaml", other_profile)
    site.edit("hosts.yaml", lambda d: d["gpu3"]["data"].update(roce_profile="gpu4"))
    mismatch = [f for f in _errors(site) if f.rule == "nic-port-mismatch"]
    assert {(f.host, f.file.rsplit("/", 1)[-1], f.field) for f in mismatch} == {("gpu3", "hosts.yaml", "data.roce_profile")}
    assert any("eth1 -> rtsw3:" in f.message and "PFC priorities [4]" in f.message for f in mismatch)


def test_the_pfc_only_site_renders_dcqcn_off_everywhere_and_no_ecn_bits_in_the_tos():
    fabric = compile_site(REPO / "inventory" / "pfc1")
    text = render_device(fabric.devices["gpu1"])
    assert "echo 1 > /sys/class/net/eth1/ecn/roce_rp/enable/" not in text
    assert "echo 1 > /sys/class/net/eth1/ecn/roce_np/enable/" not in text
    assert "echo 104 > /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos" in text
    assert "dcb pfc set dev eth1 prio-pfc 0:off 1:off 2:off 3:on" in text
    assert all(not s.roce.ecn.enabled for s in fabric.switches())


def test_pfc_only_sonic_switches_render_a_non_marking_profile_on_the_lossless_queue():
    """A merge onto SONiC's factory QoS would keep its ECN profile on queue 3: the PFC-only config replaces it."""
    import json

    from tests.sonic_yang.validator import validate

    fabric = compile_site(REPO / "inventory" / "pfc1")
    db = json.loads(render_device(fabric.devices["rtsw3"], fabric))
    [(name, profile)] = db["WRED_PROFILE"].items()
    assert profile["ecn"] == "ecn_none" and profile["wred_green_enable"] == "false"
    port = fabric.devices["rtsw3"].interfaces[0].name
    assert db["QUEUE"][f"{port}|3"]["wred_profile"] == name
    assert validate(db).errors == []
