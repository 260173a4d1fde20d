"""The SONiC change plan against the twin: GCU for what GCU takes on this HWSKU, a drained apply for the
rest, refusals exactly as a real switch words them. Everything goes through the CLI, NAPALM and SSH."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from napalm.base.exceptions import CommitError

from tests.conftest import edited_dc1
from tests.twin_site import TwinSite, run_json, ssh_run

SONIC = ["rtsw3", "rtsw4"]
REFUSED_POOL = ("Modification of BUFFER_POOL table is illegal- validating function "
                "generic_config_updater.field_operation_validators.rdma_config_update_validator returned False")


def _ecn_and_watchdog(d: dict) -> None:
    d["roce_profiles"]["roce"]["ecn"]["min_kbytes"] = 200
    d["roce_profiles"]["roce"]["pfc_watchdog"]["detection_ms"] = 300


def _bigger_pool(tmp_path: Path) -> Path:
    """dc1 with its own copy of the RTSWs' HWSKU folder (hardware sku_dir) whose shared headroom pool is larger."""
    inv = edited_dc1(tmp_path, lambda d: d["hardware"]["sonic-rtsw"].update(sku_dir="skus"))
    from importlib import resources
    sku = "Arista-7060X6-64PE-O128S2"
    dest = inv / "dc1" / "skus" / sku
    shutil.copytree(str(resources.files("nr_run.platforms.sonic").joinpath("sku", sku)), dest)
    t1 = dest / "buffers_defaults_t1.j2"
    t1.write_text(t1.read_text().replace('"xoff": "29423360"', '"xoff": "30000000"'))
    return inv


def _running(twin: TwinSite, host: str) -> dict:
    return json.loads(twin.running(host))


def _sonic_commands(twin: TwinSite, host: str, since: int) -> list[str]:
    return [c for c in twin.log_commands(host)[since:]
            if c.split()[:2] != ["show", "runningconfiguration"]
            and not (c.startswith(("cat ", "rm ")) and "config apply-patch" not in c)]   # a patch is written and applied in one


def test_ecn_and_watchdog_change_goes_through_gcu(deployed_twin, tmp_path, capsys):
    inv = edited_dc1(tmp_path, _ecn_and_watchdog)
    rc, report = run_json(deployed_twin, capsys, "deploy", "--inventory-dir", str(inv))
    assert rc == 2
    methods = {d["device"]: d["method"] for d in report["devices"]}
    for host in SONIC:
        assert methods[host].startswith("gcu: GCU may patch PFC_WD, WRED_PROFILE"), methods
    assert methods["rtsw1"] == ""                  # EOS commits a config session; nothing to classify
    before = {h: len(deployed_twin.log_commands(h)) for h in SONIC}
    rc, report = run_json(deployed_twin, capsys, "deploy", "--inventory-dir", str(inv), "--commit", "--yes",
                          "--confirm-timeout", "60")
    assert rc == 0, report["message"]
    for host in SONIC:
        cmds = _sonic_commands(deployed_twin, host, before[host])
        assert any("config apply-patch" in c for c in cmds) and not any("config reload" in c for c in cmds)
        db = _running(deployed_twin, host)
        assert {p["green_min_threshold"] for p in db["WRED_PROFILE"].values()} == {"200000"}
        assert {v["detection_time"] for k, v in db["PFC_WD"].items() if k != "GLOBAL"} == {"300"}


