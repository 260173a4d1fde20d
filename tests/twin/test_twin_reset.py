"""The shared twin between tests: a reset through the control API undoes what real clients changed, and the
GPU servers' shell lets netmiko log out at once (the prompt of a non-root user ends in `$`)."""

from __future__ import annotations

import json

import pytest
from netmiko import ConnectHandler

from nr_run.lab.twin.lab import lab_reset, lab_status
from tests.twin_site import TwinSite, nic_ip, ssh_run


def test_reset_undoes_commits_host_changes_faults_and_perftest_servers(twin: TwinSite):
    sonic = twin.driver("rtsw4")
    sonic.load_merge_candidate(config=json.dumps({"PORT": {"Ethernet16": {"mtu": "9000"}}}))
    sonic.commit_config(revert_in=300)                     # a pending revert timer the reset must drop too
    sonic.close()
    gpu3 = twin.ssh("gpu3")
    ssh_run(gpu3, "dcb pfc set dev eth1 prio-pfc 3:on")        # day 0 leaves the NIC's PFC off
    gpu4 = twin.ssh("gpu4")
    assert ssh_run(gpu4, "ib_write_bw -d mlx5_0 --report_gbits")[0] == 0     # a listening perftest server
    gpu4.close()
    twin.fault("link_down", device="rtsw1", port="Ethernet1")
    pid = lab_status(twin.state)["pid"]

    status = lab_reset(twin.state)

    assert status["faults"] == [] and lab_status(twin.state)["pid"] == pid
    sonic = twin.driver("rtsw4")                            # same address map: the lab kept its ports
    try:
        assert json.loads(sonic.get_config(retrieve="running")["running"])["PORT"]["Ethernet16"]["mtu"] == "9100"
        assert not sonic.has_pending_commit()
    finally:
        sonic.close()
    gpu3 = twin.ssh("gpu3")
    try:
        pfc = json.loads(ssh_run(gpu3, "dcb -j pfc show dev eth1")[1])["prio_pfc"]
        assert [p["prio"] for p in pfc if p["enabled"]] == []      # back to day 0: the PFC change is gone
        rc, out = ssh_run(gpu3, f"ib_write_bw -d mlx5_0 --report_gbits {nic_ip('gpu4', 'eth1')}")
        assert rc != 0 and "Couldn't connect" in out
    finally:
        gpu3.close()
    eos = twin.driver("rtsw1")
    try:
        assert eos.get_interfaces()["Ethernet1"]["is_up"]
    finally:
        eos.close()


def test_netmiko_logs_out_of_a_gpu_server_without_waiting(twin: TwinSite):
    conn = ConnectHandler(device_type="linux", host="127.0.0.1", port=twin.addresses["gpu1"]["port"],
                          username="admin", password="admin", ssh_strict=False, allow_agent=False,
                          use_keys=False)
    assert conn.find_prompt().endswith("$")
    assert conn.send_command("hostname").strip() == "gpu1"
    # with a `#` prompt netmiko takes the session for config mode: its logout sends `exit` and waits 10 s for `$`
    assert not conn.check_config_mode()
    conn.disconnect()


def test_a_server_that_becomes_unreachable_drops_its_sessions_at_once(twin: TwinSite):
    conn = ConnectHandler(device_type="linux", host="127.0.0.1", port=twin.addresses["gpu2"]["port"],
                          username="admin", password="admin", ssh_strict=False, allow_agent=False,
                          use_keys=False)
    try:
        assert conn.send_command("hostname").strip() == "gpu2"
        twin.fault("unreachable", device="gpu2")
        # the session is closed (OSError), not left silent: netmiko would wait 10 s for its prompt, then raise
        # ReadTimeout, which is no OSError
        with pytest.raises(OSError):
            conn.send_command("hostname")
    finally:
        conn.disconnect()
