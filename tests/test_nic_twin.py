"""GPU server NICs against the twin, through real SSH clients (paramiko, and the NIC driver over it) and the CLI:
a wrong knob is found on its server and NIC and fixed by the next deploy, an unconfirmed commit reverts by itself,
a reboot brings back only what the boot unit re-applies, and a server that stops answering mid-batch is left
whole old or whole new."""

from __future__ import annotations

import json
import threading
import time

import pytest

from nr_run.lab.twin.lab import lab_clear, lab_fault
from nr_run.platforms.linux.nicstate import KnobMissing
from nr_run.runbooks.render import render_device
from tests.twin_site import FABRIC, SERVERS, run_json, ssh_run, wait_until

ECN = "/sys/class/net/{nic}/ecn"
TOS = "/sys/kernel/config/rdma_cm/{rdma}/ports/1/default_roce_tos"


def sh(twin, host: str, *commands: str) -> None:
    """Run commands on a server over SSH (as an operator would); each must succeed."""
    client = twin.ssh(host)
    try:
        for cmd in commands:
            rc, text = ssh_run(client, cmd)
            assert rc == 0, f"{host}: {cmd}: {text}"
    finally:
        client.close()


def nic_script(twin, host: str) -> str:
    """What the server's NICs run, as the NIC script (read back through the NIC driver)."""
    drv = twin.driver(host)
    try:
        return drv.get_config(retrieve="running")["running"]
    finally:
        drv.close()


def failing(twin, capsys, *checks: str) -> tuple[int, set[tuple[str, str, str, str]]]:
    rc, doc = run_json(twin, capsys, "check", "--checks", ",".join(checks))
    return rc, {(f["check"], f["device"], f["port"], f["kind"]) for f in doc["findings"] if not f["passed"]}


def test_deployed_nics_run_their_rendered_script(deployed_twin):
    for host in SERVERS:
        assert nic_script(deployed_twin, host) == render_device(FABRIC.devices[host])


@pytest.mark.long
def test_each_wrong_knob_is_found_on_its_server_and_nic_and_fixed_by_the_next_deploy(deployed_twin, capsys):
    twin = deployed_twin
    sh(twin, "gpu1", "dcb pfc set dev eth1 prio-pfc 3:off 4:on", "dcb apptrust set dev eth2 order pcp")
    sh(twin, "gpu2", f"echo 0 > {TOS.format(rdma='mlx5_0')}")
    sh(twin, "gpu3", "ip link set dev eth2 mtu 1500")
    sh(twin, "gpu4", f"echo 0 > {ECN.format(nic='eth1')}/roce_rp/enable/3")
    rc, found = failing(twin, capsys, "host")
    assert rc == 1
    assert found == {("host", "gpu1", "eth1", "nic-pfc"), ("host", "gpu1", "eth2", "nic-trust"),
                     ("host", "gpu2", "eth1", "nic-tos"), ("host", "gpu3", "eth2", "nic-mtu"),
                     ("host", "gpu4", "eth1", "nic-dcqcn-rp")}

    rc, report = run_json(twin, capsys, "deploy", "--commit", "--yes", "--confirm-timeout", "60")
    states = {d["device"]: d["state"] for d in report["devices"]}
    assert rc == 0, report["message"]
    assert states == {**{n: "no change" for n in states}, **dict.fromkeys(SERVERS, "confirmed")}
    rc, found = failing(twin, capsys, "host", "host-link", "pfc", "interfaces")
    assert (rc, found) == (0, set())
    rc, report = run_json(twin, capsys, "deploy")
    assert rc == 0 and {d["state"] for d in report["devices"]} == {"no change"}


