"""`export nccl`: the NCCL/UCX environment follows the intent (the NICs' ToS, RoCEv2 GID, the ECMP analysis)."""

from __future__ import annotations

import pytest

from nr_run.analysis.ecmp import analyse
from nr_run.analysis.options import AnalysisOptions
from nr_run.intent import compile_site
from nr_run.runbooks.export.nccl import as_shell, nccl_environment
from tests.conftest import REPO


def _env(site: str) -> dict[str, str]:
    return {v.name: v.value for v in nccl_environment(compile_site(REPO / "inventory" / site))}


def test_dcqcn_site_sends_roce_with_ect_on_the_lossless_class():
    env = _env("dc1")
    fabric = compile_site(REPO / "inventory" / "dc1")
    qos = fabric.devices["gpu1"].nics[0].qos
    assert env["NCCL_IB_TC"] == env["UCX_IB_TRAFFIC_CLASS"] == str(qos.roce_tos) == "106"   # DSCP 26 << 2 | ECT(0)
    assert env["NCCL_IB_GID_INDEX"] == env["UCX_IB_GID_INDEX"] == "3"
    assert env["NCCL_IB_ROCE_VERSION_NUM"] == "2"
    needed = analyse(fabric, AnalysisOptions()).summary["qps_needed"]
    assert env["NCCL_IB_QPS_PER_CONNECTION"] == str(needed or 1)


def test_pfc_only_site_sends_no_ecn_bits():
    assert _env("pfc1")["NCCL_IB_TC"] == "104"


def test_dc2_uses_its_own_roce_dscp():
    fabric = compile_site(REPO / "inventory" / "dc2")
    qos = fabric.servers()[0].nics[0].qos
    assert _env("dc2")["NCCL_IB_TC"] == str(qos.roce_dscp << 2 | 2)


def test_shell_form_is_one_export_per_variable():
    text = as_shell(nccl_environment(compile_site(REPO / "inventory" / "dc1")))
    exports = [ln for ln in text.splitlines() if not ln.startswith("#")]
    assert exports[0] == "export NCCL_IB_TC=106" and all(ln.startswith("export ") for ln in exports)


def test_a_site_without_servers_has_nothing_to_export():
    fabric = compile_site(REPO / "inventory" / "dc1")
    bare = fabric.model_copy(update={"devices": {n: d for n, d in fabric.devices.items() if d.role != "gpu"}})
    with pytest.raises(ValueError, match="no GPU server NICs"):
        nccl_environment(bare)


def test_cli_writes_nccl_env(tmp_path, capsys):
    from nr_run.cli.main import main

    out = tmp_path / "out"
    assert main(["export", "nccl", "--site", "dc1", "--inventory-dir", str(REPO / "inventory"), "--out", str(out),
                 "--json"]) == 0
    text = (out / "nccl.env").read_text()
    assert "export NCCL_IB_TC=106\n" in text and "export UCX_IB_GID_INDEX=3\n" in text
