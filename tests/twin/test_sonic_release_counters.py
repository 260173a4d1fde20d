"""Counters a newer SONiC release adds, served by a twin whose SONiC nodes run a 202511 image (the containerlab
file's image tag names the release): `show interfaces flap` counts link status changes as EOS'
linkStatusChanges does (the first link up is 1, a down and an up per link fault), `show pfc counters --history`
gives the time a storm paused the port; nr-run's SONiC collector reads both over SSH. A 202405 image (the first
release with dc1's HWSKU) refuses both commands, and the collector then leaves them unknown."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from nr_run.lab.twin.lab import lab_down
from nr_run.platforms import registry
from nr_run.platforms.state import DeviceState
from nr_run.runbooks.inventory import init_nornir
from tests.conftest import DC1, REPO
from tests.twin_site import TwinSite, site_lab_up, ssh_run

SONIC, PORT = "rtsw3", "Ethernet16"
PASSWORD = "YourPaSsWoRd"


def sonic_release(tag: str):
    def edit(doc: dict) -> None:
        for node in doc["topology"]["nodes"].values():
            if node.get("kind") == "sonic-vm":
                node["image"] = node["image"].rsplit(":", 1)[0] + ":" + tag
    return edit


newer_sonic = sonic_release("202511")


@pytest.fixture(scope="module")
def older_lab(tmp_path_factory: pytest.TempPathFactory):
    state = tmp_path_factory.mktemp("sonic-202405")
    site_lab_up(DC1, state, sonic_release("202405"))
    try:
        site = TwinSite(state, tmp_path_factory.mktemp("deploy-old"))
        site.deploy(SONIC)
        yield site
    finally:
        lab_down(state)


@pytest.fixture(scope="module")
def newer_lab(tmp_path_factory: pytest.TempPathFactory):
    state = tmp_path_factory.mktemp("sonic-202511")
    site_lab_up(DC1, state, newer_sonic)
    try:
        site = TwinSite(state, tmp_path_factory.mktemp("deploy"))
        site.deploy(SONIC)                  # PFC on: the storm is counted
        yield site
    finally:
        lab_down(state)


def _collect(site: TwinSite, section: str) -> DeviceState:
    """One state section of rtsw3 through nr-run's SONiC collector (its SSH connection, its parsers)."""
    nr = init_nornir("dc1", REPO / "inventory", lab=True, address_map=site.addresses).filter(name=SONIC)
    collector = registry.get("sonic").collector
    state = DeviceState(SONIC, "sonic")

    def task(task):
        out = collector.runner(task)(collector.section_commands(section, None))  # type: ignore[arg-type]
        collector.apply_section(section, out, state, None, time.monotonic())

    result = nr.run(task=task)
    assert not result.failed, result[SONIC].exception
    return state


def _flaps(client) -> dict[str, str]:
    rc, text = ssh_run(client, "show interfaces flap")
    assert rc == 0, text
    lines = text.splitlines()
    assert lines[0].split()[:4] == ["Interface", "Flap", "Count", "Admin"]
    return {line.split()[0]: line.split()[1] for line in lines[2:] if line.strip()}


def test_flap_count_follows_link_changes(newer_lab: TwinSite):
    client = newer_lab.ssh(SONIC, password=PASSWORD)
    try:
        assert "SONiC.202511" in ssh_run(client, "show version")[1]
        assert _flaps(client)[PORT] == "1"                              # came up once after boot
        newer_lab.fault("link_down", device=SONIC, port=PORT)
        assert _flaps(client)[PORT] == "2"
        assert _collect(newer_lab, "interfaces").interfaces[PORT].link_changes == 2
        newer_lab.clear_faults("link_down")
        assert _flaps(client)[PORT] == "3"
        state = _collect(newer_lab, "interfaces")
        assert state.interfaces[PORT].link_changes == 3 and state.interfaces["Ethernet24"].link_changes == 1
    finally:
        client.close()


def test_pause_history_gives_the_time_paused(newer_lab: TwinSite):
    newer_lab.fault("pfc_storm", device=SONIC, port=PORT, priority=3, **{"for": "0.4s"})
    time.sleep(0.6)
    client = newer_lab.ssh(SONIC, password=PASSWORD)
    try:
        rc, text = ssh_run(client, "show pfc counters --history")
    finally:
        client.close()
    assert rc == 0, text
    row = next(line.split() for line in text.splitlines() if line.split()[:2] == [PORT, "PFC3"])
    assert row[2] == "1" and int(row[3].replace(",", "")) == pytest.approx(400_000, abs=20_000)
    paused = _collect(newer_lab, "counters").counters_first
    assert paused is not None
    assert paused.ports[PORT].pfc_rx_pause_us[3] == pytest.approx(400_000, abs=20_000)
    assert paused.ports["Ethernet24"].pfc_rx_pause_us[3] == 0


def test_the_202405_image_refuses_both_and_the_collector_leaves_them_unknown(older_lab, tmp_path: Path):
    deployed_twin = older_lab
    client = deployed_twin.ssh(SONIC, password=PASSWORD)
    try:
        for cmd, refusal in (("show interfaces flap", 'No such command "flap"'),
                             ("show pfc counters --history", "No such option: --history")):
            rc, text = ssh_run(client, cmd)
            assert rc != 0 and refusal in text, cmd
    finally:
        client.close()
    site = TwinSite(deployed_twin.state, tmp_path)
    assert _collect(site, "interfaces").interfaces[PORT].link_changes is None
    sample = _collect(site, "counters").counters_first
    assert sample is not None and sample.ports[PORT].pfc_rx_pause_us == {}
