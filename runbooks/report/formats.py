"""Render one compliance result (findings + drift) into several formats, deterministically.

Input is plain data: `findings` are dicts with check, device, target, expected, observed, severity,
hint, passed; `drift` maps device -> diff text (empty when the device is at intent). Optional keys:
`time` (UTC ISO 8601 of the run), `duration_s`, `outcome` ("ok" | "drift" | "failed"), `summary.by_check`,
`collection_errors`, `drift_errors`, `port_counters` (device -> port -> cumulative counters), `causes` (the failed
findings grouped by probable cause, validators.correlate; each failed finding's `cause` names its cause's id).
"""

from __future__ import annotations

import html
import json
import os
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

Payload = dict[str, Any]
SEVERITIES = ("error", "warning", "info")


def _failed(payload: Payload) -> list[dict]:
    """Failed findings the inventory does not declare (declared ones are known degradations: they fail nothing)."""
    return [f for f in payload["findings"] if not f.get("passed") and not f.get("declared")]


def _declared(payload: Payload) -> list[dict]:
    return [f for f in payload["findings"] if not f.get("passed") and f.get("declared")]


def _outcome(payload: Payload) -> str:
    if payload.get("outcome"):
        return str(payload["outcome"])
    if _failed(payload) or payload.get("drift_errors"):
        return "failed"
    return "drift" if any(payload.get("drift", {}).values()) else "ok"


def _by_check(payload: Payload) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for f in payload["findings"]:
        c = counts.setdefault(f["check"], {"passed": 0, "failed": 0, "declared": 0, **dict.fromkeys(SEVERITIES, 0)})
        if f.get("passed"):
            c["passed"] += 1
        elif f.get("declared"):
            c["declared"] += 1
        else:
            c["failed"] += 1
            c[f.get("severity", "error")] += 1
    for name in payload.get("checks", []):
        counts.setdefault(name, {"passed": 0, "failed": 0, "declared": 0, **dict.fromkeys(SEVERITIES, 0)})
    return dict(sorted(counts.items()))


def _causes(payload: Payload) -> list[tuple[dict, list[dict]]]:
    """(cause, its failed findings: root first) in the payload's order; a payload without causes (written by an
    older version) gets one cause per failed finding."""
    by_id = {f.get("id"): f for f in _failed(payload)}
    out = []
    for cause in payload.get("causes") or []:
        members = [by_id[i] for i in cause.get("findings", []) if i in by_id]
        if members:
            out.append((cause, members))
    placed = {id(f) for _, members in out for f in members}
    for f in _failed(payload):
        if id(f) not in placed:
            out.append(({"id": f.get("id", ""), "layer": "", "summary": f"{f['device']} {f['check']}: "
                         f"{f.get('target', '')}: {f.get('observed', '')}", "hint": f.get("hint", ""),
                         "devices": [f["device"]]}, [f]))
    return out


def to_json(payload: Payload) -> str:
    return json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n"


# ---------------------------------------------------------------- JUnit

