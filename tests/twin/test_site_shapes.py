"""Sites of the shapes the twin used to get wrong, written from the inventory format alone, deploy to the twin
and check clean (no false finding): an all-EOS fabric with 800G uplinks and 400G host halves, SONiC switches using
both 400G ports of each 800G cage, and 200G hosts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.generated_property import check_generated_site
from tests.sitegen import SmallSite

SHAPES = {
    "eos-800g-uplinks-400g-hosts": SmallSite(ctsw_platforms=("eos", "eos"), rtsw_platforms=("eos", "eos"),
                                             fabric_speed="800G", host_speed="400G", site="shape800"),
    "sonic-two-400g-per-cage": SmallSite(ctsw_platforms=("eos", "eos"), rtsw_platforms=("sonic", "sonic"),
                                         sonic_lanes=4, fabric_speed="400G", host_speed="400G", site="shapecage"),
    "200g-hosts": SmallSite(ctsw_platforms=("eos", "eos"), rtsw_platforms=("eos", "sonic"), fabric_speed="400G",
                            host_speed="200G", site="shape200"),
}


@pytest.mark.long
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_site_shape_deploys_and_checks_clean(tmp_path: Path, shape: str):
    assert check_generated_site(SHAPES[shape], tmp_path) == "deployed"
