"""EOS PFC watchdog timers on EOS's grid: timeout and recovery-time in 10 ms steps, polling in 1 ms steps."""

from __future__ import annotations

import pytest

from nr_run.platforms.site import load_site


@pytest.mark.parametrize(("key", "value", "hint"), [("detection_ms", 125, "use 120 or 130"),
                                                     ("restoration_ms", 405, "use 400 or 410")])
def test_a_timer_off_the_grid_is_refused_naming_the_key(site, key, value, hint):
    site.edit("fabric.yaml", lambda d: d["roce_profiles"]["roce"]["pfc_watchdog"].update({key: value}))
    _, findings = load_site(site.path)
    found = [f for f in findings if f.rule == "eos-watchdog-grid"]
    assert sorted(f.host for f in found) == ["ctsw1", "ctsw2", "rtsw1", "rtsw2"]          # the EOS switches
    assert {f.field for f in found} == {f"roce_profiles.roce.pfc_watchdog.{key}"}
    assert all(f.severity == "error" and hint in f.message and "10 ms" in f.message for f in found)


def test_timers_on_the_grid_pass(site):
    site.edit("fabric.yaml", lambda d: d["roce_profiles"]["roce"]["pfc_watchdog"].update(
        detection_ms=130, restoration_ms=410, poll_ms=7))
    _, findings = load_site(site.path)
    assert not [f for f in findings if f.rule == "eos-watchdog-grid"]