def to_junit(payload: Payload) -> str:
    """JUnit XML as CI systems render it (Jenkins, GitLab, GitHub test reporters): one testsuite per check,
    one testcase per (device, target) with classname `check.device`, a <failure> with type = severity and
    the expected/observed/hint as text; collection errors as <error>; drift is its own suite."""
    suites: dict[str, list[dict]] = {}
    for f in payload["findings"]:
        suites.setdefault(f["check"], []).append(f)
    stamp = payload.get("time", "")
    causes = _causes(payload) if "causes" in payload else []     # a payload of an older version has none
    summary = {f.get("id"): c.get("summary", "") for c, members in causes for f in members}
    all_cases = len(payload["findings"]) + len(payload.get("drift", {})) + len(causes)
    all_failures = len(_failed(payload)) + sum(1 for d in payload.get("drift", {}).values() if d) + len(causes)
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuites name={quoteattr("nr-run " + payload["site"])} tests="{all_cases}" '
           f'failures="{all_failures}" errors="0" time="{float(payload.get("duration_s", 0)):.3f}">']
    for check in sorted(suites):
        cases = suites[check]
        failures = sum(1 for c in cases if not c.get("passed") and not c.get("declared"))
        skipped = sum(1 for c in cases if not c.get("passed") and c.get("declared"))
        out.append(f"  <testsuite name={quoteattr(check)} tests=\"{len(cases)}\" failures=\"{failures}\" "
                   f"errors=\"0\" skipped=\"{skipped}\" time=\"0\"" + (f" timestamp={quoteattr(stamp)}" if stamp else "")
                   + ">")
        for c in cases:
            name = quoteattr(f"{c['device']} {c.get('target', '')}".strip())
            classname = quoteattr(f"{check}.{c['device']}")
            if c.get("passed"):
                out.append(f"    <testcase classname={classname} name={name} time=\"0\"/>")
            elif c.get("declared"):
                msg = quoteattr(f"known degradation, declared in the inventory: {c.get('observed')}")
                out.append(f"    <testcase classname={classname} name={name} time=\"0\"><skipped message={msg}/>"
                           "</testcase>")
            else:
                msg = quoteattr(f"expected {c.get('expected')}, observed {c.get('observed')}")
                body = (f"device: {c['device']}\ntarget: {c.get('target', '')}\nexpected: {c.get('expected')}\n"
                        f"observed: {c.get('observed')}\nseverity: {c.get('severity', 'error')}\n"
                        f"hint: {c.get('hint', '')}"
                        + (f"\ncause: {summary[c.get('id')]}" if summary.get(c.get("id")) else ""))
                out.append(f"    <testcase classname={classname} name={name} time=\"0\">")
                out.append(f"      <failure message={msg} type={quoteattr(str(c.get('severity', 'error')))}>"
                           f"{escape(body)}</failure>")
                out.append("    </testcase>")
        out.append("  </testsuite>")
    # one failed case per probable cause, its consequences listed under it (a CI page shows the causes first)
    if "causes" in payload:
        out.append(f"  <testsuite name=\"causes\" tests=\"{len(causes)}\" failures=\"{len(causes)}\" errors=\"0\" "
                   "skipped=\"0\" time=\"0\">")
    for n, (cause, members) in enumerate(causes, 1):
        body = "\n".join([f"layer: {cause.get('layer', '')}", f"hint: {cause.get('hint', '')}", "consequences:"]
                         + [f"  {f['check']} {f['device']} {f.get('target', '')}: {f.get('observed', '')} "
                            f"(expected {f.get('expected', '')})" for f in members[1:]] if len(members) > 1 else
                         [f"layer: {cause.get('layer', '')}", f"hint: {cause.get('hint', '')}"])
        name = quoteattr(f"{n}. {cause.get('summary', '')}")
        out.append(f"    <testcase classname=\"causes\" name={name} time=\"0\">")
        out.append(f"      <failure message={quoteattr(str(cause.get('summary', '')))} type=\"cause\">"
                   f"{escape(body)}</failure>")
        out.append("    </testcase>")
    if "causes" in payload:
        out.append("  </testsuite>")
    drift = payload.get("drift", {})
    out.append(f"  <testsuite name=\"config-drift\" tests=\"{len(drift)}\" "
               f"failures=\"{sum(1 for d in drift.values() if d)}\" errors=\"0\" skipped=\"0\" time=\"0\">")
    for device in sorted(drift):
        if drift[device]:
            out.append(f"    <testcase classname=\"config-drift\" name={quoteattr(device)} time=\"0\">")
            out.append(f"      <failure message=\"running config differs from intent\" type=\"drift\">"
                       f"{escape(drift[device])}</failure>")
            out.append("    </testcase>")
        else:
            out.append(f"    <testcase classname=\"config-drift\" name={quoteattr(device)} time=\"0\"/>")
    out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- Markdown

