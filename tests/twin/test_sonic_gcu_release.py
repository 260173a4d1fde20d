"""The GCU rules of the release the switch runs: the twin's build follows its image tag (SONiC.20240515.1 for
`:202405`), its GCU refuses what that branch's refuses, and napalm_sonic predicts the same from `show version`.
On 202405 the 7060X6 O128S2 is in no ASIC family of GCU's table (202411 added `Arista-7060X6-64PE`)."""

from __future__ import annotations

import json

import pytest

from nr_run.lab.twin.lab import lab_down
from tests.conftest import DC1
from tests.twin_site import TwinSite, site_lab_up, ssh_run

REFUSED = ("Modification of WRED_PROFILE table is illegal- validating function "
           "generic_config_updater.field_operation_validators.rdma_config_update_validator returned False")
WRED = "/WRED_PROFILE/WRED_LOSSLESS_Q3/green_min_threshold"      # the factory QoS's ECN profile (qos.json.j2)


def _image(tag: str):
    def edit(doc: dict) -> None:
        for node in doc["topology"]["nodes"].values():
            if node.get("kind") == "sonic-vm":
                node["image"] = node["image"].rsplit(":", 1)[0] + ":" + tag
    return edit


@pytest.mark.long
@pytest.mark.parametrize(("tag", "build", "refused"), [("202405", "SONiC.20240515.1", True),
                                                       ("202511", "SONiC.20251115.1", False)])
def test_an_ecn_threshold_patch_follows_the_release(tmp_path, tag, build, refused):
    """202405's GCU validates WRED_PROFILE and lists no family for this HWSKU: refused; 202511 has no WRED
    validator: applied."""
    state = tmp_path / "lab"
    site_lab_up(DC1, state, _image(tag))
    try:
        lab = TwinSite(state, tmp_path / "art")
        client = lab.ssh("rtsw3", password="YourPaSsWoRd")
        try:
            assert f"SONiC Software Version: {build}\n" in ssh_run(client, "show version")[1]
            patch = [{"op": "replace", "path": WRED, "value": "150000"}]
            stdin, out, _ = client.exec_command("cat > /tmp/wd.json-patch")
            stdin.write(json.dumps(patch))
            stdin.channel.shutdown_write()
            out.channel.recv_exit_status()
            rc, text = ssh_run(client, "sudo config apply-patch /tmp/wd.json-patch")
        finally:
            client.close()
        assert (rc != 0 and REFUSED in text) if refused else (rc == 0 and "Patch applied successfully." in text), text
        drv = lab.driver("rtsw3")
        try:
            running = json.loads(drv.get_config(retrieve="running")["running"])
            wred = running["WRED_PROFILE"]
            target = {**running, "WRED_PROFILE": {**wred, "WRED_LOSSLESS_Q4": {**wred["WRED_LOSSLESS_Q4"],
                                                                             "green_min_threshold": "150000"}}}
            method, why = drv.apply_method(running, target)
        finally:
            drv.close()
        assert method == ("drained apply" if refused else "gcu"), why
        if refused:
            assert "(unknown)" in why
    finally:
        lab_down(state)
