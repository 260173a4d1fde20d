"""A PFC-only site (inventory/pfc1: ECN marking off on the switches, DCQCN off on every NIC) against its own twin:
deploy from factory defaults, check and the lossless proof on collected state all pass; one NIC left on DCQCN
fails check and the proof naming that server and NIC, and the next deploy fixes it. A server whose NIC has no
DCQCN knobs (another driver) is one line and left untouched."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from nr_run.cli.main import main
from nr_run.intent import compile_site
from nr_run.lab.twin.lab import lab_clear, lab_down, lab_fault, lab_status
from nr_run.platforms import registry
from nr_run.platforms.base import ReplaceCandidate
from nr_run.runbooks.render import render_device
from tests.conftest import REPO
from tests.twin_site import CREDS, FAST_CHECKS, TwinSite, site_lab_up, ssh_run

PFC1 = REPO / "inventory" / "pfc1"


class Site:
    def __init__(self, name: str, inventory: Path, state: Path, artifacts: Path) -> None:
        self.name, self.inventory, self.state, self.artifacts = name, inventory, state, artifacts
        self.addresses = lab_status(state)["addresses"]

    def cli(self, capsys, *argv: str) -> tuple[int, dict]:
        fast = [f"--option={c}.{k}={v}" for c, opts in FAST_CHECKS.items() for k, v in opts.items()] \
            if argv[0] in ("check", "deploy") else []
        extra = ["--artifacts", str(self.artifacts)] if argv[0] != "analyze" else []
        capsys.readouterr()
        rc = main([*argv, "--site", self.name, "--inventory-dir", str(self.inventory), "--lab", "--json", *extra,
                   *fast])
        return rc, json.loads(capsys.readouterr().out)

    def sh(self, host: str, command: str) -> str:
        import paramiko

        client = paramiko.SSHClient()
        client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        client.connect("127.0.0.1", port=self.addresses[host]["port"], username=CREDS["linux"][0],
                       password=CREDS["linux"][1], look_for_keys=False, allow_agent=False)
        try:
            rc, text = ssh_run(client, command)
        finally:
            client.close()
        assert rc == 0, f"{host}: {command}: {text}"
        return text


@pytest.fixture(scope="module")
def pfc1(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    state = tmp_path_factory.mktemp("pfc1-lab")
    site_lab_up(PFC1, state)
    mp = pytest.MonkeyPatch()
    mp.setenv("NR_RUN_LAB_STATE_DIR", str(state))
    try:
        yield Site("pfc1", PFC1.parent, state, tmp_path_factory.mktemp("pfc1-artifacts"))
    finally:
        mp.undo()
        lab_down(state)


def _failing(doc: dict) -> set[tuple[str, str, str, str]]:
    return {(f["check"], f["device"], f["port"], f["kind"]) for f in doc["findings"] if not f["passed"]}


@pytest.mark.long
def test_pfc_only_site_deploys_checks_and_proves_and_a_nic_left_on_dcqcn_is_named(pfc1, capsys):
    rc, report = pfc1.cli(capsys, "deploy", "--commit", "--yes", "--confirm-timeout", "60")
    assert rc == 0, report["message"]
    assert {d["state"] for d in report["devices"]} == {"confirmed"}
    rc, doc = pfc1.cli(capsys, "check")
    assert rc == 0, sorted(_failing(doc))[:5]
    rc, doc = pfc1.cli(capsys, "analyze", "--only", "lossless")
    assert rc == 0 and doc["ok"]

    # gpu2's eth1 back on DCQCN (reaction and notification point on the RoCE priority): ECN on at a PFC-only site
    pfc1.sh("gpu2", "echo 1 > /sys/class/net/eth1/ecn/roce_rp/enable/3")
    pfc1.sh("gpu2", "echo 1 > /sys/class/net/eth1/ecn/roce_np/enable/3")
    rc, doc = pfc1.cli(capsys, "check", "--checks", "host")
    assert rc == 1
    assert _failing(doc) == {("host", "gpu2", "eth1", "nic-dcqcn-rp"), ("host", "gpu2", "eth1", "nic-dcqcn-np")}
    rc, doc = pfc1.cli(capsys, "analyze", "--only", "lossless")
    failed = [f for a in doc["analyses"] for f in a["findings"] if not f["passed"]]
    assert rc == 1 and failed
    assert all(f["data"]["device"] == "gpu2" and f["data"]["port"] == "eth1" and f["data"]["check"] == "dcqcn"
               for f in failed), failed
    assert "PFC-only" in failed[0]["message"]

    rc, report = pfc1.cli(capsys, "deploy", "--commit", "--yes", "--confirm-timeout", "60")
    assert rc == 0 and {d["device"] for d in report["devices"] if d["state"] == "confirmed"} == {"gpu2"}
    rc, doc = pfc1.cli(capsys, "check", "--checks", "host,host-link")
    assert rc == 0, _failing(doc)


def test_a_nic_without_dcqcn_knobs_is_one_line_and_untouched_and_an_old_kernel_gets_mlnx_qos(tmp_path, capsys,
                                                                                             monkeypatch):
    """gpu4's NICs are another driver's (no mlx5 ECN sysfs); gpu3 runs a kernel without the DCB APP trust knob
    and MLNX_OFED's mlnx_qos (topology node labels, as the twin reads them)."""
    def labels(doc: dict) -> None:
        doc["topology"]["nodes"]["gpu4"]["labels"] = {"nic-driver": "generic"}
        doc["topology"]["nodes"]["gpu3"]["labels"] = {"nic-tools": "mlnx_qos"}

    state = tmp_path / "lab"
    site_lab_up(PFC1, state, labels)
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(state))
    try:
        site = Site("pfc1", PFC1.parent, state, tmp_path / "artifacts")
        _push_everything(site, only_switches=True)
        rc, report = site.cli(capsys, "deploy", "--hosts", "gpu3,gpu4", "--commit", "--yes")
        by = {d["device"]: d for d in report["devices"]}
        # gpu4 is skipped with one line; gpu3 is confirmed (the servers never deployed here still fail the
        # final check, as they did before it: exit 1)
        assert rc == 1 and by["gpu4"]["state"] == "skipped" and by["gpu3"]["state"] == "confirmed", report
        assert "eth1: the NIC has no ECN/DCQCN knob /sys/class/net/eth1/ecn/roce_rp/enable/0" in by["gpu4"]["detail"]
        assert "\n" not in by["gpu4"]["detail"] and "nothing new fails" in report["message"]

        link = json.loads(site.sh("gpu4", "ip -j link show dev eth1"))
        assert link[0]["mtu"] == 1500                                  # untouched: still the vendor's default
        assert "Priority trust state: dscp" in site.sh("gpu3", "mlnx_qos -i eth2")
        assert "mlnx_qos -i eth1 --trust=dscp" in site.sh("gpu3", "cat /etc/nr-run/nic.sh")
        rc, doc = site.cli(capsys, "check", "--checks", "host")
        assert {(f["device"], f["kind"]) for f in doc["findings"] if not f["passed"] and f["device"] in ("gpu3", "gpu4")} == \
            {("gpu4", "nic-dcqcn"), ("gpu4", "nic-mtu"), ("gpu4", "nic-trust"), ("gpu4", "nic-pfc"),
             ("gpu4", "nic-dscp-map"), ("gpu4", "nic-tos")}
        rc, report = site.cli(capsys, "deploy", "--hosts", "gpu3")
        assert rc == 0 and report["devices"][0]["state"] == "no change"
    finally:
        lab_down(state)