def _md(value: Any) -> str:
    return str(value if value is not None else "").replace("|", "\\|").replace("\n", " ")


def to_markdown(payload: Payload) -> str:
    failed = _failed(payload)
    drifted = sorted(d for d, diff in payload.get("drift", {}).items() if diff)
    lines = [f"# nr-run compliance: {payload['site']}: {_outcome(payload).upper()}", ""]
    if payload.get("time"):
        lines.append(f"- run: {payload['time']}")
    lines += [f"- findings failed: {len(failed)} of {len(payload['findings'])}",
              f"- devices with drift: {', '.join(drifted) or 'none'}", ""]
    if failed:
        lines += ["| severity | check | device | target | expected | observed | hint |", "|---|---|---|---|---|---|---|"]
        for n, (cause, members) in enumerate(_causes(payload), 1):
            if "causes" in payload:      # the cause's row, its findings under it
                lines.append(f"| **{n}** | **cause** | | **{_md(cause.get('summary', ''))}** | | "
                             f"{_md(cause.get('layer', ''))} | {_md(cause.get('hint', ''))} |")
            for f in members:
                cells = [f.get("severity", ""), f["check"], f["device"], f.get("target", ""), f.get("expected", ""),
                         f.get("observed", ""), f.get("hint", "")]
                lines.append("| " + " | ".join(_md(c) for c in cells) + " |")
    for device in drifted:
        lines += ["", f"## drift on {device}", "", "```diff", payload["drift"][device].rstrip(), "```"]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- HTML