def test_a_nic_at_factory_defaults_is_found_and_configured(deployed_twin, capsys):
    """A server whose boot unit is gone reboots with ConnectX defaults: trust PCP, PFC off, ToS 0, MTU 1500."""
    twin = deployed_twin
    sh(twin, "gpu2", "systemctl disable nr-run-nic.service")
    lab_fault(twin.state, "reboot", device="gpu2")
    rc, found = failing(twin, capsys, "host")
    kinds = {k for _, dev, _, k in found if dev == "gpu2"}
    assert rc == 1 and {d for _, d, _, _ in found} == {"gpu2"}
    assert {"nic-mtu", "nic-trust", "nic-pfc", "nic-dscp-map", "nic-tos", "nic-dcqcn-rp"} <= kinds

    rc, report = run_json(twin, capsys, "deploy", "--hosts", "gpu2", "--commit", "--yes", "--confirm-timeout", "60")
    assert rc == 0 and [d["state"] for d in report["devices"]] == ["confirmed"], report["message"]
    assert [s["name"] for s in report["stages"]] == ["server canary"]
    assert (failing(twin, capsys, "host", "host-link")) == (0, set())


def test_the_boot_unit_reapplies_the_nic_script_after_a_reboot(deployed_twin, capsys):
    twin = deployed_twin
    sh(twin, "gpu3", "ip link set dev eth1 mtu 1500")      # runtime drift: gone at the next boot
    lab_fault(twin.state, "reboot", device="gpu3")
    assert nic_script(twin, "gpu3") == render_device(FABRIC.devices["gpu3"])


def test_an_unconfirmed_host_commit_reverts_by_itself(deployed_twin):
    twin = deployed_twin
    before = nic_script(twin, "gpu1")
    drv = twin.driver("gpu1")
    try:
        drv.load_merge_candidate(config=before.replace("dev eth1 mtu 9000", "dev eth1 mtu 4200"))
        assert "-ip link set dev eth1 mtu 9000" in drv.compare_config()
        drv.commit_config(revert_in=2)
        assert drv.has_pending_commit()
        assert "ip link set dev eth1 mtu 4200" in drv.get_config(retrieve="running")["running"]
        wait_until(lambda: not drv.has_pending_commit(), timeout=10)
        assert drv.get_config(retrieve="running")["running"] == before
    finally:
        drv.close()


def test_a_refused_value_leaves_the_nic_whole_old(deployed_twin):
    twin = deployed_twin
    before = nic_script(twin, "gpu4")
    drv = twin.driver("gpu4")
    try:
        bad = before.replace("dev eth2 mtu 9000", "dev eth2 mtu 8000").replace(
            "echo 32767 > /sys/class/net/eth2/ecn/roce_rp/rpg_byte_reset",
            "echo 99999 > /sys/class/net/eth2/ecn/roce_rp/rpg_byte_reset")
        drv.load_merge_candidate(config=bad)
        with pytest.raises(RuntimeError, match="refused the NIC script.*Invalid argument"):
            drv.commit_config(revert_in=30)
        assert not drv.has_pending_commit()
    finally:
        drv.close()
    assert nic_script(twin, "gpu4") == before


def test_a_script_naming_another_rdma_device_is_refused_before_anything_changes(deployed_twin):
    twin = deployed_twin
    sh(twin, "gpu1", "ip link set dev eth1 mtu 1500")
    drv = twin.driver("gpu1")
    try:
        with pytest.raises(KnobMissing, match="eth1 is mlx5_0 port 1 on the host"):
            drv.load_merge_candidate(
                config=render_device(FABRIC.devices["gpu1"]).replace("mlx5_0 port 1", "mlx5_7 port 1"))
    finally:
        drv.close()
    assert "dev eth1 mtu 1500" in nic_script(twin, "gpu1")


