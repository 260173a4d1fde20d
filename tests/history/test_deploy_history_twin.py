"""The history matches the fabric after a deploy: its baseline and final whole-site checks are recorded, so
what the deploy fixed is resolved in `report` (dc1 twin at day 0, through the CLI). Long: the default run
asserts the same in tests/test_deploy_twin.py's one deploy of the whole site from day 0."""

from __future__ import annotations

import json

import pytest

from nr_run.cli.main import main
from tests.twin_site import TwinSite, run_json


def _report(twin: TwinSite, capsys) -> tuple[int, dict]:
    capsys.readouterr()
    rc = main(["report", "--site", "dc1", "--artifacts", str(twin.artifacts), "--json"])
    return rc, json.loads(capsys.readouterr().out)


@pytest.mark.long
def test_what_a_deploy_fixed_is_resolved_in_the_report(twin: TwinSite, capsys) -> None:
    rc, before = run_json(twin, capsys, "check", "--checks", "interfaces,bgp,pfc")
    assert rc == 1 and before["summary"]["failed"] > 20          # day 0: nothing configured
    rc, doc = _report(twin, capsys)
    opened = len(doc["findings"]["open"])
    assert rc == 0 and opened > 20
    rc, deployed = run_json(twin, capsys, "deploy", "--commit", "--yes", "--confirm-timeout", "60")
    assert rc == 0 and deployed["final_check"]["passed"], deployed["verdict"]
    rc, doc = _report(twin, capsys)
    assert rc == 0
    kinds = doc["runs"]["by_kind"]
    assert kinds.get("deploy-baseline") == 1 and kinds.get("deploy-final") == 1, kinds
    assert doc["findings"]["open"] == [], doc["findings"]["open"][:3]
    assert len(doc["findings"]["resolved"]) >= opened