def test_buffer_pool_change_is_a_drained_apply(deployed_twin, tmp_path, capsys):
    inv = _bigger_pool(tmp_path)
    rc, report = run_json(deployed_twin, capsys, "deploy", "--inventory-dir", str(inv))
    assert rc == 2
    assert sorted(d["device"] for d in report["devices"] if d["state"] == "diffed") == SONIC
    for d in (d for d in report["devices"] if d["device"] in SONIC):
        assert d["method"].startswith("drained apply: GCU refuses BUFFER_POOL"), d
        assert "(th5)" in d["method"]
    before = {h: len(deployed_twin.log_commands(h)) for h in SONIC}
    old_xoff = _running(deployed_twin, "rtsw3")["BUFFER_POOL"]["ingress_lossless_pool"]["xoff"]
    rc, report = run_json(deployed_twin, capsys, "deploy", "--inventory-dir", str(inv), "--commit", "--yes",
                          "--confirm-timeout", "60")
    assert rc == 0, report["message"]
    for host in SONIC:
        cmds = _sonic_commands(deployed_twin, host, before[host])
        steps = [next(i for i, c in enumerate(cmds) if c.startswith(word) or (word.startswith("sonic-db") and word in c))
                 for word in ("sudo systemd-run --on-active=", "sudo TSA", "sudo config reload -y /tmp/napalm_sonic_candidate_",
                              "sonic-db-cli APPL_DB", "sudo TSB")]
        # guard (a timer that restores and undrains) -> drain -> apply -> verify -> undrain
        assert steps == sorted(steps), "\n".join(cmds)
        timer = cmds[steps[0]]
        assert "TSA; /usr/local/bin/config reload -y /tmp/napalm_sonic_backup_" in timer and timer.endswith("; TSB'")
        assert not any("apply-patch" in c for c in cmds)
        xoff = _running(deployed_twin, host)["BUFFER_POOL"]["ingress_lossless_pool"]["xoff"]
        assert int(xoff) > int(old_xoff)
    client = deployed_twin.ssh("rtsw3", password="YourPaSsWoRd")
    try:
        assert ssh_run(client, "TSC")[1] == "System Mode: Normal\n"      # undrained again
    finally:
        client.close()


@pytest.mark.long
def test_gcu_refusal_mid_rollout_rolls_the_stage_back(deployed_twin, tmp_path, capsys):
    inv = edited_dc1(tmp_path, _ecn_and_watchdog)
    before = deployed_twin.snapshot()
    deployed_twin.fault("commit_rejected", device="rtsw4")
    rc, report = run_json(deployed_twin, capsys, "deploy", "--inventory-dir", str(inv), "--commit", "--yes",
                          "--batch", "2", "--confirm-timeout", "60")
    assert rc == 1
    states = {d["device"]: d["state"] for d in report["devices"]}
    stage = next(s for s in report["stages"] if "rtsw4" in s["devices"])
    assert len(stage["devices"]) == 2 and report["stopped_at"] == stage["name"]
    assert states["rtsw4"] == "failed"
    mate = next(h for h in stage["devices"] if h != "rtsw4")
    assert states[mate] == "rolled back"           # committed in the same stage, then reverted
    detail = next(d["detail"] for d in report["devices"] if d["device"] == "rtsw4")
    assert "configuration rejected" in detail
    for host in stage["devices"]:
        assert deployed_twin.running(host) == before[host], host          # the whole stage is back
    later = [h for s in report["stages"][report["stages"].index(stage) + 1:] for h in s["devices"]]
    assert all(states[h] == "untouched" and deployed_twin.running(h) == before[h] for h in later)


