"""NAPALM getters whose data only the day-0 (startup) config has: the admin user of the cEOS startup config."""

from __future__ import annotations

from napalm.base import models
from napalm.base.test import helpers

from tests.twin_site import TwinSite


def test_get_users_at_day0(twin: TwinSite):
    drv = twin.driver("ctsw1")
    try:
        users = drv.get_users()
    finally:
        drv.close()
    assert set(users) == {"admin"} and users["admin"]["level"] == 15
    assert all(helpers.test_model(models.UsersDict, u) for u in users.values())
