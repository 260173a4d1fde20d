"""The library below the CLI: a user's own Nornir script (InitNornir with the `nr_run` transform function, the
runbooks' site-loading step and tasks) gets what `nr-run` gets."""

from __future__ import annotations

import pytest
from nornir import InitNornir

from nr_run.runbooks.check import collect_state, run_checks
from nr_run.runbooks.inventory import CredentialsMissing, register_transform
from nr_run.runbooks.site import load_site
from tests.conftest import DC1
from tests.twin_site import FAST_CHECKS, TwinSite, run_json

CHECKS = ["interfaces", "pfc", "ecn", "bgp"]


def _user_nornir(**options: object):
    """What a user writes: SimpleInventory over the site's files, nr-run's transform function by name."""
    register_transform()          # an installed nr-run registers it through its entry point
    return InitNornir(
        runner={"plugin": "threaded", "options": {"num_workers": 8}},
        inventory={"plugin": "SimpleInventory",
                   "options": {"host_file": str(DC1 / "hosts.yaml"), "group_file": str(DC1 / "groups.yaml"),
                               "defaults_file": str(DC1 / "defaults.yaml")},
                   "transform_function": "nr_run", "transform_function_options": options},
        logging={"enabled": False})


def test_a_users_nornir_script_gets_what_the_cli_gets(deployed_twin: TwinSite, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    deployed_twin.fault("link_down", device="rtsw2", port="Ethernet1")        # something for both to find
    site = load_site(DC1)
    assert site.ok, site.errors
    nr = _user_nornir(lab=True, address_map=deployed_twin.addresses)
    try:
        rtsw1 = nr.inventory.hosts["rtsw1"]
        assert (rtsw1.hostname, rtsw1.port) == (deployed_twin.addresses["rtsw1"]["host"],
                                                deployed_twin.addresses["rtsw1"]["port"])
        assert (rtsw1.username, rtsw1.password) == ("admin", "admin")       # the lab image's default
        states = nr.run(task=collect_state, fabric=site.intent, sections_by_host={"rtsw2": {"interfaces"}})
        assert states["rtsw2"][0].result.interfaces["Ethernet1"].oper_up is False
        mine = run_checks(nr, site.intent, CHECKS, FAST_CHECKS).to_dict()
    finally:
        nr.close_connections()

    rc, cli = run_json(deployed_twin, capsys, "check", "--checks", ",".join(CHECKS))
    assert rc == 1 and cli["passed"] is False
    verdicts = {f["id"]: (f["passed"], f["observed"]) for f in cli["findings"]}
    assert {f["id"]: (f["passed"], f["observed"]) for f in mine["findings"]} == verdicts
    assert any(not passed and "rtsw2/Ethernet1/" in fid for fid, (passed, _) in verdicts.items())


def test_the_transform_refuses_a_host_without_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside the lab there is no default login: the user's InitNornir fails naming what to set."""
    for var in ("NR_USERNAME", "NR_PASSWORD", "NR_EOS_USERNAME", "NR_EOS_PASSWORD"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(CredentialsMissing, match="NR_USERNAME/NR_PASSWORD"):
        _user_nornir()
    nr = _user_nornir(env={"NR_USERNAME": "ops", "NR_PASSWORD": "secret"})
    assert {(h.username, h.password) for h in nr.inventory.hosts.values()} == {("ops", "secret")}
