"""Generate a large rail-optimized site inventory (used by the scale test and the benchmarks)."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from tests.conftest import DC1


def generate_site(path: Path, rtsw: int = 512, ctsw: int = 16, nics: int = 8, sonic_every: int = 2,
                  site: str = "big") -> Path:
    """Write a site with `rtsw` RTSWs (units of `nics` RTSWs), `ctsw` CTSWs and 1:1 servers.

    Every RTSW has `ctsw` 400G uplinks and `ctsw` host ports, so each unit holds `ctsw` servers
    of `nics` NICs. Every `sonic_every`-th RTSW runs SONiC, the rest EOS.
    """
    assert rtsw % nics == 0, "RTSWs come in whole scalable units"
    fabric = yaml.safe_load((DC1 / "fabric.yaml").read_text())
    fabric["site"] = site
    fabric["lab"] = True
    fabric["pools"] = {
        "loopback": {"ctsw": "10.255.0.0/24", "rtsw": "10.254.0.0/20"},
        "fabric_p2p": "10.128.0.0/12",
        "host_p2p": "10.64.0.0/12",
    }
    hw = fabric["hardware"]
    hw["eos-ctsw"]["ports"] = rtsw
    for name in ("eos-rtsw", "sonic-rtsw"):
        hw[name]["ports"] = 2 * ctsw
        hw[name]["uplinks"] = {"from": 0, "count": ctsw}
        hw[name]["downlinks"] = {"from": ctsw}
    gpu = copy.deepcopy(hw["gpu-2nic"])
    gpu["ports"] = nics
    hw["gpu"] = gpu
    del hw["gpu-2nic"]
    fabric["cabling"]["overrides"] = []
    # one management network holding every generated address (172.16-19.x) and its gateway
    fabric["management"] = {"prefix_length": 14, "gateway": "172.19.255.254"}
    hosts: dict[str, dict] = {}
    for i in range(1, ctsw + 1):
        hosts[f"ctsw{i}"] = {"hostname": f"172.16.0.{i}", "groups": ["ctsw", "eos"],
                             "data": {"role": "ctsw", "index": i, "hardware": "eos-ctsw"}}
    for n in range(rtsw):
        su, index = n // nics + 1, n % nics + 1
        sonic = sonic_every and n % sonic_every == sonic_every - 1
        hosts[f"rtsw{n + 1}"] = {
            "hostname": f"172.17.{n // 250}.{n % 250 + 1}", "groups": ["rtsw", "sonic" if sonic else "eos"],
            "data": {"role": "rtsw", "su": su, "index": index, "hardware": "sonic-rtsw" if sonic else "eos-rtsw"}}
    servers = rtsw // nics * ctsw
    for n in range(servers):
        su, index = n // ctsw + 1, n % ctsw + 1
        hosts[f"gpu{n + 1}"] = {"hostname": f"172.18.{n // 250}.{n % 250 + 1}", "groups": ["gpu"],
                                "data": {"role": "gpu", "su": su, "index": index, "hardware": "gpu"}}
    target = path / site
    target.mkdir(parents=True, exist_ok=True)
    for name in ("groups.yaml", "defaults.yaml"):
        (target / name).write_text((DC1 / name).read_text().replace("site: dc1", f"site: {site}"))
    (target / "fabric.yaml").write_text(yaml.safe_dump(fabric, sort_keys=False))
    (target / "hosts.yaml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    return target
