"""`nr-run export slurm|k8s-labels`: the files a scheduler learns the fabric from, for all three shapes.

The Slurm test feeds topology.conf to Slurm's own parser: a slurmctld on loopback reads it at start and
`scontrol show topology` reads it back (Debian's slurmctld and slurm-client, installed by .ci/run)."""

from __future__ import annotations

import getpass
import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from nr_run.cli.main import main
from nr_run.intent import compile_site
from nr_run.runbooks.export import exporter
from nr_run.runbooks.export.placement import collapse
from tests.conftest import REPO

SITES = {s: REPO / "inventory" / s for s in ("dc1", "star1", "mz1")}


def test_hostlists_collapse_as_slurm_writes_them() -> None:
    assert collapse(["gpu1", "gpu2", "gpu3", "gpu7"]) == "gpu[1-3,7]"
    assert collapse(["n01", "n02", "n03", "n07"]) == "n[01-03,07]"
    assert collapse(["z1-gpu1", "z2-gpu1", "lone"]) == "lone,z1-gpu1,z2-gpu1"


def test_tree_levels_follow_the_shape() -> None:
    trees = {s: exporter("slurm")(compile_site(p))["topology.conf"] for s, p in SITES.items()}
    lines = {s: [ln.split("  #")[0] for ln in t.splitlines() if not ln.startswith("#")] for s, t in trees.items()}
    assert lines["star1"] == ["SwitchName=su1 Nodes=gpu[1-3] LinkSpeed=1600"]
    assert lines["dc1"][-1] == "SwitchName=dc1-spine Switches=su[1-2] LinkSpeed=1600"
    assert lines["mz1"] == [
        "SwitchName=z1-su1 Nodes=z1-gpu[1-2] LinkSpeed=800", "SwitchName=z2-su1 Nodes=z2-gpu[1-2] LinkSpeed=800",
        "SwitchName=z1 Switches=z1-su1 LinkSpeed=1600", "SwitchName=z2 Switches=z2-su1 LinkSpeed=1600",
        "SwitchName=mz1-aggregation Switches=z[1-2] LinkSpeed=1600"]
    assert "# CTSWs z2-ctsw1, z2-ctsw2" in trees["mz1"] and "# ATSWs atsw1, atsw2" in trees["mz1"]
    block = exporter("slurm")(compile_site(SITES["mz1"]))["topology-block.conf"]
    assert "BlockName=z2-su1 Nodes=z2-gpu[1-2]" in block


def test_k8s_labels_name_block_spine_and_zone() -> None:
    text = exporter("k8s-labels")(compile_site(SITES["mz1"]))["k8s-node-labels.yaml"]
    nodes = {d["metadata"]["name"]: d["metadata"]["labels"] for d in yaml.safe_load_all(text)}
    assert sorted(nodes) == ["z1-gpu1", "z1-gpu2", "z2-gpu1", "z2-gpu2"]
    assert nodes["z2-gpu1"]["network.topology.nvidia.com/block"] == "z2-su1"
    assert nodes["z2-gpu1"]["network.topology.nvidia.com/spine"] == "z2"
    assert nodes["z2-gpu1"]["fabric.nr-run.io/zone"] == "z2"


def test_cli_writes_the_files_and_refuses_an_unknown_kind(tmp_path: Path, capsys) -> None:
    common = ["--site", "mz1", "--inventory-dir", str(REPO / "inventory"), "--out", str(tmp_path), "--json"]
    assert main(["export", "slurm", *common]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sorted(Path(f).name for f in out["files"]) == ["topology-block.conf", "topology.conf"]
    assert (tmp_path / "topology.conf").read_text().startswith("# Slurm topology/tree")
    assert main(["export", "no-such-kind", *common]) == 3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("site", sorted(SITES))
def test_slurm_parses_the_tree_and_shows_it_back(site: str, tmp_path: Path) -> None:
    missing = [b for b in ("slurmctld", "scontrol") if shutil.which(b) is None]
    if missing:
        pytest.skip(f"Slurm's {', '.join(missing)} not installed here (apt-get install slurmctld slurm-client; "
                    ".ci/run installs them)")
    intent = compile_site(SITES[site])
    (tmp_path / "topology.conf").write_text(exporter("slurm")(intent)["topology.conf"])
    servers = sorted(d.name for d in intent.servers())
    ctld, slurmd = _free_port(), _free_port()
    (tmp_path / "state").mkdir()
    conf = tmp_path / "slurm.conf"
    conf.write_text("\n".join([
        "ClusterName=nrrun", "SlurmctldHost=localhost(127.0.0.1)", f"SlurmctldPort={ctld}", f"SlurmdPort={slurmd}",
        "AuthType=auth/none", "CredType=cred/none", f"SlurmUser={getpass.getuser()}",
        f"StateSaveLocation={tmp_path / 'state'}", f"SlurmdSpoolDir={tmp_path / 'spool'}",
        f"SlurmctldPidFile={tmp_path / 'slurmctld.pid'}", f"SlurmctldLogFile={tmp_path / 'slurmctld.log'}",
        "TopologyPlugin=topology/tree", "SelectType=select/cons_tres", "ProctrackType=proctrack/linuxproc",
        "MpiDefault=none", "MailProg=/bin/true",
        f"NodeName={','.join(servers)} NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN",
        "PartitionName=all Nodes=ALL Default=YES State=UP", ""]))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    daemon = subprocess.Popen(["slurmctld", "-D", "-f", str(conf)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        shown = None
        for _ in range(100):
            proc = subprocess.run(["scontrol", "show", "topology"], env=env, capture_output=True, text=True,
                                  timeout=10)
            if proc.returncode == 0 and "SwitchName=" in proc.stdout:
                shown = proc.stdout
                break
            if daemon.poll() is not None:
                break
            time.sleep(0.1)
        log = (tmp_path / "slurmctld.log").read_text() if (tmp_path / "slurmctld.log").exists() else ""
        assert shown is not None, log[-2000:]
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
    switches = {}
    for line in shown.splitlines():
        fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
        switches[fields["SwitchName"]] = fields
    written = [ln.split()[0].split("=", 1)[1] for ln in (tmp_path / "topology.conf").read_text().splitlines()
               if ln.startswith("SwitchName=")]
    assert sorted(switches) == sorted(written)
    top = max(switches.values(), key=lambda f: int(f["Level"]))
    expanded = subprocess.run(["scontrol", "show", "hostnames", top["Nodes"]], env=env, capture_output=True,
                              text=True, timeout=10).stdout.split()
    assert sorted(expanded) == servers                      # the top of the tree holds every server
    # the topology plugin logs what it could not place (a node in no switch, a switch without children)
    assert not [ln for ln in log.splitlines() if "error" in ln.lower() and ("switch" in ln.lower() or "topolog" in ln.lower())], log[-2000:]
