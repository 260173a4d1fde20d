"""The HTML reports (compliance, analyze) carry no Python reprs, no None, no empty section and no blank line
inside a diff, and their charts keep legends off the bars: checked on the page text, on the DOM as headless
chromium renders it, on a screenshot (not blank), and on the chart layout as matplotlib draws it."""

from __future__ import annotations

import html
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from nr_run.intent import compile_site
from nr_run.runbooks.check import CheckReport
from nr_run.validators.base import evaluate_all, select
from tests.conftest import DC1
from tests.test_report_html import CHROMIUM, _pixels, screenshot
from tests.validators.healthy import healthy_states

pytestmark = pytest.mark.long

FABRIC = compile_site(DC1)
REPR = re.compile(r"\bNone\b|\[\s*'|\{\s*'|\(\s*'|\bTrue\b|\bFalse\b|<built-in|object at 0x")


def compliance_page() -> str:
    """A compliance page of dc1 with one downed link and one drifted device."""
    from nr_run.runbooks.report.formats import to_html

    states = healthy_states(FABRIC)
    states["rtsw1"].interfaces["Ethernet1"].oper_up = False
    states["ctsw1"].interfaces["Ethernet1"].oper_up = False
    states["rtsw1"].lldp = [n for n in states["rtsw1"].lldp if n.local_port != "Ethernet1"]
    checks = select(["interfaces", "cabling", "pfc", "ecn"])
    report = CheckReport("dc1", [c.name for c in checks], evaluate_all(checks, FABRIC, states), devices=10,
                         fabric=FABRIC)
    payload = {**report.to_dict(), "outcome": "failed", "time": "2026-12-01T02:13:07+00:00", "duration_s": 3.1,
               "drift": {"rtsw2": "@@ -1,3 +1,3 @@\n hostname rtsw2\n-  mtu 1500\n+  mtu 9214\n \n", "rtsw3": ""},
               "drift_errors": {}}
    return to_html(payload)


def analyze_page() -> str:
    from nr_run.analysis.options import AnalysisOptions
    from nr_run.analysis.report import to_html
    from nr_run.cli.analyze import _selection, run_analyses

    results = run_analyses(FABRIC, _selection(None), AnalysisOptions())
    return to_html("dc1", results, AnalysisOptions().model_dump(), "2026-12-01T02:13:07+00:00")


def visible_text(page: str) -> str:
    body = re.sub(r"<style>.*?</style>|<svg.*?</svg>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def defects(page: str) -> list[str]:
    found = [f"repr {m.group(0)!r}" for m in REPR.finditer(visible_text(page))]
    for table in re.findall(r"<table>.*?</table>", page, flags=re.S):
        if table.count("<tr") < 2:
            found.append("a table without rows")
    for pre in re.findall(r'<pre class="diff">(.*?)</pre>', page, flags=re.S):
        if "\n" in pre:
            found.append("a newline between the diff's line blocks (an empty line each)")
    # a heading with nothing under it: an h3 followed by a heading, an h2 followed by an h2 or the end
    for heading in re.findall(r"<h3[^>]*>([^<]*)</h3>\s*(?=<h[23]|</main>)|<h2[^>]*>([^<]*)</h2>\s*(?=<h2|</main>)",
                              page):
        found.append(f"an empty section: {''.join(heading)}")
    return found


@pytest.mark.parametrize("build", [compliance_page, analyze_page], ids=["compliance", "analyze"])
def test_the_pages_have_no_repr_none_or_empty_section(build) -> None:
    page = build()
    assert defects(page) == []
    if build is compliance_page:                                # analyze pages carry their run times
        assert page == build()


def test_the_compliance_page_groups_the_downed_link_as_one_cause() -> None:
    text = visible_text(compliance_page())
    assert "by probable cause (1)" in text
    assert "1. link ctsw1:Ethernet1 <-> rtsw1:Ethernet1" in text


def test_a_legend_never_sits_over_the_bars() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    from nr_run.analysis.report import _bar_or_line

    fig = MplFigure(figsize=(8, 3.6))
    canvas = FigureCanvasAgg(fig)
    ax = fig.subplots()
    _bar_or_line(ax, {"labels": [f"400G {n} m" for n in (3, 30, 45, 100, 300)],
                      "series": {"MTU_R": [9, 9, 9, 9, 9], "PAUSE": [1, 1, 1, 1, 1], "2 x cable": [3, 30, 45, 100, 300],
                                 "D_resp": [2, 2, 2, 2, 2]}, "stacked": True}, "bar")
    canvas.draw()
    renderer = canvas.get_renderer()
    legend, axes = ax.get_legend().get_window_extent(renderer), ax.get_window_extent(renderer)
    assert legend.x0 >= axes.x1, (legend, axes)
    # every tick label inside the saved picture (bbox_inches="tight" grows it to fit what is drawn)
    tight = fig.get_tightbbox(renderer)
    for label in ax.get_xticklabels():
        box = label.get_window_extent(renderer)
        assert tight.x0 <= box.x0 + 1 and box.x1 <= tight.x1 * fig.dpi + 1


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (.ci/run installs it)")
@pytest.mark.parametrize("build", [compliance_page, analyze_page], ids=["compliance", "analyze"])
def test_chromium_renders_them_without_defects(build, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(build(), encoding="utf-8")
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'p'}",
                          "--dump-dom", page.as_uri()], check=True, capture_output=True, text=True, timeout=120).stdout
    assert "<main>" in dom and defects(dom) == []
    png = tmp_path / "page.png"
    screenshot(page, png, tmp_path / "profile", size="1200,900")
    width, height, pixels = _pixels(png.read_bytes())
    colours = Counter(pixels)
    assert (width, height) == (1200, 900) and colours.most_common(1)[0][1] / len(pixels) < 0.9 and len(colours) > 50
