"""The `nr-run analyze` HTML report: one self-contained page (inline CSS, plots as inline SVG).

Every Figure kind of nr_run.analysis.result is drawn generically with matplotlib, so a new analysis gets its
plots without touching this module: bar (grouped, or stacked with data["stacked"]), histogram, line, and
topology (nodes in rows by tier, edges in grey, data["highlight"] edges, e.g. a deadlock cycle, in red).
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Sequence
from typing import Any

from nr_run.analysis.result import AnalysisResult, Figure

MAX_ROWS = 200          # rows of one table shown in the page; the JSON output has them all
MAX_LABELLED_NODES = 60
TIER_ORDER = {"ctsw": 0, "spine": 0, "rtsw": 1, "leaf": 1, "gpu": 2, "host": 2}

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d2733;background:#f6f7f9}
.banner{padding:14px 24px;color:#fff;font-size:22px;font-weight:600}
.banner.ok{background:#1e8e3e;color:#fff}.banner.fail{background:#d93025;color:#fff}
main{padding:8px 24px 40px}
h2{margin:28px 0 6px;font-size:19px}h3{font-size:15px;margin:16px 0 6px}
.meta{color:#5f6b7a;font-size:13px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:12.5px;background:#fff}
th,td{border:1px solid #d9dee5;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#eef1f5}
.pass{color:#1e8e3e;font-weight:600}.fail{color:#d93025;font-weight:600}.warn{color:#b06000;font-weight:600}
.info{color:#5f6b7a}
.fig{background:#fff;border:1px solid #d9dee5;display:inline-block;margin:6px 12px 6px 0;padding:4px}
.fig svg{max-width:100%;height:auto}
.note{color:#5f6b7a;font-size:12px}
"""


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _cell(value: Any) -> str:
    """A value as an operator reads it: no Python repr (None, [..], {..}, True) ever reaches the page."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, dict):
        return "; ".join(f"{_cell(k)}: {_cell(v)}" for k, v in value.items()) or "-"
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(_cell(v) for v in value) or "-"
    return str(value)


def _svg(fig: Any) -> str:
    """A matplotlib figure as an inline <svg> element (text kept as text, no XML prologue or external refs)."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    start = text.index("<svg")
    # matplotlib names the SVG namespaces; the page needs neither a DOCTYPE nor a metadata block
    return re.sub(r"<metadata>.*?</metadata>", "", text[start:], flags=re.S)


def _bar_or_line(ax: Any, data: dict[str, Any], kind: str) -> None:
    labels: Sequence[str] = [str(x) for x in data.get("labels", [])]
    series: dict[str, list[float]] = data.get("series", {})
    x = list(range(len(labels)))
    if kind == "line":
        for name, values in series.items():
            ax.plot(x, values, marker="o", label=name)
    elif data.get("stacked"):
        bottom = [0.0] * len(labels)
        for name, values in series.items():
            ax.bar(x, values, bottom=bottom, label=name)
            bottom = [b + v for b, v in zip(bottom, values, strict=False)]
    else:
        width = 0.8 / max(len(series), 1)
        for k, (name, values) in enumerate(series.items()):
            ax.bar([i + k * width - 0.4 + width / 2 for i in x], values, width=width, label=name)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=30 if len(labels) > 6 or max(map(len, labels), default=0) > 10 else 0,
                       ha="right" if len(labels) > 6 else "center", fontsize=8)
    if len(series) > 1:
        # beside the axes, never over a bar; savefig's tight bounding box keeps it in the picture
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)


def _topology(ax: Any, data: dict[str, Any]) -> None:
    nodes = data.get("nodes", [])
    tiers: dict[Any, list[str]] = {}
    for node in nodes:
        tiers.setdefault(node.get("tier", ""), []).append(str(node["name"]))
    order = sorted(tiers, key=lambda t: (TIER_ORDER.get(str(t), 9) if not isinstance(t, int) else t, str(t)))
    pos: dict[str, tuple[float, float]] = {}
    for row, tier in enumerate(order):
        names = sorted(tiers[tier])
        for i, name in enumerate(names):
            pos[name] = ((i + 1) / (len(names) + 1), -row)
    highlight = {tuple(sorted(map(str, e))) for e in data.get("highlight", [])}
    for a, b in data.get("edges", []):
        if str(a) in pos and str(b) in pos and tuple(sorted((str(a), str(b)))) not in highlight:
            (xa, ya), (xb, yb) = pos[str(a)], pos[str(b)]
            ax.plot([xa, xb], [ya, yb], color="#b8c0cc", linewidth=0.8, zorder=1)
    for a, b in data.get("highlight", []):
        if str(a) in pos and str(b) in pos:
            (xa, ya), (xb, yb) = pos[str(a)], pos[str(b)]
            ax.plot([xa, xb], [ya, yb], color="#d93025", linewidth=2.6, zorder=2)
    hot = {str(n) for e in data.get("highlight", []) for n in e}
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    colours = ["#d93025" if n in hot else "#1a73e8" for n in pos]
    ax.scatter(xs, ys, s=60 if len(pos) <= MAX_LABELLED_NODES else 8, c=colours, zorder=3)
    if len(pos) <= MAX_LABELLED_NODES:
        for name, (x, y) in pos.items():
            ax.annotate(name, (x, y), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=7)
    ax.set_yticks([-r for r in range(len(order))])
    ax.set_yticklabels([str(t) for t in order])
    ax.set_xticks([])
    ax.set_ylim(-len(order) + 0.5, 0.5)


