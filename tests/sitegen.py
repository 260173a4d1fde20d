"""Generate a large rail-optimized site inventory (used by the scale test and the benchmarks)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
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


# ---- small sites across every axis of the inventory format (generated-site property test, soak) ----------

@dataclass(frozen=True)
class SmallSite:
    """Every choice a generated small site makes; tests/test_generated_sites.py draws them with hypothesis."""

    ctsw_platforms: tuple[str, ...] = ("eos", "eos")          # one per CTSW
    rtsw_platforms: tuple[str, ...] = ("eos", "sonic")        # one per RTSW, units of `rails` RTSWs
    rails: int = 1                                           # RTSWs per unit = compute NICs per server
    servers_per_unit: int = 1
    storage_nics: int = 0                                    # server ports beside the compute NICs
    uplinks_last: bool = False                               # RTSW port layout: uplinks after the host ports
    sonic_lanes: int = 8                                     # 8: Ethernet0, 8, 16...; 4: Ethernet0, 4, 8...
    eos_ports: int = 16
    fabric_speed: str = "400G"
    host_speed: str = "100G"
    nic_speed: str | None = None                             # None: the host link speed
    fabric_cable_m: int = 30
    host_cable_m: int = 3
    change_uplink_m: int | None = None                       # override: a new length for rtsw1's first uplink
    remove_uplink: bool = False                              # override: drop the last RTSW's last uplink
    add_uplink: bool = False                                 # override: a second link rtsw1 <-> ctsw1
    remove_rail: bool = False                                # override: drop the last server's last NIC link
    host_mtu: int | None = None                              # per-host MTU of the first server
    alt_profile_host: bool = False                           # first server uses a second RoCE profile
    asn4: bool = False
    pool_seed: int = 0                                       # where the pools sit (disjoint)
    overlap_pools: bool = False                              # host_p2p = fabric_p2p: preflight must refuse
    lossless: tuple[int, ...] = (3,)
    cnp_tc: int = 6
    ecn: bool = True
    ecn_kbytes: tuple[int, int] = (150, 1500)
    watchdog: bool = True
    watchdog_action: str = "drop"
    watchdog_ms: tuple[int, int] = (200, 400)
    max_oversubscription: float = 64.0
    site: str = "gen"


def _switch_hw(platform: str, spec: SmallSite, ports_needed: int, uplinks: int, role: str) -> dict:
    speed = max((spec.fabric_speed, spec.host_speed), key=lambda s: int(s[:-1]))
    if platform == "sonic":
        # a real 400G RoCE HWSKU: its port table has a port every 4 names, so a step of 4 uses both 400G halves
        # of each cage and a step of 8 one half. The Tomahawk 5 SKU's headroom table has 400G rows only, so a
        # site with other link speeds runs the Spectrum-4 SKU, whose table has a row from 10G to 800G.
        only_400g = {spec.fabric_speed, spec.host_speed, spec.nic_speed or spec.host_speed} == {"400G"}
        model, platform_id, asic = (("Arista-7060X6-64PE-O128S2", "x86_64-arista_7060x6_64pe", "th5") if only_400g
                                    else ("Mellanox-SN5600-O128", "x86_64-nvidia_sn5600-r0", "spc4"))
        hw = {"platform": "sonic", "model": model, "platform_id": platform_id,
              "asic": asic, "port_name": "Ethernet{n}", "first_port": 0, "port_step": spec.sonic_lanes,
              "lanes_per_port": 4, "ports": 32, "speed": speed, "fec": "rs", "buffer_cell_bytes": 254}
    else:
        hw = {"platform": "eos", "model": "cEOSLab", "port_name": "Ethernet{n}", "first_port": 1,
              "ports": max(spec.eos_ports, ports_needed), "speed": speed}
    if role == "ctsw":
        hw["downlinks"] = {"from": 0}
        return hw
    ports = hw["ports"]
    # one spare slot beside the uplinks: room for an added link
    if spec.uplinks_last:
        hw["uplinks"] = {"from": ports - uplinks - 1, "count": uplinks}
        hw["downlinks"] = {"from": 0, "count": ports - uplinks - 1}
    else:
        hw["uplinks"] = {"from": 0, "count": uplinks}
        hw["downlinks"] = {"from": uplinks + 1}
    return hw


def _roce_profile(spec: SmallSite) -> dict:
    mapping = {26: spec.lossless[0], 48: spec.cnp_tc}
    if len(spec.lossless) > 1:
        mapping[24] = spec.lossless[1]
    queues = [{"queue": spec.cnp_tc, "type": "strict"}]
    weight = 100 // (len(spec.lossless) + 1)
    queues += [{"queue": q, "type": "dwrr", "weight": weight} for q in spec.lossless]
    queues += [{"queue": 0, "type": "dwrr", "weight": weight}]
    detection, restoration = spec.watchdog_ms
    return {"trust": "dscp", "default_tc": 0, "dscp_to_tc": mapping, "lossless_priorities": list(spec.lossless),
            "cnp": {"dscp": 48, "tc": spec.cnp_tc},
            "ecn": {"enabled": spec.ecn, "queue": spec.lossless[0], "min_kbytes": spec.ecn_kbytes[0],
                    "max_kbytes": spec.ecn_kbytes[1], "max_mark_probability": 20},
            "schedulers": queues,
            "pfc_watchdog": {"enabled": spec.watchdog, "detection_ms": detection, "restoration_ms": restoration,
                             "poll_ms": 100, "action": spec.watchdog_action}}


def write_small_site(path: Path, spec: SmallSite) -> Path:
    """Write `spec` as inventory/<site>/ files under `path`; returns the site folder."""
    n_ctsw, n_rtsw = len(spec.ctsw_platforms), len(spec.rtsw_platforms)
    assert n_rtsw % spec.rails == 0, "RTSWs come in whole units"
    units = n_rtsw // spec.rails
    base = 10 + 4 * (spec.pool_seed % 50)
    pools = {"loopback": {"ctsw": f"10.{base}.0.0/26", "rtsw": f"10.{base}.1.0/24"},
             "fabric_p2p": f"10.{base + 1}.0.0/16", "host_p2p": f"10.{base + 2}.0.0/16"}
    if spec.overlap_pools:
        pools["host_p2p"] = pools["fabric_p2p"]
    hardware: dict[str, dict] = {}
    for platform in sorted(set(spec.ctsw_platforms)):
        hardware[f"{platform}-ctsw"] = _switch_hw(platform, spec, n_rtsw + 2, 0, "ctsw")
    for platform in sorted(set(spec.rtsw_platforms)):
        hardware[f"{platform}-rtsw"] = _switch_hw(platform, spec, n_ctsw + 2 + spec.servers_per_unit, n_ctsw, "rtsw")
    hardware["gpu"] = {"platform": "linux", "port_name": "eth{n}", "first_port": 1,
                       "ports": spec.rails + spec.storage_nics, "speed": spec.nic_speed or spec.host_speed,
                       "downlinks": {"from": 0, "count": spec.rails}}
    hosts: dict[str, dict] = {}
    for i, platform in enumerate(spec.ctsw_platforms, 1):
        hosts[f"ctsw{i}"] = {"hostname": f"172.30.20.{10 + i}", "groups": ["ctsw", platform],
                             "data": {"role": "ctsw", "index": i, "hardware": f"{platform}-ctsw"}}
    for n, platform in enumerate(spec.rtsw_platforms):
        hosts[f"rtsw{n + 1}"] = {"hostname": f"172.30.20.{50 + n}", "groups": ["rtsw", platform],
                                 "data": {"role": "rtsw", "su": n // spec.rails + 1, "index": n % spec.rails + 1,
                                          "hardware": f"{platform}-rtsw"}}
    n_servers = units * spec.servers_per_unit
    for n in range(n_servers):
        data: dict = {"role": "gpu", "su": n // spec.servers_per_unit + 1, "index": n % spec.servers_per_unit + 1,
                      "hardware": "gpu"}
        if n == 0 and spec.host_mtu is not None:
            data["mtu"] = spec.host_mtu
        if n == 0 and spec.alt_profile_host:
            data["roce_profile"] = "roce-alt"
        hosts[f"gpu{n + 1}"] = {"hostname": f"172.30.20.{150 + n}", "groups": ["gpu"], "data": data}

    def port(device: str, slot: int) -> str:
        hw = hardware[hosts[device]["data"]["hardware"]]
        return hw["port_name"].format(n=hw["first_port"] + slot * hw.get("port_step", 1))

    rtsw_hw = hardware[f"{spec.rtsw_platforms[0]}-rtsw"]
    overrides: list[dict] = []
    if spec.change_uplink_m is not None:
        overrides.append({"a": f"rtsw1:{port('rtsw1', rtsw_hw['uplinks']['from'])}", "b": f"ctsw1:{port('ctsw1', 0)}",
                          "cable_length_m": spec.change_uplink_m})
    if spec.add_uplink:
        spare = rtsw_hw["uplinks"]["from"] + n_ctsw if not spec.uplinks_last else rtsw_hw["ports"] - 1
        overrides.append({"a": f"rtsw1:{port('rtsw1', spare)}", "b": f"ctsw1:{port('ctsw1', n_rtsw + 1)}",
                          "speed": spec.fabric_speed, "cable_length_m": spec.fabric_cable_m, "add": True})
    if spec.remove_uplink and n_ctsw > 1:
        last = f"rtsw{n_rtsw}"
        hw = hardware[hosts[last]["data"]["hardware"]]
        overrides.append({"a": f"{last}:{port(last, hw['uplinks']['from'] + n_ctsw - 1)}", "remove": True})
    if spec.remove_rail:
        overrides.append({"a": f"gpu{n_servers}:{port(f'gpu{n_servers}', spec.rails - 1)}", "remove": True})
    profile = _roce_profile(spec)
    fabric = {
        "site": spec.site, "lab": True,
        "asn": {"ctsw": 4200000000, "rtsw_base": 4200000101} if spec.asn4 else {"ctsw": 65000, "rtsw_base": 65001},
        "pools": pools, "hardware": hardware,
        "roles": {"ctsw": {"mtu": 9214, "roce_profile": "roce"}, "rtsw": {"mtu": 9214, "roce_profile": "roce"},
                  "gpu": {"mtu": 9000, "roce_profile": "roce"}},
        "cabling": {"rules": [
            {"type": "leaf-spine", "leaf_role": "rtsw", "spine_role": "ctsw", "speed": spec.fabric_speed,
             "cable_length_m": spec.fabric_cable_m},
            {"type": "rail", "server_role": "gpu", "leaf_role": "rtsw", "speed": spec.host_speed,
             "cable_length_m": spec.host_cable_m}], "overrides": overrides},
        "management": {"prefix_length": 24, "gateway": "172.30.20.1"},
        "bgp": {"peer_group": "FABRIC", "bfd": True, "maximum_paths": 16, "keepalive": 3, "holdtime": 9},
        "policy": {"max_oversubscription": spec.max_oversubscription, "min_ctsw": 1},
        "roce_profiles": {"roce": profile, "roce-alt": profile},
    }
    target = path / spec.site
    target.mkdir(parents=True, exist_ok=True)
    (target / "groups.yaml").write_text((DC1 / "groups.yaml").read_text())
    (target / "defaults.yaml").write_text(f"data:\n  site: {spec.site}\n")
    (target / "fabric.yaml").write_text(yaml.safe_dump(fabric, sort_keys=False))
    (target / "hosts.yaml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    return target
