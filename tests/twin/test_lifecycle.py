"""Device life cycle in the twin, as real devices keep it: per-session BGP uptimes, commit and revert timers across a
twin restart, refused faults, ports, side-by-side sites, the lab CLI's help and its relative inventory paths."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from nr_run.cli.main import main
from nr_run.lab.twin.lab import Lab, lab_down, lab_fault, lab_status
from nr_run.lab.twin.platforms import PortsBusy
from tests.conftest import DC1
from tests.twin_site import SWITCHES, TwinSite, site_lab_up, site_topology, ssh_run, wait_until


def _uptimes(site: TwinSite, host: str) -> dict[str, float]:
    peers = site.eapi(host).enable(["show ip bgp summary"])[0]["result"]["vrfs"]["default"]["peers"]
    return {ip: p["upDownTime"] for ip, p in peers.items()}


def test_a_fault_resets_only_the_sessions_it_touches(deployed_twin: TwinSite):
    before = _uptimes(deployed_twin, "rtsw1")
    ctsw = _uptimes(deployed_twin, "ctsw1")
    time.sleep(0.2)
    deployed_twin.fault("link_down", device="rtsw2", port="Ethernet1")      # rtsw2 <-> ctsw1
    deployed_twin.clear_faults("link_down")
    assert _uptimes(deployed_twin, "rtsw1") == before                      # rtsw1's sessions never went down
    after = _uptimes(deployed_twin, "ctsw1")
    changed = {ip for ip in ctsw if after[ip] != ctsw[ip]}
    assert len(changed) == 1                                                  # only the session to rtsw2


def test_unknown_device_or_port_is_refused(twin: TwinSite):
    with pytest.raises(ValueError, match="no device 'rtsw9'"):
        twin.fault("link_down", device="rtsw9", port="Ethernet1")
    with pytest.raises(ValueError, match="no cabled port 'Ethernet99'"):
        twin.fault("pfc_storm", device="rtsw1", port="Ethernet99", priority=3)
    assert lab_status(twin.state)["faults"] == []


def _restart(tmp_path: Path) -> Lab:
    lab = Lab(site_topology(DC1, tmp_path / "clab"), tmp_path, base_port=0)
    lab.start()
    return lab


@pytest.mark.long
def test_commit_timers_survive_a_restart_and_still_revert(tmp_path: Path):
    lab = _restart(tmp_path)
    site = TwinSite(tmp_path, tmp_path / "a")
    node = site.eapi("rtsw1")
    node.run_commands(["configure session pending", "interface Ethernet3", "description unconfirmed",
                       "end", "configure session pending commit timer 00:00:03"])
    sonic = site.ssh("rtsw3", "admin", "YourPaSsWoRd")
    saved = ssh_run(sonic, "show runningconfiguration all")[1]
    assert ssh_run(sonic, "config checkpoint before")[0] == 0
    stdin, out, _ = sonic.exec_command("cat > /tmp/change.json-patch")     # any change; the rollback restores it
    stdin.write('[{"op": "replace", "path": "/DEVICE_METADATA/localhost/hostname", "value": "changed-by-test"}]')
    stdin.channel.shutdown_write()
    out.channel.recv_exit_status()
    assert ssh_run(sonic, "sudo config apply-patch /tmp/change.json-patch")[0] == 0
    assert ssh_run(sonic, "show runningconfiguration all")[1] != saved
    assert ssh_run(sonic, "systemd-run --on-active=3 --unit=nr-run-revert config rollback before")[0] == 0
    sonic.close()
    lab.stop()

    again = _restart(tmp_path)
    try:
        site = TwinSite(tmp_path, tmp_path / "a")
        sessions = site.eapi("rtsw1").enable(["show configuration sessions detail"])[0]["result"]
        assert sessions.get("commitTimerSessionName") == "pending"       # the restart kept the pending timer
        assert "description unconfirmed" in site.running("rtsw1")
        sonic = site.ssh("rtsw3", "admin", "YourPaSsWoRd")
        assert ssh_run(sonic, "systemctl is-active nr-run-revert.timer")[1].strip() == "active"
        wait_until(lambda: "description unconfirmed" not in site.running("rtsw1"), timeout=10)
        wait_until(lambda: ssh_run(sonic, "systemctl is-active nr-run-revert.timer")[0] != 0, timeout=10)
        wait_until(lambda: ssh_run(sonic, "show runningconfiguration all")[1] == saved, timeout=10)
        sonic.close()
    finally:
        again.stop()


def _listen_below(limit: int) -> socket.socket:
    """A listening socket on a free loopback port below `limit` (an ephemeral port may sit too high for a
    base port: the lab's upper channels would pass 65535)."""
    for port in range(20000, limit):
        sock = socket.socket()
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            sock.close()
            continue
        sock.listen()
        return sock
    raise RuntimeError(f"no free port below {limit}")


def test_busy_base_port_is_refused_or_replaced_by_free_ports(tmp_path: Path):
    with _listen_below(30000) as busy:
        port = busy.getsockname()[1]
        topology = site_topology(DC1, tmp_path / "clab")
        with pytest.raises(PortsBusy, match=str(port)):
            Lab(topology, tmp_path / "a", base_port=port)
        lab = Lab(topology, tmp_path / "b", base_port=port, auto_port=True)
        assert "in use" in lab.port_note
        addresses = lab.start()
        try:
            assert port not in {a["port"] for a in addresses.values()}
        finally:
            lab.stop()


def test_a_base_port_whose_channels_pass_65535_is_refused_or_replaced(tmp_path: Path):
    topology = site_topology(DC1, tmp_path / "clab")
    with pytest.raises(PortsBusy, match="past 65535"):
        Lab(topology, tmp_path / "a", base_port=60000)
    lab = Lab(topology, tmp_path / "b", base_port=60000, auto_port=True)
    addresses = lab.start()
    try:
        assert all(0 < a["port"] <= 65535 and 0 < a["gnmi_port"] <= 65535 for a in addresses.values()
                   if "gnmi_port" in a)
    finally:
        lab.stop()


def test_two_sites_side_by_side(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory):
    from tests.sitegen import generate_site

    other = generate_site(tmp_path_factory.mktemp("site2"), rtsw=2, ctsw=2, nics=2, sonic_every=0, site="dc2")
    try:
        a = site_lab_up(DC1, tmp_path / "dc1")
        b = site_lab_up(other, tmp_path / "other")
        assert a["running"] and b["running"]
        ports_a = {e["port"] for e in a["addresses"].values()}
        assert not ports_a & {e["port"] for e in b["addresses"].values()}
        assert TwinSite(tmp_path / "dc1", tmp_path).eapi("ctsw1").enable(["show hostname"])[0]["result"][
            "hostname"] == "ctsw1"
        name = sorted(n for n, e in b["addresses"].items() if e["platform"] == "eos")[0]
        assert TwinSite(tmp_path / "other", tmp_path).eapi(name).enable(["show hostname"])[0]["result"][
            "hostname"] == name
    finally:
        lab_down(tmp_path / "dc1")
        lab_down(tmp_path / "other")


def test_fault_help_lists_kinds_and_parameters(capsys: pytest.CaptureFixture[str]):
    assert main(["lab", "fault", "--help"]) == 0
    out = capsys.readouterr().out
    for kind in ("link_down", "cable_swap", "pfc_storm", "latency"):
        assert kind in out
    assert "priority=" in out and "PFC priority 0-7" in out


def test_lab_up_with_a_relative_inventory_dir_from_another_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(tmp_path / "state"))
    inventory = os.path.relpath(DC1.parent, tmp_path)
    assert main(["lab", "up", "--site", "dc1", "--inventory-dir", inventory, "--base-port", "0", "--json"]) == 0
    try:
        assert lab_status(tmp_path / "state")["running"]
        with pytest.raises(ValueError, match="no device"):
            lab_fault(tmp_path / "state", "unreachable", device="nope")
    finally:
        assert main(["lab", "down", "--site", "dc1", "--inventory-dir", inventory, "--json"]) == 0
    assert set(SWITCHES) <= set(lab_status(tmp_path / "state")["addresses"])


