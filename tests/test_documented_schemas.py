"""The JSON keys docs/analyze.md, docs/history.md and docs/json-output.md document are the keys the code emits
(analyze's document, result and per-analysis summaries; the report; a watch line; job-check's verdict)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nr_run.cli.main import main
from tests.conftest import DC1, REPO

DOCS = REPO / "docs"


def _section(text: str, heading: str) -> str:
    """The text from a heading line starting with `heading` to the next heading of any level."""
    start = text.index("\n" + heading)
    end = re.compile(r"\n#{1,3} ").search(text, start + 1)
    return text[start:end.start() if end else len(text)]


def _block(text: str) -> str:
    return text.split("```", 2)[1]


def _top_keys(block: str) -> set[str]:
    """Keys at the outermost level of a documented JSON sketch (nested {...} and [...] skipped)."""
    keys, depth = set(), 0
    for m in re.finditer(r'[{}\[\]]|"([a-z_]+)":', block):
        if m.group(0) in "{[":
            depth += 1
        elif m.group(0) in "}]":
            depth -= 1
        elif depth == 1:
            keys.add(m.group(1))
    return keys


@pytest.fixture(scope="module")
def analyze_doc(tmp_path_factory: pytest.TempPathFactory) -> dict:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["analyze", "--site", "dc1", "--inventory-dir", str(DC1.parent), "--json"]) == 0
    return json.loads(out.getvalue())


def test_analyze_document_keys(analyze_doc: dict) -> None:
    text = (DOCS / "analyze.md").read_text()
    block = _block(_section(text, "## JSON document"))
    assert set(analyze_doc) == _top_keys(block) | {"written"}
    options = re.search(r'"options": \{.*?\}', block).group(0)
    assert set(analyze_doc["options"]) == set(re.findall(r'"([a-z_]+)":', options)) - {"options"}
    table = _section(text, "## JSON document").split("An `AnalysisResult`")[1]
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", table, re.M))
    assert all(set(a) == documented for a in analyze_doc["analyses"])


def test_each_analysis_summary_is_documented(analyze_doc: dict) -> None:
    text = (DOCS / "analyze.md").read_text()
    for analysis in analyze_doc["analyses"]:
        section = _section(text, f"## `{analysis['name']}`")
        listed = section.split("Summary:", 1)[1].split(".")[0]
        assert set(re.findall(r"`([a-z_]+)`", listed)) == set(analysis["summary"]), analysis["name"]


def test_report_keys(tmp_path: Path) -> None:
    from nr_run.history.report import site_report
    from nr_run.runbooks.history import open_store

    with open_store(tmp_path, "dc1") as store:
        doc = site_report(store, 0.0, 1.0, [])
    block = _block(_section((DOCS / "history.md").read_text(), "## report").split("JSON (`--json`", 1)[1])
    assert set(doc) == _top_keys(block) - {"job"}          # "job" only with --job
    runs = re.search(r'"runs": .*', block).group(0)           # one line, nested objects as examples
    assert set(doc["runs"]) == set(re.findall(r'"([a-z_]+)":', runs)) - {"runs", "watch", "poll"}


def test_watch_line_keys() -> None:
    from nr_run.cli.watch import tick_dict
    from nr_run.runbooks.watch import Tick

    block = _block(_section((DOCS / "history.md").read_text(), "## watch"))
    assert set(tick_dict(Tick(1, 0.0, 0.1, 30.0), "dc1")) == _top_keys(block) - {"rtsw3"}


def test_job_check_keys() -> None:
    from nr_run.intent import compile_site
    from nr_run.runbooks.job import JobVerdict, job_scope

    verdict = JobVerdict(job_scope(compile_site(DC1), ["gpu1"]))
    block = _block(_section((DOCS / "json-output.md").read_text(), "## `nr-run job-check --json`"))
    keys = {k for k in re.findall(r'"([a-z_]+)"', block)} - {"ok", "drain", "unknown", "node", "nic", "device", "port", "why"}
    assert set(verdict.as_dict()) == {k for k in keys if not k.startswith(("rtsw", "ctsw"))}
