"""The HTML report renders in a real browser (Debian's headless chromium) into a page that is not blank:
banner in the outcome's colour, findings coloured by severity; and it is self-contained (no network)."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from collections import Counter
from pathlib import Path

import pytest

from nr_run.runbooks.report.formats import to_html

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

PAYLOAD = {
    "site": "dc1", "time": "2026-12-01T02:13:07+00:00", "duration_s": 4.2, "outcome": "failed",
    "checks": ["bgp", "counters", "pfc"],
    "findings": [
        {"check": "pfc", "device": "rtsw1", "target": "Ethernet1", "expected": "pfc priorities 3",
         "observed": "pfc priorities 4", "severity": "error", "hint": "set priority-flow-control priority 3 no-drop",
         "passed": False},
        {"check": "counters", "device": "rtsw2", "target": "Ethernet1 pfc rx", "expected": "pause <= 50/s",
         "observed": "5000.0/s", "severity": "warning", "hint": "sustained pause on Ethernet1", "passed": False},
        *({"check": "bgp", "device": f"rtsw{i}", "target": "10.254.0.1", "expected": "Established",
           "observed": "Established", "severity": "info", "hint": "", "passed": True} for i in range(1, 5)),
    ],
    "drift": {"rtsw1": "@@ -1,3 +1,3 @@\n interface Ethernet4\n-   mtu 9214\n+   mtu 1500\n", "rtsw2": ""},
}


def _pixels(png: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    """RGB pixels of an 8-bit RGB/RGBA PNG (what chromium writes), unfiltered per the PNG spec."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        data = png[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", data[:10])
            assert depth == 8 and ctype in (2, 6)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += data
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytearray] = []
    prev = bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, [(r[i], r[i + 1], r[i + 2]) for r in rows for i in range(0, stride, bpp)]


def screenshot(html_path: Path, png: Path, profile: Path, size: str = "1000,700") -> None:
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--user-data-dir={profile}", f"--window-size={size}", f"--screenshot={png}",
                    html_path.as_uri()], check=True, capture_output=True, timeout=120)


# long: a browser start costs more than the rest of this file; the default run checks the page itself below
@pytest.mark.long
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (.ci/run installs it)")
def test_html_report_renders_in_headless_chromium_and_is_not_blank(tmp_path):
    page = tmp_path / "compliance.html"
    page.write_text(to_html(PAYLOAD), encoding="utf-8")
    png = tmp_path / "report.png"
    screenshot(page, png, tmp_path / "profile")
    width, height, pixels = _pixels(png.read_bytes())
    assert (width, height) == (1000, 700)
    colours = Counter(pixels)
    background, share = colours.most_common(1)[0]
    assert share / len(pixels) < 0.9, "the page is (almost) one colour"
    assert len(colours) > 50                                  # text, tables, badges: anti-aliased shapes
    red = sum(n for (r, g, b), n in colours.items() if r > 180 and g < 60 and b < 60)
    assert red > 1000 * 40                                    # the FAIL banner across the top, in red
    top = pixels[: 1000 * 20]                                 # first 20 rows are banner
    assert sum(1 for r, g, b in top if r > 180 and g < 60 and b < 60) > 0.9 * len(top)


def test_html_report_is_self_contained_and_says_what_matters():
    page = to_html(PAYLOAD)
    assert not re.search(r"(src|href)\s*=|@import|url\(|<script", page, re.I)   # nothing fetched, nothing run
    assert "<style>" in page and "FAIL &middot; dc1" in page and "2026-12-01 02:13:07 UTC" in page
    assert 'class="sev sev-error"' in page and 'class="sev sev-warning"' in page
    assert '<span class="add">+   mtu 1500</span>' in page and '<span class="del">-   mtu 9214</span>' in page
    checks = re.findall(r"<tr><td>(\w+)</td><td><span class=\"(pass|fail)\">", page)
    assert checks == [("bgp", "pass"), ("counters", "fail"), ("pfc", "fail")]
    ok = to_html({**PAYLOAD, "outcome": "ok", "findings": PAYLOAD["findings"][2:], "drift": {}})
    assert "PASS &middot; dc1" in ok and 'class="banner ok"' in ok
