"""A generated 512-RTSW / 16-CTSW site compiles cleanly (rendering is covered in test_render_scale)."""

from __future__ import annotations

import pytest

from nr_run.platforms.site import load_site
from tests.sitegen import generate_site


@pytest.mark.long
def test_512_rtsw_16_ctsw_site_compiles(tmp_path):
    site = generate_site(tmp_path, rtsw=512, ctsw=16)
    intent, findings = load_site(site)
    assert [f for f in findings if f.severity == "error"] == []
    switches = intent.switches()
    assert len(switches) == 528 and len(intent.servers()) == 1024
    rtsw = intent.devices["rtsw512"]
    assert rtsw.asn == 65101 + 511 and len(rtsw.bgp.peers) == 16
    assert len(intent.devices["ctsw16"].bgp.peers) == 512
    # every /31 is used exactly once
    addresses = [i.address for d in switches for i in d.interfaces] + [n.address for d in intent.servers() for n in d.nics]
    assert len(addresses) == len(set(addresses)) == 2 * len(intent.links)


@pytest.mark.parametrize("site", ["dc1", "dc2", "generated"])
def test_compiled_intent_is_valid_for_its_models(site, tmp_path):
    """Compile builds ports, BGP peers, NICs and links without re-validating them (they are most of a big
    site's memory): the whole compiled intent must still be exactly what the models accept."""
    from nr_run.intent import compile_site
    from nr_run.intent.models import FabricIntent
    from tests.conftest import DC1

    path = generate_site(tmp_path, rtsw=32, ctsw=4, nics=4) if site == "generated" else DC1.parent / site
    intent = compile_site(path)
    assert intent.links and any(d.nics for d in intent.servers())
    dumped = intent.model_dump()
    assert FabricIntent.model_validate(dumped) == intent
    assert FabricIntent.model_validate_json(intent.model_dump_json()).model_dump() == dumped
