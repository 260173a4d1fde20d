"""ECMP: flows of a collective hashed per QP over the ECMP groups, the analytic balls-into-bins and collision
models, and what the hash fields do to entropy."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nr_run.analysis import ecmp
from nr_run.analysis.ecmp import (
    FIVE_TUPLE,
    HashModel,
    collision_share,
    connections,
    expected_max_over_mean,
    imbalance,
    make_qps,
    measured_collision,
    roce_udp_sport,
    simulate,
)
from nr_run.analysis.options import AnalysisOptions
from nr_run.analysis.routing import Routes
from tests.analysis.fabrics import clos, generated, graph, site, small

NO_SPORT = ("src_ip", "dst_ip", "protocol", "dst_port")


@given(st.integers(0, 2**24 - 1), st.integers(0, 2**24 - 1))
def test_roce_source_port_is_in_the_rocev2_range_and_symmetric(lqpn, rqpn):
    port = roce_udp_sport(lqpn, rqpn)
    assert 0xC000 <= port <= 0xFFFF
    assert port == roce_udp_sport(rqpn, lqpn)      # both ends of a connection derive the same port


def test_roce_source_port_small_values():
    # product 1 -> flow label 1 -> port 0xC001; product 0x4000 -> label bit 14 folds onto bit 0
    assert roce_udp_sport(1, 1) == 0xC001
    assert roce_udp_sport(0x4000, 1) == 0xC001
    assert roce_udp_sport(0x3FFF, 1) == 0xFFFF
    assert len({roce_udp_sport(0x100 + i, 0x200) for i in range(64)}) == 64


def test_patterns_build_the_documented_connections():
    g = graph(site("dc1"))
    nics = len(g.nics)
    rails = {n.rail for n in g.nics}
    per_rail = nics // len(rails)
    assert len(connections(g, "ring")) == nics
    assert len(connections(g, "pairs")) == nics
    assert len(connections(g, "alltoall")) == len(rails) * per_rail * (per_rail - 1)
    assert all(a.rail == b.rail and a is not b for a, b in connections(g, "alltoall"))


def _sim(fabric, pattern, q, fields=FIVE_TUPLE, seed=0):
    g = graph(fabric)
    return simulate(g, Routes(g), pattern, q, HashModel(fields, seed))


# one defect per case: hash fields, QPs; does entropy grow with the QPs of a connection?
CASES = [
    ("5-tuple: QPs spread", FIVE_TUPLE, True),
    ("no source port: every QP of a connection takes one path", NO_SPORT, False),
    ("no source port but the destination QP (UDF)", NO_SPORT + ("dest_qp",), True),
    ("IP pair only", ("src_ip", "dst_ip"), False),
]


@pytest.mark.parametrize("why,fields,spreads", CASES, ids=[c[0] for c in CASES])
def test_hash_fields_decide_whether_qps_add_entropy(why, fields, spreads):
    fabric = small(clos(4, 2, 2, host_speed="400G", servers_per_unit=4))
    one, many = _sim(fabric, "pairs", 1, fields), _sim(fabric, "pairs", 16, fields)
    used_one = sum(1 for c in one.groups.values() for v in c.values() if v)
    used_many = sum(1 for c in many.groups.values() for v in c.values() if v)
    if spreads:
        assert used_many > used_one and imbalance(many)[0] < imbalance(one)[0]
    else:
        assert used_many == used_one and imbalance(many) == imbalance(one)


def test_missing_source_port_is_a_warning_finding():
    fabric = site("dc1")
    result = ecmp.analyse(fabric, AnalysisOptions(), HashModel(NO_SPORT))
    assert any(f.subject == "hash fields" and not f.passed for f in result.findings)
    result = ecmp.analyse(fabric, AnalysisOptions())
    assert not any(f.subject == "hash fields" for f in result.findings)
    # what the plug-ins report: EOS' default hash (no IP protocol field, a constant 17 for RoCEv2 anyway),
    # SONiC unknown and so modelled as the 5-tuple; the intersection
    assert result.summary["hash_fields"] == ["src_ip", "dst_ip", "src_port", "dst_port"]


def test_seed_is_deterministic_and_changes_the_choice():
    fabric = generated(32, 4, 4)
    a, b, c = (_sim(fabric, "alltoall", 1, seed=s) for s in (7, 7, 8))
    assert a.groups == b.groups and a.link_load == b.link_load
    assert a.groups != c.groups


def test_crc_hash_is_close_to_ideal_on_a_large_alltoall():
    sim = _sim(generated(32, 4, 4), "alltoall", 4)
    measured, ideal = measured_collision(sim)
    assert ideal == pytest.approx(0.25)
    assert measured == pytest.approx(ideal, rel=0.05)
    worst, mean = imbalance(sim)
    assert 1.0 <= mean <= worst < 1.25


def test_rates_share_each_nic_line_rate():
    g = graph(site("dc1"))
    per_nic = ecmp.connections_per_nic(g, "alltoall")
    qps = make_qps(connections(g, "alltoall"), 4, per_nic)
    for nic in g.nics:
        assert sum(q.rate_mbps for q in qps if q.src is nic) == pytest.approx(nic.speed_mbps)


def test_analysis_reports_loads_sweep_and_figures():
    result = ecmp.analyse(site("dc1"), AnalysisOptions(pattern="pairs", qps_per_connection=1))
    s = result.summary
    assert s["ecmp_width"] == 2 and s["elephant_collision_share"] == 0.5
    assert s["qps_needed"] is None or s["qps_needed"] >= 1
    hist, line = result.figures
    assert hist.kind == "histogram" and len(hist.data["values"]) == 8          # 4 RTSWs x 2 uplinks
    assert line.kind == "line" and line.data["labels"][0] == 1
    sweep = result.tables[1].rows
    if s["qps_needed"] is not None:
        assert sweep[-1][0] == s["qps_needed"] and sweep[-1][1] <= s["max_imbalance"]
    assert all(r[1] > s["max_imbalance"] for r in sweep[:-1])


def test_large_patterns_are_sampled_by_source_switch():
    g = graph(generated(32, 4, 4))
    sim = simulate(g, Routes(g), "alltoall", 8, HashModel(), budget=2_000)
    assert sim.sampled_sources < sim.total_sources == 32
    assert sim.qps <= 2_000 * 2


# ---- the analytic models -------------------------------------------------------------------------------

def _brute_max_over_mean(m, n):
    total = 0
    for assignment in itertools.product(range(n), repeat=m):
        total += max(assignment.count(b) for b in range(n))
    return total / n ** m / (m / n)


@pytest.mark.parametrize("m,n", [(1, 2), (2, 2), (3, 2), (4, 3), (5, 4), (6, 3), (7, 2)])
def test_balls_into_bins_expectation_is_exact_for_small_loads(m, n):
    assert expected_max_over_mean(m, n) == pytest.approx(_brute_max_over_mean(m, n), rel=1e-9)


def test_balls_into_bins_heavy_load_uses_raab_steger():
    m, n = 100_000, 16
    lam = m / n
    assert expected_max_over_mean(m, n) == pytest.approx((lam + math.sqrt(2 * lam * math.log(n))) / lam)
    assert 1.0 < expected_max_over_mean(m, n) < expected_max_over_mean(1_000, n) < expected_max_over_mean(50, n)


@given(st.integers(2, 64))
def test_one_qp_collision_share_is_the_classic_one_over_n(n):
    assert collision_share(n, 1) == pytest.approx(1 / n)


@settings(max_examples=60)
@given(st.integers(2, 64), st.integers(1, 64))
def test_more_qps_never_raise_the_expected_collision(n, q):
    assert collision_share(n, 2 * q) <= collision_share(n, q) + 1e-12
    assert collision_share(n, q + 1) <= collision_share(n, q) + 1e-12


def test_a_lost_uplink_moves_its_load_onto_the_others():
    fabric = site("dc1")
    result = ecmp.analyse(fabric, AnalysisOptions(pattern="alltoall", qps_per_connection=4, failures=1))
    rows = {r[0]: r for r in result.tables[-1].rows}
    assert result.tables[-1].columns == ["failures", "worst max/mean", "busiest uplink %"]
    lost = rows["link ctsw1:Ethernet1-rtsw1:Ethernet1"]
    assert lost[2] > rows["none"][2]                 # rtsw1's remaining uplink carries what both did
    assert len(rows) == 4                           # none, a link, a CTSW, an RTSW
    no_failures = ecmp.analyse(fabric, AnalysisOptions(pattern="alltoall", failures=0))
    assert not any("failures" in t.title for t in no_failures.tables)
