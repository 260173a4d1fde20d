"""Compiled fabrics for the routing, deadlock, ECMP and capacity analysis tests (cached per process)."""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path

from nr_run.analysis.graph import FabricGraph
from nr_run.intent import compile_site
from nr_run.intent.models import FabricIntent
from tests.conftest import DC1
from tests.sitegen import SmallSite, generate_site, write_small_site


@cache
def site(name: str) -> FabricIntent:
    """inventory/<name> compiled."""
    return compile_site(DC1.parent / name)


@cache
def small(spec: SmallSite) -> FabricIntent:
    with tempfile.TemporaryDirectory() as tmp:
        return compile_site(write_small_site(Path(tmp), spec))


@cache
def generated(rtsw: int, ctsw: int, nics: int) -> FabricIntent:
    with tempfile.TemporaryDirectory() as tmp:
        return compile_site(generate_site(Path(tmp), rtsw=rtsw, ctsw=ctsw, nics=nics))


def graph(fabric: FabricIntent) -> FabricGraph:
    return FabricGraph.from_intent(fabric)


def with_ctsw_asns(fabric: FabricIntent, base: int) -> FabricIntent:
    """The fabric with every CTSW in its own ASN (the schema gives them one; this builds the other design)."""
    devices = dict(fabric.devices)
    for i, name in enumerate(sorted(n for n, d in devices.items() if d.role == "ctsw")):
        devices[name] = devices[name].model_copy(update={"asn": base + i})
    return fabric.model_copy(update={"devices": devices})


def with_maximum_paths(fabric: FabricIntent, paths: int) -> FabricIntent:
    devices = dict(fabric.devices)
    for name, dev in devices.items():
        if dev.bgp is not None:
            devices[name] = dev.model_copy(update={"bgp": dev.bgp.model_copy(update={"maximum_paths": paths})})
    return fabric.model_copy(update={"devices": devices})


def link_id(g: FabricGraph, a: str, b: str, n: int = 0) -> int:
    """The n-th fabric link between switches a and b."""
    return [lid for lid, peer in g.adj[a] if peer == b][n]


def clos(ctsw: int, units: int, rails: int = 1, **kw: object) -> SmallSite:
    """A small two-tier site: `ctsw` EOS CTSWs, `units` units of `rails` RTSWs alternating EOS and SONiC."""
    rtsw = tuple("eos" if i % 2 == 0 else "sonic" for i in range(units * rails))
    return SmallSite(ctsw_platforms=("eos",) * ctsw, rtsw_platforms=rtsw, rails=rails, **kw)  # type: ignore[arg-type]
