"""The inventory format is versioned: fabric.yaml declares `format:`; a key the current format removed or
renamed is a warning naming its replacement (for one version), an error after; `nr-run inventory migrate`
rewrites an older file to the current format and keeps its comments."""

from __future__ import annotations

import json

import pytest

from nr_run.cli.main import main
from nr_run.intent.formats import CURRENT
from nr_run.runbooks.site import load_site
from tests.conftest import SiteCopy

BFD_HINT = "whether a platform's config can carry per-neighbor BFD is its plug-in's call"


def _format_1(site: SiteCopy, **hardware: object) -> None:
    """dc1 as an older inventory: no `format:`, and `hardware` keys added to the SONiC RTSW entry."""
    text = (site.path / "fabric.yaml").read_text()
    text = "\n".join(ln for ln in text.splitlines() if not ln.startswith("format:")) + "\n"
    lines = text.splitlines()
    at = lines.index("  sonic-rtsw:") + 1
    lines[at:at] = [f"    {k}: {json.dumps(v)}          # kept by migrate" for k, v in hardware.items()]
    (site.path / "fabric.yaml").write_text("\n".join(lines) + "\n")


def _format_findings(site: SiteCopy) -> list[tuple[str, str, str]]:
    return [(f.severity, f.field, f.message) for f in load_site(site.path).findings if f.rule == "format"]


def test_a_key_removed_in_this_format_warns_with_its_replacement(site: SiteCopy) -> None:
    _format_1(site, bfd=False)
    [(severity, field, message)] = _format_findings(site)
    assert (severity, field) == ("warning", "hardware.sonic-rtsw.bfd") and BFD_HINT in message
    assert "nr-run inventory migrate" in message
    assert load_site(site.path).ok


def test_a_renamed_key_is_read_under_its_new_name(site: SiteCopy) -> None:
    site.edit("fabric.yaml", lambda d: d["hardware"]["sonic-rtsw"].pop("platform_id"))
    _format_1(site, sonic_platform="x86_64-vendor_box-r0")
    [(severity, field, message)] = _format_findings(site)
    assert (severity, field) == ("warning", "hardware.sonic-rtsw.sonic_platform") and "`platform_id`" in message
    loaded = load_site(site.path)
    assert loaded.intent is not None, loaded.errors
    assert loaded.intent.devices["rtsw3"].hardware.platform_id == "x86_64-vendor_box-r0"


def test_the_same_key_in_a_file_of_the_current_format_is_an_error(site: SiteCopy) -> None:
    site.edit("fabric.yaml", lambda d: d["hardware"]["sonic-rtsw"].__setitem__("bfd", False))
    [(severity, field, message)] = _format_findings(site)
    assert (severity, field) == ("error", "hardware.sonic-rtsw.bfd") and BFD_HINT in message
    assert main(["inventory", "validate", "--site", "dc1", "--inventory-dir", str(site.path.parent)]) == 3


@pytest.mark.parametrize("value, said", [(CURRENT + 1, "newer than this nr-run"), ("two", "whole number"),
                                         (0, "whole number"), (True, "whole number")])
def test_a_bad_format_is_refused(site: SiteCopy, value: object, said: str) -> None:
    site.edit("fabric.yaml", lambda d: d.__setitem__("format", value))
    findings = _format_findings(site)
    assert [(s, f) for s, f, _ in findings] == [("error", "format")] and said in findings[0][2]


def test_migrate_rewrites_an_older_inventory_and_keeps_its_comments(site: SiteCopy, capsys) -> None:
    _format_1(site, bfd=True)
    before = (site.path / "fabric.yaml").read_text()
    comments = [ln.split("#", 1)[1] for ln in before.splitlines() if "#" in ln and "bfd" not in ln]
    inv = ["--site", "dc1", "--inventory-dir", str(site.path.parent)]
    capsys.readouterr()
    assert main(["inventory", "migrate", *inv, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["valid"] is True and result["format"] == CURRENT
    assert result["changes"] == [f"hardware.sonic-rtsw.bfd removed (removed: {BFD_HINT} "
                                 "(ConfigBuilder.bgp_neighbor_bfd); `bgp.bfd` says whether the site wants BFD)",
                                 f"format: 1 -> {CURRENT}"]
    after = (site.path / "fabric.yaml").read_text()
    assert all(c in after for c in comments)                       # every other comment survives
    assert "bfd: true          # kept by migrate" not in after and f"format: {CURRENT}" in after
    assert _format_findings(site) == [] and load_site(site.path).ok
    assert main(["inventory", "migrate", *inv]) == 0                # current already: nothing rewritten
    assert (site.path / "fabric.yaml").read_text() == after
    assert "already at format" in capsys.readouterr().out
