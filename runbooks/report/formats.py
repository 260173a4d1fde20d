"""Render one compliance result (findings + drift) into several formats, deterministically.

Input is plain data: `findings` are dicts with check, device, target, expected, observed, severity,
hint, passed; `drift` maps device -> diff text (empty when the device is at intent).
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

Payload = dict[str, Any]


def _failed(payload: Payload) -> list[dict]:
    return [f for f in payload["findings"] if not f.get("passed")]


def to_json(payload: Payload) -> str:
    return json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n"


def to_junit(payload: Payload) -> str:
    """One testsuite per check, one testcase per (device, target); drift is its own suite."""
    suites: dict[str, list[dict]] = {}
    for f in payload["findings"]:
        suites.setdefault(f["check"], []).append(f)
    out = ['<?xml version="1.0" encoding="UTF-8"?>', f'<testsuites name={quoteattr("nr-run " + payload["site"])}>']
    for check in sorted(suites):
        cases = suites[check]
        failures = sum(1 for c in cases if not c.get("passed"))
        out.append(f"  <testsuite name={quoteattr(check)} tests=\"{len(cases)}\" failures=\"{failures}\">")
        for c in cases:
            name = quoteattr(f"{c['device']} {c.get('target', '')}".strip())
            if c.get("passed"):
                out.append(f"    <testcase classname={quoteattr(check)} name={name}/>")
            else:
                msg = quoteattr(f"expected {c.get('expected')}, observed {c.get('observed')}")
                out.append(f"    <testcase classname={quoteattr(check)} name={name}>")
                out.append(f"      <failure message={msg}>{escape(str(c.get('hint', '')))}</failure>")
                out.append("    </testcase>")
        out.append("  </testsuite>")
    drift = payload.get("drift", {})
    out.append(f"  <testsuite name=\"config-drift\" tests=\"{len(drift)}\" "
               f"failures=\"{sum(1 for d in drift.values() if d)}\">")
    for device in sorted(drift):
        if drift[device]:
            out.append(f"    <testcase classname=\"config-drift\" name={quoteattr(device)}>")
            out.append(f"      <failure message=\"running config differs from intent\">{escape(drift[device])}</failure>")
            out.append("    </testcase>")
        else:
            out.append(f"    <testcase classname=\"config-drift\" name={quoteattr(device)}/>")
    out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


def to_markdown(payload: Payload) -> str:
    failed = _failed(payload)
    drifted = sorted(d for d, diff in payload.get("drift", {}).items() if diff)
    lines = [f"# nr-run compliance: {payload['site']}", "",
             f"- findings failed: {len(failed)} of {len(payload['findings'])}",
             f"- devices with drift: {', '.join(drifted) or 'none'}", ""]
    if failed:
        lines += ["| severity | check | device | target | expected | observed | hint |", "|---|---|---|---|---|---|---|"]
        for f in failed:
            cells = [f.get("severity", ""), f["check"], f["device"], f.get("target", ""), f.get("expected", ""),
                     f.get("observed", ""), f.get("hint", "")]
            lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    for device in drifted:
        lines += ["", f"## drift on {device}", "", "```diff", payload["drift"][device].rstrip(), "```"]
    return "\n".join(lines) + "\n"


def to_html(payload: Payload) -> str:
    failed = _failed(payload)
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(f.get(k, '')))}</td>"
                         for k in ("severity", "check", "device", "target", "expected", "observed", "hint")) + "</tr>"
        for f in failed)
    drift = "".join(f"<h2>drift on {html.escape(d)}</h2><pre>{html.escape(diff)}</pre>"
                    for d, diff in sorted(payload.get("drift", {}).items()) if diff)
    return (f"<!doctype html><html><head><meta charset=\"utf-8\"><title>nr-run {html.escape(payload['site'])}</title>"
            "</head><body>"
            f"<h1>nr-run compliance: {html.escape(payload['site'])}</h1>"
            f"<p>{len(failed)} of {len(payload['findings'])} findings failed</p>"
            "<table border=\"1\"><tr><th>severity</th><th>check</th><th>device</th><th>target</th><th>expected</th>"
            f"<th>observed</th><th>hint</th></tr>{rows}</table>{drift}</body></html>\n")


def to_prom(payload: Payload) -> str:
    """Prometheus textfile-collector metrics (no timestamps, so reruns are comparable)."""
    site = payload["site"]
    per_check: dict[tuple[str, str], int] = {}
    for f in payload["findings"]:
        key = (f["check"], f["device"])
        per_check[key] = per_check.get(key, 0) + (0 if f.get("passed") else 1)
    lines = ["# HELP nr_run_check_failures Failed findings per check and device.",
             "# TYPE nr_run_check_failures gauge"]
    for (check, device), n in sorted(per_check.items()):
        lines.append(f'nr_run_check_failures{{site="{site}",check="{check}",device="{device}"}} {n}')
    lines += ["# HELP nr_run_config_drift 1 if the running config differs from intent.",
              "# TYPE nr_run_config_drift gauge"]
    for device, diff in sorted(payload.get("drift", {}).items()):
        lines.append(f'nr_run_config_drift{{site="{site}",device="{device}"}} {1 if diff else 0}')
    return "\n".join(lines) + "\n"


WRITERS: dict[str, tuple[str, Callable[[Payload], str]]] = {
    "json": ("compliance.json", to_json),
    "junit": ("compliance.junit.xml", to_junit),
    "md": ("compliance.md", to_markdown),
    "html": ("compliance.html", to_html),
    "prom": ("nr_run.prom", to_prom),
}


def write_reports(payload: Payload, formats: list[str], out: Path) -> list[Path]:
    """Write `payload` in each of `formats` (WRITERS keys) into the folder `out`; returns the files."""
    unknown = [f for f in formats if f not in WRITERS]
    if unknown:
        raise ValueError(f"unknown report format(s): {', '.join(unknown)}; known: {', '.join(WRITERS)}")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        filename, writer = WRITERS[fmt]
        path = out / filename
        path.write_text(writer(payload), encoding="utf-8")
        written.append(path)
    return written
