"""dc1's SONiC RTSWs boot their HWSKU's factory day 0 and a deploy replaces its ranges (the fast case; one site
per shipped HWSKU is in test_sonic_factory_day0.py). Read through NAPALM's SONiC driver."""

from __future__ import annotations

import json

import pytest

from nr_run.runbooks.render import render_device
from tests.twin.test_sonic_factory_day0 import overlaps
from tests.twin_site import FABRIC, TwinSite


def test_day0_is_the_hwskus_factory_state(twin: TwinSite):
    db = json.loads(twin.running("rtsw3"))
    assert len(db["PORT"]) == 130 and db["PORT"]["Ethernet4"]["alias"] == "etp1b"     # every port_config.ini row
    assert db["BUFFER_POOL"]["ingress_lossless_pool"]["xoff"] == "29423360"          # buffers_defaults_t1.j2
    assert db["BUFFER_PG"]["Ethernet4|3-4"] == {"profile": "pg_lossless_400000_5m_profile"}   # buffermgrd
    assert db["BUFFER_PROFILE"]["pg_lossless_400000_5m_profile"]["xoff"] == "612140"  # pg_profile_lookup.ini
    assert db["QUEUE"]["Ethernet0|3"] == {"scheduler": "SCHEDULER_Q3", "wred_profile": "WRED_LOSSLESS_Q3"}
    assert db["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "3,4"


def test_a_merged_config_replaces_the_factory_ranges_it_overlaps(twin: TwinSite):
    twin.push("rtsw3", render_device(FABRIC.devices["rtsw3"]))          # NAPALM merge onto day 0
    db = json.loads(twin.running("rtsw3"))
    assert not overlaps(db), overlaps(db)
    assert db["BUFFER_PG"]["Ethernet0|3"] == {"profile": "pg_lossless_400000_40m_profile"}
    assert "Ethernet0|3-4" not in db["BUFFER_PG"] and "Ethernet0|3-4" not in db["BUFFER_QUEUE"]
    assert db["BUFFER_PG"]["Ethernet4|3-4"] == {"profile": "pg_lossless_400000_5m_profile"}   # a port left alone


@pytest.mark.long
def test_a_switch_of_another_hwsku_is_refused_before_anything_is_pushed(tmp_path, monkeypatch, capsys):
    """rtsw3 boots as a Nokia-IXR7220-H4-64D (its own day 0: aliases Ethernet1/1...) while dc1 renders the
    7060X6's ports: the deploy reads the switch's PORT table and refuses that device, leaving it as it was."""
    from nr_run.cli.main import main
    from nr_run.lab.twin.lab import lab_down
    from tests.conftest import DC1
    from tests.site_twin import FAST_OPTIONS
    from tests.twin_site import site_lab_up

    state = tmp_path / "lab"

    def other_sku(doc: dict) -> None:
        node = doc["topology"]["nodes"]["rtsw3"]
        startup = json.loads((state / "clab" / node["startup-config"]).read_text())
        startup["DEVICE_METADATA"]["localhost"].update(hwsku="Nokia-IXR7220-H4-64D",
                                                       platform="x86_64-nokia_ixr7220_h4-r0")
        for entry in startup["PORT"].values():
            for field in ("alias", "index", "lanes"):
                entry.pop(field)
        other = tmp_path / "rtsw3-nokia.json"
        other.write_text(json.dumps(startup))
        node["startup-config"] = str(other)

    site_lab_up(DC1, state, other_sku)
    try:
        monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(state))
        lab = TwinSite(state, tmp_path / "art")
        before = lab.running("rtsw3")
        assert json.loads(before)["PORT"]["Ethernet0"]["alias"] == "Ethernet1/1"          # the Nokia's own table
        rc = main(["deploy", "--site", "dc1", "--lab", "--commit", "--yes", "--json", "--artifacts",
                   str(tmp_path / "art"), "--hosts", "rtsw3", *FAST_OPTIONS])
        report = json.loads(capsys.readouterr().out)
        assert rc == 1
        rtsw3 = next(d for d in report["devices"] if d["device"] == "rtsw3")
        assert "does not match the switch's hardware" in rtsw3["detail"], rtsw3
        assert "Nokia-IXR7220-H4-64D" in rtsw3["detail"]
        assert lab.running("rtsw3") == before                                              # nothing pushed
    finally:
        lab_down(state)
