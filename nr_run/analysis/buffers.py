"""Buffers with a derivation: per-port PFC headroom term by term, pool sizing per switch, ECN before PFC.

* Headroom: every term of nr_run.intent.headroom for each distinct (speed, cable, MTU, cell) of the site, with
  the ports that use it; where the platform renders a buffer model (SONiC BUFFER_PROFILE, from the SKU's own
  pg_profile_lookup.ini), both side by side: the table wins on the switch, and a row below the derived xoff is
  a warning (the vendor assumed a shorter cable or smaller frame than the link has).
* Pools: the ingress lossless pool must hold the headroom pool (the sum of every lossless PG's xoff) plus the
  reserved PG sizes, and the configured headroom pool must cover that sum (else a burst on every port at once
  overflows it and drops "lossless" packets).
* ECN before PFC: a lossless PG sends XOFF when its shared-buffer use passes the pool's dynamic threshold,
  alpha x (free shared buffer). With n PGs congested at once the threshold settles at alpha x S / (1 + n x alpha)
  (S: the pool's shared part). ECN must start marking (and reach its maximum) below that for the worst case, all
  lossless PGs of the switch congested, as the DCQCN paper requires (Zhu et al., SIGCOMM 2015, §5: "ECN must be
  triggered before PFC"); otherwise PFC pauses the link before DCQCN slows the senders. ECN counts egress queue
  bytes and PFC ingress PG bytes: for one congested egress fed by its ingress ports the two grow together, which
  is the approximation this check makes.
"""

from __future__ import annotations

import time
from typing import Any

from nr_run.analysis.options import AnalysisOptions
from nr_run.analysis.result import AnalysisFinding, AnalysisResult, Figure, Table
from nr_run.intent.headroom import HeadroomTerms, headroom_terms
from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms.qos import BufferView, DeviceQos, fabric_device_qos

NAME = "buffers"


def pfc_trigger_bytes(shared_bytes: int, dynamic_th: int, congested: int) -> int:
    """Shared-buffer bytes one PG holds before XOFF when `congested` PGs fill the pool together.

    Dynamic threshold T = alpha x (S - n x T) (each congested PG may use alpha times what is left free),
    so T = alpha x S / (1 + n x alpha); alpha = 2 ** dynamic_th (SONiC/SAI: dynamic_th is log2 of alpha).
    """
    alpha = 2.0 ** dynamic_th
    return int(alpha * shared_bytes / (1 + max(congested, 1) * alpha))


def _terms(dev: DeviceIntent) -> dict[str, HeadroomTerms]:
    cell = dev.buffers.cell_bytes if dev.buffers else 1
    out: dict[str, HeadroomTerms] = {}
    for itf in dev.interfaces:
        if itf.lossless_priorities:
            try:
                out[itf.name] = headroom_terms(itf.speed_mbps, itf.cable_length_m, itf.mtu, cell)
            except ValueError:
                continue        # a rate without a known response delay: compile already refused it
    return out


def _view(dev: DeviceIntent, fabric: FabricIntent) -> DeviceQos | str:
    """The device's rendered view, or why its platform cannot build a config from this intent."""
    try:
        return fabric_device_qos(dev, fabric)
    except (ValueError, KeyError, LookupError) as exc:
        return str(exc)


