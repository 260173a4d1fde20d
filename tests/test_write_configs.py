"""Configs land as plain files directly in the output folder: a symlink planted there under a config's name is
refused (its target is left alone), an existing file is replaced, and the bytes are the rendered text."""

from __future__ import annotations

import pytest

from nr_run.intent import compile_site
from nr_run.runbooks.render import config_filename, write_configs
from tests.conftest import DC1


@pytest.fixture(scope="module")
def dc1():
    return compile_site(DC1)


def test_a_planted_symlink_is_refused_and_its_target_untouched(dc1, tmp_path) -> None:
    out, outside = tmp_path / "out", tmp_path / "outside.txt"
    out.mkdir()
    outside.write_text("keep")
    (out / config_filename(dc1.devices["rtsw1"])).symlink_to(outside)
    with pytest.raises(ValueError, match="would leave"):
        write_configs({"ctsw1": "a\n", "rtsw1": "b\n"}, out, dc1)
    assert outside.read_text() == "keep"


def test_files_are_replaced_with_the_rendered_bytes(dc1, tmp_path) -> None:
    text = "line one\nzwei \u00fc\n"
    (tmp_path / config_filename(dc1.devices["ctsw1"])).write_text("an older, longer config\n" * 10)
    paths = write_configs({"ctsw1": text, "gpu1": "#!/bin/sh\n"}, tmp_path, dc1)
    assert paths["ctsw1"].read_bytes() == text.encode("utf-8")
    assert paths["gpu1"].read_bytes() == b"#!/bin/sh\n" and paths["gpu1"].parent == tmp_path