def test_a_reboot_boots_the_startup_config(twin: TwinSite):
    node = twin.eapi("rtsw1")
    node.run_commands(["configure session unsaved", "interface Ethernet3", "description not-saved",
                       "end", "configure session unsaved commit timer 00:05:00"])
    sonic = twin.ssh("rtsw3", "admin", "YourPaSsWoRd")
    assert ssh_run(sonic, "systemd-run --on-active=300 --unit=nr-run-revert true")[0] == 0
    sonic.close()
    uptime = node.enable(["show version"])[0]["result"]["uptime"]
    time.sleep(0.3)
    twin.fault("reboot", device="rtsw1")
    twin.fault("reboot", device="rtsw3")
    assert "not-saved" not in twin.running("rtsw1")
    result = twin.eapi("rtsw1").enable(["show configuration sessions detail", "show version"])
    assert "commitTimerSessionName" not in result[0]["result"] and result[1]["result"]["uptime"] < uptime
    sonic = twin.ssh("rtsw3", "admin", "YourPaSsWoRd")
    assert ssh_run(sonic, "systemctl is-active nr-run-revert.timer")[0] != 0     # transient units do not survive
    sonic.close()
    assert lab_status(twin.state)["faults"] == []                                 # a reboot is an action


def test_commit_rejected_applies_to_sonic_too(twin: TwinSite):
    twin.fault("commit_rejected", device="rtsw3")
    sonic = twin.ssh("rtsw3", "admin", "YourPaSsWoRd")
    try:
        assert ssh_run(sonic, "cat > /tmp/p.json <<EOF\n[]\nEOF")[0] == 0
        rc, out = ssh_run(sonic, "config apply-patch /tmp/p.json")
        assert rc == 2 and "rejected" in out
        rc, out = ssh_run(sonic, "config apply-patch --dry-run /tmp/p.json")
        assert rc == 0
    finally:
        sonic.close()