def _pool(dev: DeviceIntent, view: BufferView, terms: dict[str, HeadroomTerms], ecn_max: int | None,
          fabric_file: str) -> tuple[list[AnalysisFinding], list[Any]]:
    """Pool sizing and ECN-before-PFC findings of one switch, and its row of the pool table."""
    out: list[AnalysisFinding] = []
    pgs = max(view.lossless_pgs_per_port, 1)
    needed = sum(t.xoff_bytes for t in terms.values()) * pgs
    shared = view.pool_bytes - view.headroom_pool_bytes - view.reserved_bytes
    fix_len = (f"{fabric_file}: shorten cabling cable_length_m, lower roles.{dev.role}.mtu or use fewer "
               f"roce_profiles.{dev.roce.profile}.lossless_priorities; or a larger pool (hardware.{dev.hardware.name}.asic)")
    overflow = view.headroom_pool_bytes + view.reserved_bytes > view.pool_bytes or shared <= 0
    out.append(AnalysisFinding(
        NAME, f"{dev.name} ingress lossless pool",
        (f"headroom pool {view.headroom_pool_bytes:,} B + reserved {view.reserved_bytes:,} B "
         f"{'exceed' if overflow else 'fit in'} the pool of {view.pool_bytes:,} B"),
        passed=not overflow, fix=fix_len if overflow else "",
        data={"check": "pool", "device": dev.name, "field": f"hardware.{dev.hardware.name}.asic",
              "pool_bytes": view.pool_bytes, "headroom_pool_bytes": view.headroom_pool_bytes,
              "reserved_bytes": view.reserved_bytes, "shared_bytes": shared}))
    if view.headroom_pool_bytes == 0:
        # no shared headroom pool (e.g. Spectrum's traditional model): each lossless PG reserves its own
        # headroom, the profile's size, which the pool check above already counts as reserved
        out.append(AnalysisFinding(
            NAME, f"{dev.name} headroom pool", f"no shared headroom pool: each lossless PG reserves its headroom "
            f"in its profile (reserved {view.reserved_bytes:,} B in all)", passed=True, severity="info",
            data={"check": "headroom-pool", "device": dev.name, "field": "", "needed_bytes": needed}))
    short = 0 < view.headroom_pool_bytes < needed
    out += [] if view.headroom_pool_bytes == 0 else [AnalysisFinding(
        NAME, f"{dev.name} headroom pool",
        f"headroom pool {view.headroom_pool_bytes:,} B {'<' if short else '>='} {needed:,} B, the derived xoff of "
        f"{len(terms)} port(s) x {pgs} lossless PG(s)",
        passed=not short, fix=(f"the {dev.platform} platform plug-in sizes the pool xoff below the derived "
                               "headroom: fix nr_run/platforms/" + dev.platform) if short else "",
        data={"check": "headroom-pool", "device": dev.name, "field": "", "needed_bytes": needed})]
    low = [p for p, t in sorted(terms.items()) if view.pg_xoff.get(p, t.xoff_bytes) < t.xoff_bytes]
    if low:
        # the platform's table (SONiC: the SKU's pg_profile_lookup.ini) is what the switch runs and wins; a
        # row below the delay model is a warning to check the cable or the SKU's table, not a deploy blocker
        p = low[0]
        out.append(AnalysisFinding(
            NAME, f"{dev.name}:{p} headroom",
            f"rendered xoff {view.pg_xoff[p]:,} B < derived {terms[p].xoff_bytes:,} B"
            + (f" (and {len(low) - 1} more port(s))" if len(low) > 1 else ""),
            passed=False, severity="warning",
            fix=f"the {dev.platform} platform's headroom table for {dev.model} is below the PFC delay model: check "
                f"the cable length, or give the switch a table with a longer row (hardware.{dev.hardware.name}"
                ".sku_dir)",
            data={"check": "xoff", "device": dev.name, "field": f"hardware.{dev.hardware.name}.sku_dir",
                  "ports": low[:20]}))
    congested = len(terms) * pgs
    worst = pfc_trigger_bytes(max(shared, 0), view.dynamic_th, congested)
    single = pfc_trigger_bytes(max(shared, 0), view.dynamic_th, 1)
    if ecn_max is not None and not overflow:
        late = ecn_max >= worst
        out.append(AnalysisFinding(
            NAME, f"{dev.name} ECN before PFC",
            f"ECN max threshold {ecn_max:,} B {'>=' if late else '<'} the PFC XOFF trigger {worst:,} B with all "
            f"{congested} lossless PG(s) congested (alpha 2^{view.dynamic_th}; {single:,} B with one)",
            passed=not late,
            fix=(f"{fabric_file}: lower roce_profiles.{dev.roce.profile}.ecn.max_kbytes below {worst // 1000} "
                 "so DCQCN slows senders before PFC pauses the link") if late else "",
            data={"check": "ecn-before-pfc", "device": dev.name,
                  "field": f"roce_profiles.{dev.roce.profile}.ecn.max_kbytes", "ecn_max_bytes": ecn_max,
                  "pfc_trigger_all_bytes": worst, "pfc_trigger_one_bytes": single}))
    row = [dev.name, dev.platform, view.pool_bytes, view.headroom_pool_bytes, needed, view.reserved_bytes, shared,
           single, worst, ecn_max if ecn_max is not None else "-",
           "ok" if all(f.passed for f in out) else "FAIL"]
    return out, row


