"""Lossless-path proof: dc1 holds; each defect (one per case, made on a compiled dc1 device) breaks exactly the
path classes through it, at the first hop where it sits, with a fix naming the inventory key or the plug-in."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nr_run.analysis.lossless import analyse
from nr_run.analysis.options import AnalysisOptions
from nr_run.analysis.paths import path_classes
from nr_run.intent import compile_site
from nr_run.intent.models import DeviceIntent, FabricIntent
from tests.conftest import DC1

DC1_FABRIC = compile_site(DC1)
OPTIONS = AnalysisOptions()


def with_device(fabric: FabricIntent, name: str, change: Callable[[DeviceIntent], DeviceIntent]) -> FabricIntent:
    devices = dict(fabric.devices)
    devices[name] = change(devices[name])
    return fabric.model_copy(update={"devices": devices})


def roce(**update: Any) -> Callable[[DeviceIntent], DeviceIntent]:
    return lambda d: d.model_copy(update={"roce": d.roce.model_copy(update=update)})


def port(name: str, **update: Any) -> Callable[[DeviceIntent], DeviceIntent]:
    def change(d: DeviceIntent) -> DeviceIntent:
        itfs = [i.model_copy(update=update) if i.name == name else i for i in d.interfaces]
        return d.model_copy(update={"interfaces": itfs})
    return change


def nic(name: str, **update: Any) -> Callable[[DeviceIntent], DeviceIntent]:
    def change(d: DeviceIntent) -> DeviceIntent:
        return d.model_copy(update={"nics": [n.model_copy(update=update) if n.name == name else n for n in d.nics]})
    return change


def nic_qos(name: str, **update: Any) -> Callable[[DeviceIntent], DeviceIntent]:
    """A change to what the NIC is configured to do (the Linux plug-in renders its script from `qos`)."""
    def change(d: DeviceIntent) -> DeviceIntent:
        return d.model_copy(update={"nics": [n.model_copy(update={"qos": n.qos.model_copy(update=update)})
                                             if n.name == name else n for n in d.nics]})
    return change


def all_ports(**update: Any) -> Callable[[DeviceIntent], DeviceIntent]:
    return lambda d: d.model_copy(update={"interfaces": [i.model_copy(update=update) for i in d.interfaces]})


def remap(dscp: int, tc: int) -> Callable[[DeviceIntent], DeviceIntent]:
    return lambda d: roce(dscp_to_tc={**d.roce.dscp_to_tc, dscp: tc})(d)


def wd(**update: Any) -> Callable[[DeviceIntent], DeviceIntent]:
    return lambda d: roce(watchdog=d.roce.watchdog.model_copy(update=update))(d)


def ecn(**update: Any) -> Callable[[DeviceIntent], DeviceIntent]:
    return lambda d: roce(ecn=d.roce.ecn.model_copy(update=update))(d)


def test_dc1_holds_on_every_path_class():
    result = analyse(DC1_FABRIC, OPTIONS)
    assert result.ok
    assert [f.subject for f in result.findings] == ["same RTSW", "same-rail via ctsw1", "cross-rail via ctsw1",
                                                    "same-rail via ctsw2", "cross-rail via ctsw2"]
    assert result.summary["roce_dscp"] == 26 and result.summary["priority"] == 3
    hops = result.tables[1]
    # the example path crosses both platforms, each read from what it renders
    sources = {row[7] for row in hops.rows}
    assert {"rtsw1 EOS structured config", "rtsw3 SONiC CONFIG_DB", "gpu1 rendered NIC script"} <= sources


def test_path_classes_cover_every_rtsw_and_ctsw_branch():
    classes = {pc.name: pc for pc in path_classes(DC1_FABRIC)}
    same = classes["same-rail via ctsw1"]
    # dc1: rails 1 (rtsw1, rtsw3) and 2 (rtsw2, rtsw4) in two units: 4 ordered same-rail pairs per CTSW
    assert same.pairs == 4 and classes["cross-rail via ctsw2"].pairs == 8
    assert same.example == ["gpu1:eth1", "rtsw1", "ctsw1", "rtsw3", "gpu3:eth1"]
    uplinks = next(p for p in same.positions if p.label == "source RTSW uplink (tx)")
    assert sorted(p.device for p in uplinks.ports) == ["rtsw1", "rtsw2", "rtsw3", "rtsw4"]


# (device, defect, broken classes, first broken position, check, fix contains)
VIA1 = {"same-rail via ctsw1", "cross-rail via ctsw1"}
VIA2 = {"same-rail via ctsw2", "cross-rail via ctsw2"}
ALL = {"same RTSW"} | VIA1 | VIA2
CASES = [
    ("sonic-dscp-remap", "rtsw3", remap(26, 0), ALL, "source RTSW host port (rx)", "classification",
     "roce_profiles.roce.dscp_to_tc"),
    ("eos-dscp-remap-ctsw", "ctsw2", remap(26, 4), VIA2, "ctsw2 port from the source RTSW (rx)", "classification",
     "roce_profiles.roce.dscp_to_tc"),
    ("sonic-pfc-off-uplink", "rtsw3", port("Ethernet0", lossless_priorities=[]), VIA1, "source RTSW uplink (tx)",
     "pfc", "roce_profiles.roce.lossless_priorities"),
    ("nic-pfc-off", "gpu1", lambda d: nic_qos("eth1", pfc_priorities=[])(nic("eth1", lossless_priorities=[])(d)), ALL, "source NIC (tx)", "pfc",
     "roce_profiles.roce.lossless_priorities"),
    ("eos-no-ecn", "ctsw1", ecn(enabled=False), VIA1, "ctsw1 port to the destination RTSW (tx)", "ecn",
     "roce_profiles.roce.ecn"),
    ("sonic-cnp-not-strict", "rtsw4", roce(schedulers=[]), ALL, "RTSW host port (tx)", "cnp",
     "roce_profiles.roce.cnp"),
    ("mtu-too-small", "rtsw2", all_ports(mtu=4000), ALL, "source RTSW host port (rx)", "mtu", "roles.rtsw.mtu"),
    ("sonic-watchdog-below-yang-range", "rtsw3", wd(detection_ms=50), ALL, "source RTSW host port (rx)",
     "watchdog-limit", "roce_profiles.roce.pfc_watchdog"),
    ("eos-watchdog-poll-longer-than-timeout", "ctsw1", wd(poll_ms=500), VIA1,
     "ctsw1 port from the source RTSW (rx)", "watchdog-limit", "roce_profiles.roce.pfc_watchdog"),
    ("eos-trust-cos", "rtsw1", roce(trust="cos"), ALL, "source RTSW host port (rx)", "trust",
     "roce_profiles.roce.trust"),
    ("sonic-pg-not-lossless", "rtsw4", roce(tc_to_pg={**{t: 0 for t in range(8)}}), ALL,
     "source RTSW host port (rx)", "pg", "roce_profiles.roce.lossless_priorities"),
]


@pytest.mark.parametrize(("case", "device", "defect", "broken", "position", "check", "fix"), CASES,
                         ids=[c[0] for c in CASES])
def test_one_defect_breaks_the_classes_through_it(case, device, defect, broken, position, check, fix):
    result = analyse(with_device(DC1_FABRIC, device, defect), OPTIONS)
    assert not result.ok
    failed = {f.subject: f for f in result.findings if not f.passed}
    assert set(failed) == broken
    first = failed[sorted(broken)[0]]
    assert first.data["check"] == check
    assert first.data["device"] == device
    assert first.data["position"] == position or position in {f.data["position"] for f in failed.values()}
    assert fix in first.fix and "fabric.yaml" in first.fix


def test_a_platform_rendering_what_the_intent_did_not_ask_blames_the_plug_in(monkeypatch):
    # the intent asks for non-ECT packets to be dropped on the lossless queue; an EOS plug-in that rendered
    # `qos random-detect ecn allow non-ect` would admit them: only the EOS switches' hops break
    import nr_run.platforms.eos.structured as eos

    monkeypatch.setattr(eos, "ECN_ALLOW_NON_ECT", True)
    result = analyse(DC1_FABRIC.model_copy(), OPTIONS)    # a new fabric object: views are remembered per fabric
    failed = [f for f in result.findings if not f.passed]
    assert failed and all(f.data["check"] == "non-ect" for f in failed)
    assert {f.data["device"] for f in failed} <= {"rtsw1", "rtsw2", "ctsw1", "ctsw2"}
    assert all("platform plug-in" in f.fix and "nr_run/platforms/eos" in f.fix for f in failed)


SWITCHES = sorted(d.name for d in DC1_FABRIC.switches())


@settings(max_examples=25, deadline=None)
@given(device=st.sampled_from(SWITCHES), tc=st.integers(0, 7).filter(lambda t: t != 3))
def test_any_switch_moving_roce_off_the_lossless_class_breaks_a_class_naming_it(device, tc):
    result = analyse(with_device(DC1_FABRIC, device, remap(26, tc)), OPTIONS)
    failed = [f for f in result.findings if not f.passed]
    assert failed and all(f.data["check"] == "classification" and f.data["device"] == device for f in failed)


@settings(max_examples=15, deadline=None)
@given(dscp=st.integers(0, 63).filter(lambda d: d not in (26, 48)), tc=st.integers(0, 7))
def test_remapping_another_dscp_leaves_the_proof_holding(dscp, tc):
    assert analyse(with_device(DC1_FABRIC, "rtsw3", remap(dscp, tc)), OPTIONS).ok
