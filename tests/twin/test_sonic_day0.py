"""dc1's SONiC RTSWs boot their HWSKU's factory day 0 and a deploy replaces its ranges (the fast case; one site
per shipped HWSKU is in test_sonic_factory_day0.py). Read through NAPALM's SONiC driver."""

from __future__ import annotations

import json

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