def figure_svg(figure: Figure) -> str:
    """One Figure drawn as inline SVG (matplotlib's object API: no pyplot state, no backend switch and no global
    settings changed in a process that imports this module)."""
    import matplotlib
    from matplotlib.figure import Figure as MplFigure

    # text as <text>, not glyph paths (small and searchable); element ids (clip paths) are hashes salted with a
    # random uuid unless a salt is set, and the same analysis must give the same page
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "nr-run"}):
        return _draw(figure, MplFigure(figsize=(8, 3.6 if figure.kind != "topology" else 4.2)))


def _draw(figure: Figure, fig: Any) -> str:
    data = figure.data
    ax = fig.subplots()
    if figure.kind in ("bar", "line"):
        _bar_or_line(ax, data, figure.kind)
    elif figure.kind == "histogram":
        ax.hist(data.get("values", []), bins=int(data.get("bins", 20)), color="#1a73e8", edgecolor="white")
    elif figure.kind == "topology":
        _topology(ax, data)
    ax.set_title(figure.title, fontsize=10)
    if data.get("xlabel"):
        ax.set_xlabel(str(data["xlabel"]), fontsize=9)
    if data.get("ylabel"):
        ax.set_ylabel(str(data["ylabel"]), fontsize=9)
    return _svg(fig)


def _table(title: str, columns: list[str], rows: list[list[Any]]) -> str:
    """A table; a table without rows is no section at all (the verdict above says there is nothing)."""
    if not rows:
        return ""
    head = "".join(f"<th>{_esc(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_esc(_cell(c))}</td>" for c in row) + "</tr>" for row in rows[:MAX_ROWS])
    more = (f'<p class="note">{len(rows) - MAX_ROWS} more row(s) in the JSON output</p>'
            if len(rows) > MAX_ROWS else "")
    return f"<h3>{_esc(title)}</h3><table><tr>{head}</tr>{body}</table>{more}"


def _verdict(ok: bool) -> str:
    return '<span class="pass">holds</span>' if ok else '<span class="fail">FAILS</span>'


def _section(result: AnalysisResult) -> str:
    parts = [f'<h2 id="{_esc(result.name)}">{_esc(result.title)} {_verdict(result.ok)}</h2>',
             f'<p class="meta">{_esc(result.name)} &middot; {result.seconds:.2f} s &middot; '
             + " &middot; ".join(f"{_esc(k.replace('_', ' '))}: {_esc(_cell(v))}" for k, v in result.summary.items())
             + "</p>"]
    failed = [f for f in result.findings if not f.passed]
    shown = failed + [f for f in result.findings if f.passed][: max(0, 40 - len(failed))]
    rows = []
    for f in shown:
        cls = "pass" if f.passed else {"error": "fail", "warning": "warn"}.get(f.severity, "info")
        label = "ok" if f.passed else f.severity
        rows.append(f'<tr><td><span class="{cls}">{_esc(label)}</span></td><td>{_esc(_cell(f.subject))}</td>'
                    f"<td>{_esc(_cell(f.message))}</td><td>{_esc(_cell(f.fix) if f.fix else '')}</td></tr>")
    if rows:
        parts.append("<h3>Findings</h3><table><tr><th>verdict</th><th>subject</th><th>message</th><th>fix</th></tr>"
                     + "".join(rows) + "</table>")
        if len(result.findings) > len(shown):
            parts.append(f'<p class="note">{len(result.findings) - len(shown)} more passing finding(s) in the JSON '
                         "output</p>")
    for figure in result.figures:
        parts.append(f'<div class="fig" data-kind="{_esc(figure.kind)}">{figure_svg(figure)}</div>')
    for table in result.tables:
        if table.rows:
            parts.append(_table(table.title, table.columns, table.rows))
    return "\n".join(parts)


def to_html(site: str, results: list[AnalysisResult], options: dict[str, Any], generated: str) -> str:
    ok = all(r.ok for r in results)
    total = sum(r.seconds for r in results)
    summary = _table("Analyses", ["analysis", "verdict", "failed findings", "seconds"],
                     [[r.name, "holds" if r.ok else "FAILS", sum(not f.passed and f.severity == "error"
                                                                 for f in r.findings), f"{r.seconds:.2f}"]
                      for r in results])
    opts = " &middot; ".join(f"{_esc(k)} {_esc(_cell(v))}" for k, v in options.items())
    body = "\n".join(_section(r) for r in results)
    return (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>nr-run analyze {_esc(site)}</title>"
            f"<style>{CSS}</style></head><body>"
            f'<div class="banner {"ok" if ok else "fail"}">{"PASS" if ok else "FAIL"} &middot; {_esc(site)} '
            f"&middot; fabric analysis</div><main>"
            f'<p class="meta">{_esc(generated)} &middot; {total:.2f} s &middot; {opts}</p>'
            f"{summary}{body}</main></body></html>\n")