def analyse(fabric: FabricIntent, options: AnalysisOptions) -> AnalysisResult:
    start = time.perf_counter()
    result = AnalysisResult(name=NAME, title="Buffers: PFC headroom, pools, ECN before PFC")
    profiles: dict[tuple[int, int, int, int], tuple[HeadroomTerms, list[str]]] = {}
    pool_rows: list[list[Any]] = []
    table_rows: list[list[Any]] = []
    unmodelled: list[str] = []
    for dev in sorted(fabric.switches(), key=lambda d: d.name):
        terms = _terms(dev)
        for port, t in terms.items():
            key = (t.speed_mbps, t.cable_length_m, t.mtu, t.cell_bytes)
            profiles.setdefault(key, (t, []))[1].append(f"{dev.name}:{port}")
        view = _view(dev, fabric)
        if isinstance(view, str):
            result.findings.append(AnalysisFinding(
                NAME, f"{dev.name} buffers", f"the {dev.platform} config cannot be built: {view}", passed=False,
                fix=f"nr_run/platforms/{dev.platform} (or the intent it refuses)",
                data={"check": "config", "device": dev.name, "field": ""}))
            continue
        if view.buffers is None:
            unmodelled.append(dev.name)
            continue
        ecn = [hi for pq in view.ports.values() for _, hi in pq.ecn_queues.values()]
        findings, row = _pool(dev, view.buffers, terms, max(ecn) if ecn else None, fabric.fabric_file or "fabric.yaml")
        result.findings += findings
        pool_rows.append(row)
        by_profile: dict[tuple[int, int, int, int], list[str]] = {}
        for port, t in sorted(terms.items()):
            if port in view.buffers.pg_xoff:
                by_profile.setdefault((t.speed_mbps, t.cable_length_m, view.buffers.pg_xoff[port], t.xoff_bytes),
                                      []).append(port)
        for (speed, cable, rendered, need), ports in sorted(by_profile.items()):
            table_rows.append([dev.name, dev.model, f"{speed // 1000}G", cable, rendered, need,
                               round(rendered / need, 2) if need else "-",
                               "ok" if rendered >= need else "BELOW", ", ".join(ports[:3])
                               + (" ..." if len(ports) > 3 else "")])
    rows = []
    for (speed, cable, mtu, cell), (t, ports) in sorted(profiles.items()):
        rows.append([f"{speed // 1000}G", cable, mtu, cell, t.receiver_frame_bits, t.pause_bits, t.cable_bits,
                     t.response_bits, t.sender_frame_bits, t.total_bits, t.xoff_bytes, len(ports),
                     ", ".join(ports[:3]) + (" ..." if len(ports) > 3 else "")])
        if t.response_derived:
            result.findings.append(AnalysisFinding(
                NAME, f"headroom {speed // 1000}G", f"D_resp at {speed // 1000}G is scaled from the IEEE 802.3 "
                "Annex 31D 100G/400G values, not taken from the standard", passed=True, severity="info"))
    result.tables.append(Table(
        title="PFC headroom per port (bit times; one row per distinct speed, cable, MTU and cell size)",
        columns=["speed", "cable m", "L3 MTU", "cell B", "MTU_R", "PAUSE", "2 x cable", "D_resp", "MTU_S",
                 "total bits", "xoff B", "ports", "e.g."], rows=rows))
    result.tables.append(Table(
        title="Ingress lossless pool per switch (bytes)",
        columns=["switch", "platform", "pool", "headroom pool", "headroom needed", "reserved", "shared",
                 "PFC trigger (1 PG)", "PFC trigger (all PGs)", "ECN max", "verdict"], rows=pool_rows))
    result.tables.append(Table(
        title="Lossless PG xoff as rendered (SONiC: the SKU's pg_profile_lookup.ini row, which the switch runs) "
              "against the PFC delay model (bytes)",
        columns=["switch", "model", "speed", "cable m", "rendered xoff", "derived xoff", "ratio", "verdict",
                 "ports"], rows=table_rows))
    if profiles:
        labels = [f"{k[0] // 1000}G {k[1]}m MTU {k[2]}" + (f" {k[3]}B cells" if k[3] > 1 else "")
                  for k in sorted(profiles)]
        derived = [profiles[k][0] for k in sorted(profiles)]
        result.figures.append(Figure("PFC headroom derivation per port profile (KB)", "bar", {
            "labels": labels, "stacked": True, "xlabel": "port profile", "ylabel": "KB",
            "series": {name: [round(getattr(t, attr) / 8000, 1) for t in derived] for name, attr in (
                ("MTU_R", "receiver_frame_bits"), ("PAUSE", "pause_bits"), ("2 x cable", "cable_bits"),
                ("D_resp", "response_bits"), ("MTU_S", "sender_frame_bits"))}}))
    if unmodelled:
        result.findings.append(AnalysisFinding(
            NAME, "platform buffer defaults", f"{len(unmodelled)} switch(es) keep their platform's own buffer "
            f"model (nr-run configures none there), e.g. {', '.join(unmodelled[:3])}: headroom shown for "
            "reference only", passed=True, severity="info"))
    result.summary = {"headroom_profiles": len(profiles), "switches_with_pools": len(pool_rows),
                      "max_xoff_bytes": max((t.xoff_bytes for t, _ in profiles.values()), default=0),
                      "failed": sum(not f.passed and f.severity == "error" for f in result.findings)}
    result.seconds = time.perf_counter() - start
    return result