def test_twin_refuses_what_gcu_refuses_with_its_words(deployed_twin):
    client = deployed_twin.ssh("rtsw3", password="YourPaSsWoRd")

    def apply(ops: list[dict]) -> tuple[int, str]:
        stdin, out, _ = client.exec_command("cat > /tmp/t.json-patch")
        stdin.write(json.dumps(ops))
        stdin.channel.shutdown_write()
        out.channel.recv_exit_status()
        return ssh_run(client, "sudo config apply-patch /tmp/t.json-patch")

    try:
        before = ssh_run(client, "show runningconfiguration all")[1]
        rc, text = apply([{"op": "replace", "path": "/BUFFER_POOL/ingress_lossless_pool/size", "value": "1000"}])
        assert rc == 2 and REFUSED_POOL in text and "Failed to apply patch" in text
        rc, text = apply([{"op": "remove", "path": "/PFC_WD/GLOBAL"}])
        assert rc == 2 and "Operation: remove is illegal on field: /PFC_WD/GLOBAL" in text
        # a one-part STATIC_ROUTE key is the template list, which has no blackhole (the YANG models say no)
        rc, text = apply([{"op": "add", "path": "/STATIC_ROUTE/10.99.0.0~124",
                           "value": {"blackhole": "true"}}])
        assert rc == 2 and "Given patch will produce invalid config" in text and "STATIC_ROUTE" in text
        # a HWSKU outside GCU's ASIC table: watchdog changes are refused there
        assert apply([{"op": "replace", "path": "/DEVICE_METADATA/localhost/hwsku", "value": "Unknown-SKU"}])[0] == 0
        rc, text = apply([{"op": "replace", "path": "/PFC_WD/Ethernet0/detection_time", "value": "400"}])
        assert rc == 2 and ("Modification of PFC_WD table is illegal- validating function "
                            "generic_config_updater.field_operation_validators.rdma_config_update_validator "
                            "returned False") in text
        # and what GCU takes on a th5 HWSKU, it takes
        assert apply([{"op": "replace", "path": "/DEVICE_METADATA/localhost/hwsku",
                       "value": "Arista-7060X6-64PE-O128S2"}])[0] == 0
        rc, text = apply([{"op": "replace", "path": "/PFC_WD/Ethernet0/detection_time", "value": "400"}])
        assert rc == 0 and "Patch applied successfully." in text
        after = ssh_run(client, "show runningconfiguration all")[1]
        assert before != after and json.loads(after)["PFC_WD"]["Ethernet0"]["detection_time"] == "400"
    finally:
        client.close()


def test_twin_saved_config_db_passes_yang(deployed_twin):
    """What the deployed twin saved (/etc/sonic/config_db.json, read through NAPALM) passes SONiC's models."""
    from tests.sonic_yang.validator import validate

    for host in SONIC:
        drv = deployed_twin.driver(host)
        try:
            saved = drv.get_config(retrieve="startup")["startup"]
        finally:
            drv.close()
        assert validate(json.loads(saved)).errors == [], host


@pytest.mark.long
def test_slow_switch_is_waited_for_and_a_late_one_is_reverted(deployed_twin, tmp_path):
    """The `appl_lag` fault delays APPL_DB behind CONFIG_DB: the drained apply waits for it within
    verify_timeout, and past it reloads the saved config instead of leaving the change half in effect."""
    import napalm

    from nr_run.intent import compile_site
    from nr_run.runbooks.render import render_device

    inv = _bigger_pool(tmp_path)
    candidate = render_device(compile_site(inv / "dc1").devices["rtsw4"])
    ep = deployed_twin.addresses["rtsw4"]
    before = _running(deployed_twin, "rtsw4")
    deployed_twin.fault("appl_lag", device="rtsw4", ms=1500)

    def driver(verify_timeout: float):
        drv = napalm.get_network_driver("sonic")("127.0.0.1", "admin", "YourPaSsWoRd", timeout=30, optional_args={
            "port": ep["port"], "ssh_strict": False, "verify_timeout": verify_timeout})
        drv.open()
        return drv

    drv = driver(0.3)
    try:
        drv.load_replace_candidate(config=candidate)
        with pytest.raises(CommitError, match="saved config reloaded: change not in APPL_DB"):
            drv.commit_config()
    finally:
        drv.close()
    assert _running(deployed_twin, "rtsw4") == before

    drv = driver(10)
    try:
        drv.load_replace_candidate(config=candidate)
        drv.commit_config()
        assert drv.last_method[0] == "drained apply"
    finally:
        drv.close()
    assert _running(deployed_twin, "rtsw4") != before
    assert _running(deployed_twin, "rtsw4")["BUFFER_POOL"] == json.loads(candidate)["BUFFER_POOL"]
