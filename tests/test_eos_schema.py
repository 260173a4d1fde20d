"""EOS's structured config has a schema (nr_run.platforms.eos.schema): every switch the shipped sites build
conforms to it exactly, and the templates read nothing it does not declare."""

from __future__ import annotations

from importlib import resources

import pytest
from jinja2 import meta, nodes
from pydantic import ValidationError

from nr_run.intent import compile_site
from nr_run.platforms.eos.config import EosConfig
from nr_run.platforms.eos.schema import keys, validate
from tests.conftest import REPO

EOS = EosConfig()


def _configs():
    for site in ("dc1", "dc2"):
        fabric = compile_site(REPO / "inventory" / site)
        for dev in sorted(fabric.switches(), key=lambda d: d.name):
            if dev.platform == "eos":
                yield f"{site}/{dev.name}", EOS.structured_config(dev, fabric)


@pytest.mark.parametrize("name, structured", list(_configs()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_built_config_conforms_to_the_schema(name, structured):
    assert validate(structured) == structured


def test_a_key_the_schema_does_not_declare_or_lacks_is_refused():
    _, structured = next(_configs())
    with pytest.raises(ValidationError, match="qos_profiles.0.pfc.watchdog.timeout_ms"):
        bad = {**structured, "qos_profiles": [{**structured["qos_profiles"][0]}]}
        bad["qos_profiles"][0]["pfc"] = {**bad["qos_profiles"][0]["pfc"]}
        bad["qos_profiles"][0]["pfc"]["watchdog"] = {**bad["qos_profiles"][0]["pfc"]["watchdog"], "timeout_ms": 200}
        validate(bad)
    missing = {k: v for k, v in structured.items() if k != "qos_maps"}
    with pytest.raises(ValidationError, match="qos_maps"):
        validate(missing)
    with pytest.raises(ValidationError, match="mtu"):
        validate({**structured, "ethernet_interfaces": [{**structured["ethernet_interfaces"][0], "mtu": "9214"}]})


def test_the_templates_read_only_declared_keys():
    env = EOS.environment()
    folder = resources.files("nr_run.templates") / "eos"
    used: set[str] = set()
    for template in sorted(p.name for p in folder.iterdir() if p.name.endswith(".j2")):
        ast = env.parse(env.loader.get_source(env, template)[0])
        # a name a template sets itself inside a block (`{% set wd = ... %}`) is its own, not the config's
        local = {t.name for a in ast.find_all(nodes.Assign) for t in a.find_all(nodes.Name)}
        used |= meta.find_undeclared_variables(ast) - local
    assert used and used <= keys(), sorted(used - keys())