@pytest.mark.long
def test_a_server_timing_out_mid_batch_is_left_whole_old_or_whole_new(deployed_twin, capsys):
    """gpu3 and gpu4 have NIC drift; gpu4 stops answering right after its commit: its post-check, rollback and
    confirm cannot reach it, its revert timer restores it, the deploy reads it back once it answers again."""
    twin = deployed_twin
    for host in ("gpu3", "gpu4"):
        sh(twin, host, "ip link set dev eth1 mtu 1500", "dcb pfc set dev eth2 prio-pfc 3:off")
    old = {h: nic_script(twin, h) for h in ("gpu3", "gpu4")}
    stop = threading.Event()

    def cut_gpu4_after_its_commit() -> None:
        while not stop.is_set():
            lines = [json.loads(ln) for ln in (twin.artifacts / "audit.jsonl").read_text().splitlines()] \
                if (twin.artifacts / "audit.jsonl").exists() else []
            if any(ln["device"] == "gpu4" and ln.get("outcome") == "committed" for ln in lines):
                lab_fault(twin.state, "unreachable", device="gpu4")
                time.sleep(3)
                lab_clear(twin.state, "unreachable", device="gpu4")
                return
            time.sleep(0.05)

    cutter = threading.Thread(target=cut_gpu4_after_its_commit)
    cutter.start()
    try:
        rc, report = run_json(twin, capsys, "deploy", "--hosts", "gpu3,gpu4", "--commit", "--yes",
                              "--confirm-timeout", "5")
    finally:
        stop.set()
        cutter.join()
    states = {d["device"]: d["state"] for d in report["devices"]}
    assert rc == 1 and states["gpu3"] == "confirmed" and states["gpu4"] in ("reverted", "rolled back"), report
    assert nic_script(twin, "gpu3") == render_device(FABRIC.devices["gpu3"])     # whole new
    assert nic_script(twin, "gpu4") == old["gpu4"]                               # whole old


def _counters(twin, host: str, rdma: str) -> tuple[int, int]:
    """(ECN-marked RoCE packets received, CNPs sent) of an RDMA device, read in one command."""
    hw = f"/sys/class/infiniband/{rdma}/ports/1/hw_counters"
    client = twin.ssh(host)
    try:
        rc, text = ssh_run(client, f"cat {hw}/np_ecn_marked_roce_packets {hw}/np_cnp_sent")
    finally:
        client.close()
    assert rc == 0, text
    marked, sent = (int(x) for x in text.split())
    return marked, sent


def test_ecn_marks_toward_a_nic_get_cnps_only_where_its_notification_point_is_on(deployed_twin):
    twin = deployed_twin
    sh(twin, "gpu2", f"echo 0 > {ECN.format(nic='eth1')}/roce_np/enable/3")
    assert _counters(twin, "gpu1", "mlx5_0") == (0, 0)
    for port in ("Ethernet3", "Ethernet4"):             # rtsw1's ports toward gpu1 eth1 and gpu2 eth1
        lab_fault(twin.state, "congestion", device="rtsw1", port=port, queue=3)
    marked, sent = _counters(twin, "gpu1", "mlx5_0")
    assert marked > 0 and sent == marked                 # DCQCN on: every marked packet answered with a CNP
    marked, sent = _counters(twin, "gpu2", "mlx5_0")
    assert marked > 0 and sent == 0                      # its notification point is off: no CNP


def test_a_server_that_does_not_answer_is_one_line_and_the_others_are_deployed(deployed_twin, capsys):
    twin = deployed_twin
    for host in ("gpu2", "gpu3"):
        sh(twin, host, "ip link set dev eth2 mtu 1500")
    lab_fault(twin.state, "unreachable", device="gpu3")
    try:
        rc, report = run_json(twin, capsys, "deploy", "--hosts", "gpu2,gpu3", "--commit", "--yes",
                              "--confirm-timeout", "60")
    finally:
        lab_clear(twin.state, "unreachable", device="gpu3")
    by = {d["device"]: d for d in report["devices"]}
    assert rc == 1 and by["gpu2"]["state"] == "confirmed", report["message"]
    assert by["gpu3"]["state"] == "skipped" and "does not answer over SSH" in by["gpu3"]["detail"]
    assert "\n" not in by["gpu3"]["detail"]
    assert "dev eth2 mtu 1500" in nic_script(twin, "gpu3")                 # untouched
    assert nic_script(twin, "gpu2") == render_device(FABRIC.devices["gpu2"])
