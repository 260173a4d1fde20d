"""Generated-site property (hypothesis): small sites of all three shapes (star, clos, multi-zone) across every
axis of the inventory format (platforms per role, port layouts, speeds 100G-800G, cable lengths, overrides that change, add and remove links, per-host
MTU and RoCE profile, pools, 2- and 4-byte ASN plans, lossless priorities, CNP/ECN/watchdog settings, unit
counts). Each is refused by preflight with exit 3 naming the field, or renders only template lines, deploys
to its own twin with exit 0 and checks with exit 0. benchmarks/soak_generated_sites.py runs the long version.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings

from tests.generated_property import check_generated_site, small_sites
from tests.sitegen import SmallSite

pytestmark = pytest.mark.long

SITES = 30
OUTCOMES: Counter[str] = Counter()


@pytest.mark.long
def test_generated_sites_are_refused_or_deploy_and_check_clean() -> None:
    OUTCOMES.clear()
    _sites()
    print(f"generated sites: {dict(OUTCOMES.most_common())}")
    assert sum(OUTCOMES.values()) >= SITES
    assert OUTCOMES["deployed"] >= SITES // 2, OUTCOMES      # most draws are valid sites that reach the twin
    assert any(k.startswith("refused") for k in OUTCOMES), OUTCOMES


@settings(max_examples=SITES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(small_sites(max_units=2, max_ctsw=2))
# the axes a small draw may miss, pinned: a removed rail, a NIC slower than its link, overlapping pools,
# SONiC everywhere with 4-lane ports and uplinks last, EOS CTSWs over 800G with a parallel added uplink
@example(SmallSite(remove_rail=True, rails=2, rtsw_platforms=("sonic", "eos"), servers_per_unit=2))
@example(SmallSite(nic_speed="100G", host_speed="400G"))
@example(SmallSite(overlap_pools=True))
@example(SmallSite(ctsw_platforms=("sonic", "sonic"), rtsw_platforms=("sonic", "sonic"), rails=2, uplinks_last=True,
                   sonic_lanes=4, host_speed="200G", asn4=True, lossless=(3, 4), cnp_tc=7, watchdog_action="alert",
                   remove_uplink=True, host_mtu=9000, alt_profile_host=True, storage_nics=2))
@example(SmallSite(fabric_speed="800G", add_uplink=True, change_uplink_m=120, lossless=(4,), ecn=False,
                   watchdog=False))
# RDMA over oversubscribed uplinks (400G NICs, 100G fabric): the check expects the slowest link's rate
@example(SmallSite(fabric_speed="100G", host_speed="400G", rails=2, servers_per_unit=2, rtsw_platforms=("eos", "eos")))
# the other two shapes, pinned: a star with two NICs of each server on each switch, two zones mixing platforms
@example(SmallSite(shape="star", rails=2, nics_per_leaf=2, servers_per_unit=2, rtsw_platforms=("eos", "sonic")))
@example(SmallSite(shape="multi-zone", zones=2, rails=2, rtsw_platforms=("sonic", "eos"),
                   ctsw_platforms=("eos", "sonic"), atsw_platforms=("eos", "eos")))
def _sites(spec: SmallSite) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="gen-site-"))
    try:
        OUTCOMES[check_generated_site(spec, scratch)] += 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
