"""What one lab run commits, the next run serves; the background lab is controlled by pid + control port;
a reset through the control API brings a running lab back to day 0 or to a saved baseline.

These tests stop and restart labs, so they run their own instead of the session's shared twin.
"""

from __future__ import annotations

import napalm
import pytest

from nr_run.lab.twin.lab import Lab, lab_clear, lab_down, lab_fault, lab_reset, lab_status
from tests.conftest import DC1
from tests.twin_site import site_lab_up, site_topology


def napalm_eos(lab: Lab, host: str):
    drv = napalm.get_network_driver("eos")("127.0.0.1", "admin", "admin", timeout=20,
                                           optional_args={"transport": "https", "port": lab.addresses[host]["port"]})
    drv.open()
    return drv


def start_dc1(state_dir) -> Lab:
    lab = Lab(site_topology(DC1, state_dir / "clab"), state_dir, base_port=0)
    lab.start()
    return lab


def test_second_run_sees_first_commit(tmp_path):
    lab = start_dc1(tmp_path)
    drv = napalm_eos(lab, "rtsw1")
    drv.load_merge_candidate(config="interface Ethernet3\n   description persisted\n")
    drv.commit_config()
    drv.close()
    lab.fault("link_down", device="ctsw2", port="Ethernet2")
    lab.stop()

    again = start_dc1(tmp_path)
    try:
        drv = napalm_eos(again, "rtsw1")
        assert "description persisted" in drv.get_config(retrieve="running")["running"]
        drv.close()
        drv = napalm_eos(again, "rtsw2")
        assert not drv.get_interfaces()["Ethernet2"]["is_up"]     # the fault persisted too
        drv.close()
    finally:
        again.stop()


def test_background_lab_up_fault_down(tmp_path):
    st = site_lab_up(DC1, tmp_path)
    try:
        assert st["running"] and st["addresses"]["ctsw1"]["platform"] == "eos"
        port = st["addresses"]["ctsw1"]["port"]
        drv = napalm.get_network_driver("eos")("127.0.0.1", "admin", "admin",
                                               optional_args={"transport": "https", "port": port})
        drv.open()
        lab_fault(tmp_path, "drift", device="ctsw1", lines=["interface Ethernet3", "description out-of-band"])
        assert "description out-of-band" in drv.get_config(retrieve="running")["running"]
        lab_fault(tmp_path, "link_down", device="ctsw1", port="Ethernet2")
        assert not drv.get_interfaces()["Ethernet2"]["is_up"]
        assert lab_clear(tmp_path) == 1
        assert drv.get_interfaces()["Ethernet2"]["is_up"]
        lab_fault(tmp_path, "link_down", device="ctsw1", port="Ethernet2")
        status = lab_reset(tmp_path)              # in place: same process, same ports, day-0 config
        assert status["faults"] == [] and lab_status(tmp_path)["pid"] == st["pid"]
        assert drv.get_interfaces()["Ethernet2"]["is_up"]
        assert "description out-of-band" not in drv.get_config(retrieve="running")["running"]
        drv.close()
    finally:
        assert lab_down(tmp_path)
    assert not lab_status(tmp_path)["running"]


def test_reset_restores_a_saved_baseline_and_refuses_unknown_ones(tmp_path):
    lab = start_dc1(tmp_path)
    try:
        drv = napalm_eos(lab, "rtsw2")
        drv.load_merge_candidate(config="interface Ethernet3\n   description baseline\n")
        drv.commit_config()
        lab.save_baseline("mine")
        drv.load_merge_candidate(config="interface Ethernet3\n   description after-baseline\n")
        drv.commit_config()
        drv.close()
        lab.reset(baseline="mine")
        drv = napalm_eos(lab, "rtsw2")                  # same port: the reset kept the listeners
        running = drv.get_config(retrieve="running")["running"]
        assert "description baseline" in running and "after-baseline" not in running
        lab.reset()
        assert "description baseline" not in drv.get_config(retrieve="running")["running"]
        drv.close()
        with pytest.raises(ValueError, match="no baseline"):
            lab.reset(baseline="never-saved")
        with pytest.raises(ValueError, match="letters, digits"):
            lab.save_baseline("../escape")
    finally:
        lab.stop()
