"""Inventory YAML loading: fast and safe."""

from __future__ import annotations


def test_inventory_yaml_is_read_with_libyaml_and_stays_safe(tmp_path):
    """libyaml's parser when PyYAML has it (several times faster on large sites), with the safe constructors:
    a tag that would build a Python object is refused as invalid YAML."""
    import yaml

    from nr_run.intent import source

    if yaml.__with_libyaml__:
        assert source.SafeLoader is yaml.CSafeLoader
    (tmp_path / "hosts.yaml").write_text("rtsw1: !!python/object/apply:os.system ['true']\n")
    loaded = source.load_site(tmp_path)
    assert any("not valid YAML" in f.message for f in loaded.findings)