_CSS = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#1d2330;
background:#f4f6f9}
main{max-width:1200px;margin:0 auto;padding:0 24px 48px}
.banner{padding:22px 24px;color:#fff;display:flex;justify-content:space-between;align-items:baseline;flex-wrap:wrap}
.banner h1{margin:0;font-size:26px;letter-spacing:.02em}
.banner .meta{font-size:14px;opacity:.92}
.ok{background:#1e8e3e}.drift{background:#b26a00}.failed{background:#c5221f}
.cards{display:flex;gap:12px;margin:18px 0;flex-wrap:wrap}
.card{background:#fff;border-radius:8px;padding:12px 16px;min-width:150px;box-shadow:0 1px 2px rgba(0,0,0,.12)}
.card b{display:block;font-size:24px}
h2{font-size:18px;margin:28px 0 10px}
table{border-collapse:collapse;width:100%;background:#fff;box-shadow:0 1px 2px rgba(0,0,0,.12)}
th,td{text-align:left;padding:6px 10px;border-bottom:1px solid #e3e7ee;vertical-align:top}
th{background:#e9edf3;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.sev{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;font-size:12px;font-weight:600}
.sev-error{background:#c5221f}.sev-warning{background:#e37400}.sev-info{background:#5f6b7a}
tr.row-error td:first-child{border-left:4px solid #c5221f}
tr.row-warning td:first-child{border-left:4px solid #e37400}
.pass{color:#1e8e3e;font-weight:600}.fail{color:#c5221f;font-weight:600}.known{color:#b26a00;font-weight:600}
pre.diff{background:#fff;padding:10px 12px;overflow-x:auto;white-space:pre-wrap;word-break:break-all;
box-shadow:0 1px 2px rgba(0,0,0,.12);font:12px/1.4 "DejaVu Sans Mono",Menlo,Consolas,monospace}
pre.diff .add{color:#137333;background:#e6f4ea;display:block}
pre.diff .del{color:#a50e0e;background:#fce8e6;display:block}
pre.diff .hunk{color:#1a73e8;display:block}
pre.diff .ctx{display:block}
.muted{color:#5f6b7a}
tr.cause td{background:#fbecea;border-top:2px solid #e3c4c0}
tr.consequence td{font-size:13px;color:#3c4450}
tr.consequence td:nth-child(2){padding-left:26px}
"""


def _e(value: Any) -> str:
    return html.escape(str(value if value is not None else ""))


def _diff_html(diff: str) -> str:
    """Every line a block of its own: a newline between blocks inside <pre> would show as an empty line."""
    out = []
    for line in diff.splitlines():
        cls = "add" if line.startswith("+") else "del" if line.startswith("-") else "hunk" if line.startswith("@@") else "ctx"
        out.append(f'<span class="{cls}">{_e(line) or " "}</span>')
    return "".join(out)


def _when(payload: Payload) -> str:
    stamp = payload.get("time")
    if not stamp:
        return "time not recorded"
    try:
        return datetime.fromisoformat(str(stamp)).strftime("%Y-%m-%d %H:%M:%S UTC")
    except ValueError:
        return str(stamp)


def to_html(payload: Payload) -> str:
    """One self-contained page (inline CSS, no script, no external resource): a pass/fail banner with site
    and time, summary cards, a per-check table, the failed findings coloured by severity, the drift diffs."""
    failed = sorted(_failed(payload), key=lambda f: (SEVERITIES.index(f.get("severity", "error")), f["check"],
                                                      f["device"], f.get("target", "")))
    outcome = _outcome(payload)
    drift = {d: diff for d, diff in sorted(payload.get("drift", {}).items()) if diff}
    site = _e(payload["site"])
    verdict = {"ok": "PASS", "drift": "DRIFT", "failed": "FAIL"}.get(outcome, outcome.upper())
    by_check = _by_check(payload)
    sev_counts = {s: sum(1 for f in failed if f.get("severity", "error") == s) for s in SEVERITIES}
    cause_count = len(_causes(payload))
    parts = [
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">",
        f"<title>nr-run compliance {site}: {verdict}</title><style>{_CSS}</style></head><body>",
        f"<header class=\"banner {outcome}\"><h1>{verdict} &middot; {site}</h1>",
        f"<div class=\"meta\">nr-run compliance &middot; {_e(_when(payload))}"
        + (f" &middot; {float(payload['duration_s']):.1f} s" if payload.get("duration_s") is not None else "")
        + "</div></header><main>",
        "<section class=\"cards\">",
        f"<div class=\"card\"><span class=\"muted\">findings</span><b>{len(payload['findings'])}</b></div>",
        f"<div class=\"card\"><span class=\"muted\">failed</span><b class=\"{'fail' if failed else 'pass'}\">"
        f"{len(failed)}</b></div>",
        f"<div class=\"card\"><span class=\"muted\">probable causes</span><b>{cause_count}</b></div>",
        f"<div class=\"card\"><span class=\"muted\">errors / warnings</span><b>{sev_counts['error']} / "
        f"{sev_counts['warning']}</b></div>",
        f"<div class=\"card\"><span class=\"muted\">devices with drift</span><b>{len(drift)}</b></div>",
        "</section>",
        "<h2>Checks</h2><table><tr><th>check</th><th>result</th><th>passed</th><th>failed</th><th>errors</th>"
        "<th>warnings</th></tr>",
    ]
    for name, c in by_check.items():
        result = ('<span class="fail">FAIL</span>' if c["failed"] else
                  '<span class="known">KNOWN</span>' if c["declared"] else '<span class="pass">PASS</span>')
        parts.append(f"<tr><td>{_e(name)}</td><td>{result}</td><td class=\"num\">{c['passed']}</td>"
                     f"<td class=\"num\">{c['failed']}</td><td class=\"num\">{c['error']}</td>"
                     f"<td class=\"num\">{c['warning']}</td></tr>")
    parts.append("</table>")
    causes = _causes(payload)
    parts.append(f"<h2>Failed findings ({len(failed)}) by probable cause ({len(causes)})</h2>")
    if failed:
        parts.append("<table><tr><th>severity</th><th>check</th><th>device</th><th>target</th><th>expected</th>"
                     "<th>observed</th><th>hint</th></tr>")
        for n, (cause, members) in enumerate(causes, 1):
            sev = _e(members[0].get("severity", "error"))
            layer = f"<span class=\"muted\">{_e(cause.get('layer'))}</span> " if cause.get("layer") else ""
            parts.append(f"<tr class=\"cause row-{sev}\"><td><span class=\"sev sev-{sev}\">{sev}</span></td>"
                         f"<td colspan=\"5\">{layer}<b>{n}. {_e(cause.get('summary'))}</b>"
                         + (f" <span class=\"muted\">({len(members) - 1} consequence(s))</span>" if len(members) > 1
                            else "")
                         + f"</td><td>{_e(cause.get('hint'))}</td></tr>")
            for f in members:
                parts.append("<tr class=\"consequence\"><td></td>"
                             + "".join(f"<td>{_e(f.get(k, ''))}</td>"
                                       for k in ("check", "device", "target", "expected", "observed", "hint"))
                             + "</tr>")
        parts.append("</table>")
    else:
        parts.append("<p class=\"pass\">none</p>")
    known = _declared(payload)
    if known:
        parts.append(f"<h2>Known degradations, declared in the inventory ({len(known)})</h2>"
                     "<table><tr><th>check</th><th>device</th><th>target</th><th>observed</th><th>hint</th></tr>")
        parts += ["<tr>" + "".join(f"<td>{_e(f.get(k, ''))}</td>" for k in ("check", "device", "target", "observed",
                                                                           "hint")) + "</tr>" for f in known]
        parts.append("</table>")
    errors = {**{d: "; ".join(f"{k}: {v}" for k, v in sorted(e.items()))
                 for d, e in payload.get("collection_errors", {}).items()}, **payload.get("drift_errors", {})}
    if errors:
        parts.append("<h2>Devices that could not be read</h2><table><tr><th>device</th><th>error</th></tr>")
        parts += [f"<tr><td>{_e(d)}</td><td>{_e(err)}</td></tr>" for d, err in sorted(errors.items())]
        parts.append("</table>")
    parts.append(f"<h2>Configuration drift ({len(drift)})</h2>")
    if not drift:
        parts.append("<p class=\"pass\">every device runs its intended config</p>")
    for device, diff in drift.items():
        parts.append(f"<h3>{_e(device)}</h3><pre class=\"diff\">{_diff_html(diff)}</pre>")
    parts.append("</main></body></html>\n")
    return "".join(parts)


# ---------------------------------------------------------------- Prometheus

def _label(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(**labels: Any) -> str:
    return "{" + ",".join(f'{k}="{_label(v)}"' for k, v in labels.items()) + "}"


def to_prom(payload: Payload) -> str:
    """Metrics for node_exporter's textfile collector: HELP/TYPE per family, base units in the names, no
    sample timestamps (the collector refuses them); the run's time is a metric of its own."""
    site = payload["site"]
    lines: list[str] = []

    def family(name: str, kind: str, help_text: str, samples: list[tuple[dict[str, Any], Any]]) -> None:
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} {kind}")
        for labels, value in samples:
            lines.append(f"{name}{_labels(**labels)} {value}")

    if payload.get("time"):
        stamp = datetime.fromisoformat(str(payload["time"])).timestamp()
        family("nr_run_compliance_last_run_timestamp_seconds", "gauge",
               "Unix time the compliance run finished.", [({"site": site}, f"{stamp:.3f}")])
    if payload.get("duration_s") is not None:
        family("nr_run_compliance_duration_seconds", "gauge", "How long the compliance run took.",
               [({"site": site}, f"{float(payload['duration_s']):.3f}")])
    outcome = _outcome(payload)
    family("nr_run_compliance_success", "gauge", "1 if the run found no failed check and no drift, else 0.",
           [({"site": site}, 1 if outcome == "ok" else 0)])
    family("nr_run_compliance_outcome", "gauge", "1 for the run's outcome (ok, drift, failed).",
           [({"site": site, "outcome": o}, 1 if o == outcome else 0) for o in ("ok", "drift", "failed")])
    by_check = _by_check(payload)
    family("nr_run_check_findings", "gauge", "Failed findings per check and severity.",
           [({"site": site, "check": c, "severity": s}, counts[s]) for c, counts in by_check.items()
            for s in SEVERITIES])
    family("nr_run_check_passed", "gauge", "Passed findings per check.",
           [({"site": site, "check": c}, counts["passed"]) for c, counts in by_check.items()])
    per_device: dict[tuple[str, str], int] = {}
    for f in payload["findings"]:
        where = (f["check"], f["device"])
        per_device[where] = per_device.get(where, 0) + (0 if f.get("passed") or f.get("declared") else 1)
    family("nr_run_check_failures", "gauge", "Failed findings per check and device.",
           [({"site": site, "check": c, "device": d}, n) for (c, d), n in sorted(per_device.items())])
    family("nr_run_config_drift", "gauge", "1 if the running config differs from intent.",
           [({"site": site, "device": d}, 1 if diff else 0) for d, diff in sorted(payload.get("drift", {}).items())])
    counters = payload.get("port_counters") or {}
    for key, name, help_text in (
            ("pfc_rx_frames", "nr_run_port_pfc_rx_pause_frames_total", "PFC pause frames received (device counter)."),
            ("pfc_tx_frames", "nr_run_port_pfc_tx_pause_frames_total", "PFC pause frames sent (device counter)."),
            ("ecn_marked_packets", "nr_run_port_ecn_marked_packets_total", "ECN-marked packets (device counter)."),
            ("queue_drops", "nr_run_port_queue_drops_total", "Egress queue drops (device counter).")):
        samples = [({"site": site, "device": d, "port": p}, c[key]) for d, ports in sorted(counters.items())
                   for p, c in sorted(ports.items()) if key in c]
        if samples:
            family(name, "counter", help_text, samples)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- CSV

CSV_COLUMNS = ("id", "check", "device", "target", "port", "peer_device", "peer_port", "severity", "passed", "declared",
               "cause", "expected", "observed", "hint")


def to_csv(payload: Payload) -> str:
    """One row per finding (failed first, as in the JSON), the columns of CSV_COLUMNS; spreadsheets and
    `csvkit` read it. A cell that a spreadsheet would run as a formula (=, +, -, @ first) is prefixed with '."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for f in payload["findings"]:
        row = []
        for col in CSV_COLUMNS:
            value = f.get(col)
            text = "" if value is None else ("true" if value is True else "false" if value is False else str(value))
            row.append("'" + text if text[:1] in ("=", "+", "-", "@") else text)
        writer.writerow(row)
    return buf.getvalue()


WRITERS: dict[str, tuple[str, Callable[[Payload], str]]] = {
    "csv": ("findings.csv", to_csv),
    "json": ("compliance.json", to_json),
    "junit": ("compliance.junit.xml", to_junit),
    "md": ("compliance.md", to_markdown),
    "html": ("compliance.html", to_html),
    "prom": ("nr_run.prom", to_prom),
}


def _atomic_write(path: Path, text: str, private: bool) -> None:
    """Write next to the target and rename: a reader (node_exporter, a web server) never sees half a file.
    Private files are 0600; others get the usual mode under the umask (node_exporter runs as another user)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if not private:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_reports(payload: Payload, formats: list[str], out: Path, private: bool = True) -> list[Path]:
    """Write `payload` in each of `formats` (WRITERS keys) into the folder `out`; returns the files.
    `private`: files 0600 (a run's artifacts); else readable as the umask allows (a shared --out folder)."""
    unknown = [f for f in formats if f not in WRITERS]
    if unknown:
        raise ValueError(f"unknown report format(s): {', '.join(unknown)}; known: {', '.join(WRITERS)}")
    if not out.exists():
        out.mkdir(parents=True)
        if private:
            out.chmod(0o700)
    written = []
    for fmt in formats:
        filename, writer = WRITERS[fmt]
        path = out / filename
        _atomic_write(path, writer(payload), private)
        written.append(path)
    return written
