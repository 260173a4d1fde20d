"""`nr-run inventory validate` runs exactly the checks every other command runs before it touches a device
(runbooks.site.load_site): an inventory it refuses, every command refuses, with exit 3 and the same findings,
and no command gets further than validate says it may (no traceback from Nornir's inventory)."""

from __future__ import annotations

import json

import pytest

from nr_run.cli.main import main
from tests.conftest import SiteCopy


def _no_platform(site: SiteCopy) -> None:
    def strip(groups: dict) -> None:
        for entry in groups.values():
            if isinstance(entry, dict):
                entry.pop("platform", None)
    site.edit("groups.yaml", strip)
    site.edit("hosts.yaml", lambda hosts: [h.pop("platform", None) for h in hosts.values()])
    site.edit("defaults.yaml", lambda d: d.pop("platform", None))


def _empty_group(site: SiteCopy) -> None:
    groups = site.load("groups.yaml")
    name = next(iter(groups))
    text = (site.path / "groups.yaml").read_text()
    (site.path / "groups.yaml").write_text(text + f"\nempty_{name}:\n")


def _empty_host(site: SiteCopy) -> None:
    (site.path / "hosts.yaml").write_text((site.path / "hosts.yaml").read_text() + "\nrtsw99:\n")


def _unknown_platform(site: SiteCopy) -> None:
    site.edit("fabric.yaml", lambda d: d["hardware"]["eos-rtsw"].__setitem__("platform", "junos"))


def _bad_yaml(site: SiteCopy) -> None:
    (site.path / "fabric.yaml").write_text("fabric: [unclosed\n")


REFUSED = {"no platform on any group": _no_platform, "a group with no body": _empty_group,
           "a host with no body": _empty_host, "an unknown platform": _unknown_platform,
           "unreadable fabric.yaml": _bad_yaml}
COMMANDS = [["inventory", "validate"], ["render"], ["deploy"], ["check"], ["compliance"], ["analyze"],
            ["job-check", "--nodes", "gpu1"], ["lab", "topology"]]


@pytest.mark.parametrize("broken", sorted(REFUSED))
def test_what_validate_refuses_every_command_refuses(broken, site: SiteCopy, tmp_path, capsys, monkeypatch):
    REFUSED[broken](site)
    monkeypatch.setenv("NR_USERNAME", "u")
    monkeypatch.setenv("NR_PASSWORD", "p")
    monkeypatch.chdir(tmp_path)
    inv = ["--site", site.path.name, "--inventory-dir", str(site.path.parent), "--artifacts", str(tmp_path / "a")]
    capsys.readouterr()
    assert main(["inventory", "validate", *inv[:4], "--json"]) == 3
    refused = json.loads(capsys.readouterr().out)
    errors = [f for f in refused["findings"] if f["severity"] == "error"]
    assert errors and refused["valid"] is False
    assert all(f["file"].startswith(str(site.path)) for f in errors), errors
    for command in COMMANDS:
        extra = inv if command[0] not in ("inventory", "lab") else inv[:4]
        rc = main([*command, *extra])
        out, err = capsys.readouterr()
        assert rc == 3, (command, out[-1500:], err[-1500:])
        assert "Traceback" not in out + err
        # the same first error as validate, named by file and host
        first = errors[0]
        assert first["message"][:40] in out + err or first["rule"] in out + err, (command, out[-800:], err[-800:])
