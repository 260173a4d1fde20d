"""Deploying onto SONiC's factory day 0, one site per shipped 400G/800G HWSKU.

The twin boots each SONiC RTSW with what a switch of its HWSKU has after `config qos reload` (lossless PGs and
queues as `|3-4`, the AZURE maps, the SKU's pools); dc1's RoCE profile makes priority 3 alone lossless, so the
deployed target says `|3`. Through the real CLI (drained path: new QoS maps) and NAPALM (GCU path: the buffer
and queue tables alone) the result may hold no two overlapping ranges of one port, must pass SONiC's YANG
models and check clean.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from nr_run.cli.main import main
from nr_run.intent import compile_site
from nr_run.runbooks.render import render_device
from tests.conftest import DC1
from tests.site_twin import FAST_OPTIONS, site_twin
from tests.sonic_yang.validator import validate
from tests.twin_site import TwinSite

SONIC = ("rtsw3", "rtsw4")
# HWSKU -> its fabric.yaml hardware facts (platform string, GCU ASIC family, lanes of a port_config.ini row)
SKUS = {
    "Arista-7060X6-64PE-O128S2": ("x86_64-arista_7060x6_64pe", "th5", 4),
    "Nokia-IXR7220-H5-64D": ("x86_64-nokia_ixr7220_h5_64d-r0", "th5", 8),
    "Nokia-IXR7220-H4-64D": ("x86_64-nokia_ixr7220_h4-r0", "th4", 8),
    "Mellanox-SN5600-O128": ("x86_64-nvidia_sn5600-r0", "spc4", 4),
}
RANGE_TABLES = ("BUFFER_PG", "BUFFER_QUEUE", "QUEUE")


def sku_site(tmp: Path, hwsku: str) -> Path:
    """dc1 with its SONiC RTSWs on `hwsku`; returns the site folder."""
    site = tmp / "inv" / "dc1"
    shutil.copytree(DC1, site)
    fabric = site / "fabric.yaml"
    data = yaml.safe_load(fabric.read_text())
    platform_id, asic, lanes = SKUS[hwsku]
    data["hardware"]["sonic-rtsw"].update(model=hwsku, platform_id=platform_id, asic=asic, lanes_per_port=lanes)
    fabric.write_text(yaml.safe_dump(data, sort_keys=False))
    return site


def overlaps(db: dict) -> list[tuple[str, str, str]]:
    """(table, key, key) for every two keys of one port whose index ranges overlap."""
    out = []
    for table in RANGE_TABLES:
        spans: dict[str, list[tuple[int, int, str]]] = {}
        for key in db.get(table, {}):
            m = re.fullmatch(r"(.+)\|(\d+)(?:-(\d+))?", key)
            assert m, key
            spans.setdefault(m.group(1), []).append((int(m.group(2)), int(m.group(3) or m.group(2)), key))
        for items in spans.values():
            items.sort()
            out += [(table, a[2], b[2]) for a, b in zip(items, items[1:], strict=False) if b[0] <= a[1]]
    return out


def running(lab: TwinSite, host: str) -> dict:
    return json.loads(lab.running(host))


def _cli(monkeypatch, state: Path, site: Path, artifacts: Path, *argv: str) -> int:
    monkeypatch.setenv("NR_RUN_LAB_STATE_DIR", str(state))
    return main([*argv, "--site", "dc1", "--inventory-dir", str(site.parent), "--lab", "--artifacts",
                 str(artifacts), *FAST_OPTIONS])


def _yang_ok(db: dict) -> None:
    """The running config passes the repository's SONiC YANG models; every buffer and QoS table is checked
    (FEATURE, from the lab's startup config, is a table the vendored models leave out)."""
    report = validate(db)
    assert report.errors == [], report.errors
    assert not set(report.unchecked) & {*RANGE_TABLES, "BUFFER_POOL", "BUFFER_PROFILE", "PORT_QOS_MAP", "WRED_PROFILE",
                                        "CABLE_LENGTH", "DSCP_TO_TC_MAP", "SCHEDULER"}, report.unchecked


@pytest.mark.long
@pytest.mark.parametrize("hwsku", sorted(SKUS))
def test_deploy_onto_factory_day0_replaces_factory_ranges(hwsku, tmp_path, monkeypatch, capsys):
    site = sku_site(tmp_path, hwsku)
    fabric = compile_site(site)
    with site_twin(site, tmp_path / "lab") as state:
        lab = TwinSite(state, tmp_path / "artifacts")
        factory = {h: running(lab, h) for h in SONIC}
        for db in factory.values():                                   # what config qos reload left
            assert db["DEVICE_METADATA"]["localhost"]["hwsku"] == hwsku
            assert db["BUFFER_PG"]["Ethernet0|3-4"]["profile"].startswith("pg_lossless_")
            assert db["BUFFER_QUEUE"]["Ethernet0|3-4"] == {"profile": "egress_lossless_profile"}
            assert db["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "3,4"
            assert not overlaps(db)
        # GCU path: the target's buffer and queue tables alone (no QoS map changes, the SKU's own pools)
        host = "rtsw4"
        target = json.loads(render_device(fabric.devices[host]))
        fragment = {t: target[t] for t in ("BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "CABLE_LENGTH")}
        drv = lab.driver(host)
        try:
            drv.load_merge_candidate(config=json.dumps(fragment))
            drv.commit_config()
            assert drv.last_method[0] == "gcu", drv.last_method
        finally:
            drv.close()
        db = running(lab, host)
        assert not overlaps(db), overlaps(db)
        assert "Ethernet0|3-4" not in db["BUFFER_PG"] and db["BUFFER_PG"]["Ethernet0|3"] == target["BUFFER_PG"]["Ethernet0|3"]
        assert db["BUFFER_PG"]["Ethernet0|0"] == {"profile": "ingress_lossy_profile"}
        # drained path: the whole site through the CLI (the new ROCE maps are applied drained)
        assert _cli(monkeypatch, state, site, tmp_path / "a1", "deploy", "--commit", "--yes", "--json") == 0
        report = json.loads(capsys.readouterr().out)
        assert report["final_check"]["passed"] is True, report["final_check"]
        methods = {d["device"]: d["method"] for d in report["devices"]}
        assert methods["rtsw3"].startswith("drained apply"), methods
        for h in SONIC:
            db = running(lab, h)
            assert not overlaps(db), (h, overlaps(db))
            for itf in fabric.devices[h].interfaces:
                assert db["BUFFER_PG"][f"{itf.name}|3"] == target["BUFFER_PG"][f"{itf.name}|3"] or h != host
                assert f"{itf.name}|3-4" not in db["BUFFER_PG"] and f"{itf.name}|3-4" not in db["BUFFER_QUEUE"]
            # a factory port nr-run does not configure keeps its factory entries
            mine = {i.name for i in fabric.devices[h].interfaces}
            spare = next(k for k in factory[h]["BUFFER_PG"] if k.endswith("|3-4") and k.split("|")[0] not in mine)
            assert db["BUFFER_PG"][spare] == factory[h]["BUFFER_PG"][spare]
            _yang_ok(db)
        assert _cli(monkeypatch, state, site, tmp_path / "a2", "check", "--json") == 0
        assert _cli(monkeypatch, state, site, tmp_path / "a3", "deploy", "--json") == 0      # nothing pending
