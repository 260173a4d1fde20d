"""The analyze HTML report renders in headless Chromium: not blank, every figure kind drawn (a highlighted
topology cycle in red among them), self-contained."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from nr_run.analysis.options import AnalysisOptions
from nr_run.analysis.report import to_html
from nr_run.analysis.result import AnalysisFinding, AnalysisResult, Figure
from nr_run.cli.analyze import run_analyses
from nr_run.intent import compile_site
from tests.conftest import DC1
from tests.test_report_html import CHROMIUM, _pixels, screenshot


def every_kind() -> AnalysisResult:
    """An analysis result with one figure of each kind, as another analysis (routing, ECMP) would return it."""
    cycle = [["rtsw1", "ctsw1"], ["ctsw1", "rtsw3"], ["rtsw3", "ctsw2"], ["ctsw2", "rtsw1"]]
    nodes = [{"name": n, "tier": "ctsw"} for n in ("ctsw1", "ctsw2")] + [
        {"name": f"rtsw{i}", "tier": "rtsw"} for i in range(1, 5)]
    edges = [[c, f"rtsw{i}"] for c in ("ctsw1", "ctsw2") for i in range(1, 5)]
    return AnalysisResult(
        name="demo", title="Every figure kind",
        findings=[AnalysisFinding("demo", "cycle", "a cyclic buffer dependency", passed=False, fix="remove the route")],
        figures=[
            Figure("Cycle on the topology", "topology", {"nodes": nodes, "edges": edges, "highlight": cycle}),
            Figure("Per-uplink load", "histogram", {"values": [1, 2, 2, 3, 3, 3, 4, 4, 5], "bins": 5,
                                                     "xlabel": "flows per uplink"}),
            Figure("Capacity under failure", "line", {"labels": ["0", "1", "2"], "series": {"rtsw3": [100, 75, 50]},
                                                       "xlabel": "failures", "ylabel": "%"}),
            Figure("Grouped bars", "bar", {"labels": ["a", "b"], "series": {"x": [1, 2], "y": [2, 1]}}),
        ])


def report() -> str:
    results = run_analyses(compile_site(DC1), ["lossless", "buffers"], AnalysisOptions())
    return to_html("dc1", [*results, every_kind()], AnalysisOptions().model_dump(), "2026-12-01T13:00:00+00:00")


def test_report_is_self_contained_and_draws_every_kind():
    page = report()
    assert not re.search(r"(src|href)\s*=\s*[\"'](?!#)|@import|url\((?!#)|<script", page, re.I)
    kinds = re.findall(r'<div class="fig" data-kind="(\w+)"><svg', page)
    assert {"bar", "histogram", "line", "topology"} <= set(kinds)
    assert "FAIL &middot; dc1" in page                       # the demo analysis fails, so the page does
    assert page.count("<svg") == len(kinds)
    assert "#d93025" in page.split('data-kind="topology"')[-1]   # highlighted edges in red


@pytest.mark.long
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (.ci/run installs it)")
def test_report_renders_in_headless_chromium(tmp_path):
    page = tmp_path / "analyze.html"
    page.write_text(report(), encoding="utf-8")
    png = tmp_path / "analyze.png"
    screenshot(page, png, tmp_path / "profile", size="1200,2600")
    width, height, pixels = _pixels(png.read_bytes())
    assert (width, height) == (1200, 2600)
    colours = Counter(pixels)
    assert colours.most_common(1)[0][1] / len(pixels) < 0.9, "the page is (almost) one colour"
    assert len(colours) > 100
    red = sum(n for (r, g, b), n in colours.items() if r > 180 and g < 70 and b < 70)
    assert red > 1200 * 30                                   # the FAIL banner, and red on the plots
    top = pixels[: 1200 * 20]
    assert sum(1 for r, g, b in top if r > 180 and g < 70 and b < 70) > 0.9 * len(top)
    banner = pixels[: 1200 * 50]                             # the banner's text is readable: white on the red
    assert sum(1 for r, g, b in banner if min(r, g, b) > 235) > 1000
    # the plots are drawn: the stacked headroom bar's blue (matplotlib's first colour) covers an area
    blue = sum(n for (r, g, b), n in colours.items() if abs(r - 31) < 12 and abs(g - 119) < 12 and abs(b - 180) < 12)
    assert blue > 2000