def _push_everything(site: Site, only_switches: bool = False) -> None:
    """Every device (or every switch) on its rendered config (switches through NAPALM, NICs through the NIC
    driver)."""
    intent = compile_site(PFC1)
    twin = TwinSite(site.state, site.artifacts)
    for name, device in sorted(intent.devices.items()):
        if only_switches and device.tier == 0:
            continue
        config = render_device(device, intent)
        policy = registry.get(device.platform).deploy
        if isinstance(policy, ReplaceCandidate):
            config = policy.replace_candidate(twin.running(name), config)
        twin.push(name, config, replace=True)


def test_a_congested_pfc_only_queue_pauses_its_senders_instead_of_dropping(pfc1, capsys):
    _push_everything(pfc1)
    lab_fault(pfc1.state, "congestion", device="rtsw1", port="Ethernet3", queue=3)    # toward gpu1 eth1
    try:
        pause = pfc1.sh("gpu2", "ethtool -S eth1")          # gpu2 eth1 sends into rtsw1 (its Ethernet4)
        assert int(next(ln for ln in pause.splitlines() if "rx_prio3_pause" in ln).split(":")[1]) > 0
        rc, doc = pfc1.cli(capsys, "check", "--checks", "counters")
        assert not [f for f in doc["findings"] if not f["passed"] and f["kind"] == "lossless-drops"], doc["findings"]
        # a sender that ignores pauses (PFC off on its NIC): the queue can no longer be held, it drops
        pfc1.sh("gpu2", "dcb pfc set dev eth1 prio-pfc 3:off")
        rc, doc = pfc1.cli(capsys, "check", "--checks", "counters")
        drops = {(f["device"], f["port"], f["index"]) for f in doc["findings"]
                 if not f["passed"] and f["kind"] == "lossless-drops"}
        assert ("rtsw1", "Ethernet3", 3) in drops
    finally:
        lab_clear(pfc1.state, "congestion")
        pfc1.sh("gpu2", "dcb pfc set dev eth1 prio-pfc 3:on")
