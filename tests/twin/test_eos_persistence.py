"""What one lab run commits, the next run serves; the background lab is controlled by pid + control port."""

from __future__ import annotations

from nr_run.lab.twin.lab import lab_clear, lab_down, lab_fault, lab_status, lab_up
from tests.twin.eos_lab import DC1, napalm_eos, start_dc1


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
    st = lab_up(DC1, tmp_path, base_port=0)
    try:
        assert st["running"] and st["addresses"]["ctsw1"]["platform"] == "eos"
        port = st["addresses"]["ctsw1"]["port"]
        import napalm

        drv = napalm.get_network_driver("eos")("127.0.0.1", "admin", "admin",
                                               optional_args={"transport": "https", "port": port})
        drv.open()
        lab_fault(tmp_path, "drift", device="ctsw1", lines=["interface Ethernet3", "description out-of-band"])
        assert "description out-of-band" in drv.get_config(retrieve="running")["running"]
        lab_fault(tmp_path, "link_down", device="ctsw1", port="Ethernet2")
        assert not drv.get_interfaces()["Ethernet2"]["is_up"]
        assert lab_clear(tmp_path) == 1
        assert drv.get_interfaces()["Ethernet2"]["is_up"]
        drv.close()
    finally:
        assert lab_down(tmp_path)
    assert not lab_status(tmp_path)["running"]
