"""Power and space per zone: racks, draw and the share of the declared budgets (fabric.yaml `power:`).

Preflight refuses a plan over a budget; this shows how close each zone and its fullest rack are to theirs,
the headroom a growth plan (a unit, a hotter GPU generation) has to fit in."""

from __future__ import annotations

import time

from nr_run.analysis.options import AnalysisOptions
from nr_run.analysis.result import AnalysisFinding, AnalysisResult, Table
from nr_run.intent.models import FabricIntent
from nr_run.intent.power import usage, zone_label


def _pct(value: float, budget: float | None) -> float | None:
    return round(100 * value / budget, 1) if budget else None


def analyse(fabric: FabricIntent, options: AnalysisOptions) -> AnalysisResult:
    t0 = time.perf_counter()
    result = AnalysisResult(name="power", title="Power and space per zone")
    budget = fabric.power
    if budget is None:
        result.findings.append(AnalysisFinding(analysis="power", subject="site", passed=True, severity="info",
                                               message="no power: budgets declared in fabric.yaml"))
        result.summary = {"zones": 0, "worst_zone_percent": None, "worst_rack_percent": None}
        result.seconds = time.perf_counter() - t0
        return result
    racks, zones = usage(fabric)
    rows: list[list[object]] = []
    for zone, use in sorted(zones.items(), key=lambda z: (z[0] is None, z[0] or 0)):
        fullest = max(((racks[r].kw, r) for r in use.racks), default=(0.0, ""))
        rows.append([zone_label(zone) if zone is not None or fabric.shape != "multi-zone" else "aggregation tier",
                     len(use.racks), budget.racks_per_zone, round(use.kw, 1), budget.zone_kw,
                     _pct(use.kw, budget.zone_kw), fullest[1] or None, _pct(fullest[0], budget.rack_kw)])
    result.tables.append(Table(
        title="Per zone: racks and draw against the budgets",
        columns=["zone", "racks", "racks allowed", "kW", "kW budget", "kW used %", "fullest rack", "rack kW used %"],
        rows=rows))
    used = [(r[5], r) for r in rows if isinstance(r[5], float)]
    worst = max(used, key=lambda u: u[0])[1] if used else None
    message = (f"{worst[0]} draws {worst[3]} kW, {worst[5]} % of its {worst[4]} kW budget"
               if worst else f"racks within {budget.rack_kw:g} kW each")
    result.findings.append(AnalysisFinding(analysis="power", subject="zones", passed=True, severity="info",
                                           message=message, data={"zones": len(rows)}))
    result.summary = {"zones": len(rows), "worst_zone_percent": worst[5] if worst else None,
                      "worst_rack_percent": max((r[7] for r in rows if isinstance(r[7], float)), default=None)}
    result.seconds = time.perf_counter() - t0
    return result
