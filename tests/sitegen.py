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
    shape: str = "clos"                                      # star: no CTSWs; multi-zone: `zones` copies + ATSWs
    zones: int = 1                                           # multi-zone: zones built (each like the clos above)
    atsw_platforms: tuple[str, ...] = ("eos", "eos")         # multi-zone: one per ATSW (EOS: sonic-aggregation)
    nics_per_leaf: int = 1                                   # star: NICs of a server on each switch
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
    if spec.shape != "clos":
        return write_shaped_site(path, spec)
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
        # ECN off is a PFC-only design: the NICs run DCQCN off too (a mixed site is refused)
        **({} if spec.ecn else {"nic": {"congestion_control": "pfc-only"}}),
    }
    target = path / spec.site
    target.mkdir(parents=True, exist_ok=True)
    (target / "groups.yaml").write_text((DC1 / "groups.yaml").read_text())
    (target / "defaults.yaml").write_text(f"data:\n  site: {spec.site}\n")
    (target / "fabric.yaml").write_text(yaml.safe_dump(fabric, sort_keys=False))
    (target / "hosts.yaml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    return target


def write_shaped_site(path: Path, spec: SmallSite, room: SmallSite | None = None) -> Path:
    """A star (no CTSWs; `nics_per_leaf` NICs of each server on each of a unit's `rails` switches) or a
    multi-zone site (`zones` zones, each with the CTSWs, RTSWs and servers of `spec`, plus ATSWs), with a plan
    (and port blocks) whose capacities leave room for one more zone, unit, server, CTSW and ATSW than `room`
    builds (default: `spec`), so a site and its grown copy can share one plan."""
    star = spec.shape == "star"
    n_rtsw = len(spec.rtsw_platforms)
    assert n_rtsw % spec.rails == 0, "RTSWs come in whole units"
    units = n_rtsw // spec.rails
    zones = 1 if star else spec.zones
    per_leaf = spec.nics_per_leaf if star else 1
    cap = room or spec
    cap_ctsw = 0 if star else len(cap.ctsw_platforms)
    cap_atsw = 0 if star else len(cap.atsw_platforms)
    plan = {"zones": (1 if star else cap.zones + 1), "units_per_zone": len(cap.rtsw_platforms) // cap.rails + 1,
            "rtsw_per_unit": spec.rails, "ctsw_per_zone": cap_ctsw + 1}
    if not star:
        plan["atsw"] = cap_atsw + 1
    leaves_per_zone = 1 << max(0, plan["units_per_zone"] * spec.rails - 1).bit_length()
    base = 10 + 4 * (spec.pool_seed % 50)
    pools: dict = {"loopback": {"rtsw": f"10.{base}.1.0/24"}, "host_p2p": f"10.{base + 2}.0.0/16"}
    if not star:
        pools["loopback"]["ctsw"] = f"10.{base}.0.0/26"
        pools["loopback"]["atsw"] = f"10.{base}.0.64/26"
        pools["fabric_p2p"] = f"10.{base + 1}.0.0/16"
    if spec.overlap_pools:
        pools["host_p2p"] = pools.get("fabric_p2p", pools["loopback"]["rtsw"])
    host_slots = (cap.servers_per_unit + 1) * per_leaf
    hardware: dict[str, dict] = {}
    for platform in sorted(set(cap.rtsw_platforms) | {"eos", "sonic"}):
        hw = _switch_hw(platform, cap, cap_ctsw + 3 + host_slots, max(cap_ctsw, 1), "rtsw")
        hw["uplinks"] = {"from": 0, "count": cap_ctsw + 1}
        hw["downlinks"] = {"from": cap_ctsw + 1, "count": min(host_slots, hw["ports"] - cap_ctsw - 1)}
        hardware[f"{platform}-rtsw"] = hw
    for platform in sorted(set(() if star else cap.ctsw_platforms) | ({"eos", "sonic"} if not star else set())):
        hw = _switch_hw(platform, cap, leaves_per_zone + cap_atsw + 1, 0, "ctsw")
        hw["downlinks"] = {"from": 0, "count": leaves_per_zone}
        hw["uplinks"] = {"from": leaves_per_zone, "count": cap_atsw + 1}
        hardware[f"{platform}-ctsw"] = hw
    for platform in sorted(set(() if star else cap.atsw_platforms) | ({"eos", "sonic"} if not star else set())):
        hw = _switch_hw(platform, spec, plan["zones"] * plan["ctsw_per_zone"], 0, "ctsw")
        hardware[f"{platform}-atsw"] = hw
    nics = spec.rails * per_leaf
    hardware["gpu"] = {"platform": "linux", "port_name": "eth{n}", "first_port": 1,
                       "ports": nics + spec.storage_nics, "speed": spec.nic_speed or spec.host_speed,
                       "downlinks": {"from": 0, "count": nics}}
    hosts: dict[str, dict] = {}
    address = iter(range(10, 4000))

    def add(name: str, group: list[str], data: dict) -> None:
        n = next(address)
        hosts[name] = {"hostname": f"172.30.{20 + n // 250}.{n % 250 + 2}", "groups": group, "data": data}

    for i, platform in enumerate(() if star else spec.atsw_platforms, 1):
        add(f"atsw{i}", ["atsw", platform], {"role": "atsw", "index": i, "hardware": f"{platform}-atsw"})
    for zone in range(1, zones + 1):
        prefix = f"z{zone}-" if not star else ""
        where = {"zone": zone} if not star else {}
        for i, platform in enumerate(() if star else spec.ctsw_platforms, 1):
            add(f"{prefix}ctsw{i}", ["ctsw", platform],
                {"role": "ctsw", **where, "index": i, "hardware": f"{platform}-ctsw"})
        for n, platform in enumerate(spec.rtsw_platforms):
            add(f"{prefix}rtsw{n + 1}", ["rtsw", platform],
                {"role": "rtsw", **where, "su": n // spec.rails + 1, "index": n % spec.rails + 1,
                 "hardware": f"{platform}-rtsw"})
        for n in range(units * spec.servers_per_unit):
            data: dict = {"role": "gpu", **where, "su": n // spec.servers_per_unit + 1,
                          "index": n % spec.servers_per_unit + 1, "hardware": "gpu"}
            if n == 0 and zone == 1 and spec.host_mtu is not None:
                data["mtu"] = spec.host_mtu
            add(f"{prefix}gpu{data['su']}-{data['index']}", ["gpu"], data)     # named by place: stable as it grows
    asn = ({"atsw": 4199999000, "ctsw": 4200000000, "rtsw_base": 4200000101} if spec.asn4
           else {"atsw": 64900, "ctsw": 64910, "rtsw_base": 65001})
    if star:
        del asn["atsw"], asn["ctsw"]
    rules: list[dict] = [{"type": "rail", "server_role": "gpu", "leaf_role": "rtsw", "speed": spec.host_speed,
                          "cable_length_m": spec.host_cable_m, "nics_per_leaf": per_leaf}]
    roles = {"rtsw": {"mtu": 9214, "roce_profile": "roce"}, "gpu": {"mtu": 9000, "roce_profile": "roce"}}
    if not star:
        rules += [{"type": "leaf-spine", "speed": spec.fabric_speed, "cable_length_m": spec.fabric_cable_m},
                  {"type": "spine-aggregation", "speed": spec.fabric_speed,
                   "cable_length_m": spec.change_uplink_m or spec.fabric_cable_m}]
        roles |= {"ctsw": {"mtu": 9214, "roce_profile": "roce"}, "atsw": {"mtu": 9214, "roce_profile": "roce"}}
    profile = _roce_profile(spec)
    fabric = {
        "site": spec.site, "lab": True, "shape": spec.shape, "plan": plan, "asn": asn,
        "pools": pools, "hardware": hardware, "roles": roles,
        "cabling": {"rules": rules},
        "management": {"prefix_length": 16, "gateway": "172.30.0.1"},
        "bgp": {"peer_group": "FABRIC", "bfd": True, "maximum_paths": 16, "keepalive": 3, "holdtime": 9},
        "policy": {"max_oversubscription": spec.max_oversubscription, "min_ctsw": 0 if star else 1,
                   **({} if star else {"cross_zone_oversubscription": 64.0})},
        "roce_profiles": {"roce": profile},
        **({} if spec.ecn else {"nic": {"congestion_control": "pfc-only"}}),
    }
    target = path / spec.site
    target.mkdir(parents=True, exist_ok=True)
    groups = yaml.safe_load((DC1 / "groups.yaml").read_text())
    groups["atsw"] = {"data": {"tier": "aggregation"}}
    (target / "groups.yaml").write_text(yaml.safe_dump(groups, sort_keys=False))
    (target / "defaults.yaml").write_text(f"data:\n  site: {spec.site}\n")
    (target / "fabric.yaml").write_text(yaml.safe_dump(fabric, sort_keys=False))
    (target / "hosts.yaml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    return target


def generate_zoned_site(path: Path, zones: int, units: int, atsw: int, servers: int = 16, rails: int = 8,
                        ctsw: int = 16, sonic_every: int = 2, site: str = "zoned") -> Path:
    """Write a multi-zone site: `zones` zones of `units` units (`rails` RTSWs, `servers` servers of `rails` NICs
    each), `ctsw` CTSWs per zone (every RTSW has one 400G uplink to each) and `atsw` ATSWs (every CTSW has one
    uplink to each). Every `sonic_every`-th RTSW runs SONiC, the rest EOS; CTSWs and ATSWs are EOS chassis."""
    fabric = yaml.safe_load((DC1 / "fabric.yaml").read_text())
    per_zone = 1 << max(0, units * rails - 1).bit_length()
    hw = fabric["hardware"]
    rtsw_ports = {"from": 0, "count": ctsw}, {"from": ctsw, "count": servers}
    for name in ("eos-rtsw", "sonic-rtsw"):
        hw[name]["ports"] = ctsw + servers
        hw[name]["uplinks"], hw[name]["downlinks"] = rtsw_ports
    hw["eos-ctsw"].update(ports=per_zone + atsw, downlinks={"from": 0, "count": per_zone},
                          uplinks={"from": per_zone, "count": atsw})
    hw["eos-atsw"] = {**hw["eos-ctsw"], "ports": zones * ctsw, "downlinks": {"from": 0}}
    del hw["eos-atsw"]["uplinks"]
    gpu = copy.deepcopy(hw["gpu-2nic"])
    gpu["ports"] = rails
    hw["gpu"] = gpu
    del hw["gpu-2nic"]
    fabric.update(
        site=site, lab=True, shape="multi-zone",
        plan={"zones": zones, "units_per_zone": units, "rtsw_per_unit": rails, "ctsw_per_zone": ctsw, "atsw": atsw},
        asn={"atsw": 4199999999, "ctsw": 4200000000, "rtsw_base": 4200001000},
        pools={"loopback": {"atsw": "10.255.0.0/24", "ctsw": "10.255.16.0/20", "rtsw": "10.254.0.0/16"},
               "fabric_p2p": "10.128.0.0/11", "host_p2p": "10.64.0.0/11"},
        management={"prefix_length": 12, "gateway": "172.31.255.254"})
    fabric["roles"]["atsw"] = dict(fabric["roles"]["ctsw"])
    fabric["cabling"] = {"rules": [
        {"type": "rail", "speed": "400G", "cable_length_m": 3},
        {"type": "leaf-spine", "speed": "400G", "cable_length_m": 30},
        {"type": "spine-aggregation", "speed": "400G", "cable_length_m": 500}]}
    fabric["policy"] = {"max_oversubscription": 1.0, "min_ctsw": 1, "cross_zone_oversubscription": 64.0}
    fabric["bgp"]["maximum_paths"] = max(64, ctsw, atsw)
    hosts: dict[str, dict] = {}
    count = iter(range(1, 1 << 20))

    def add(name: str, groups: list[str], data: dict) -> None:
        n = next(count)
        hosts[name] = {"hostname": f"172.{16 + n // (254 * 256)}.{n // 254 % 256}.{n % 254 + 1}",
                       "groups": groups, "data": data}

    for i in range(1, atsw + 1):
        add(f"atsw{i}", ["eos"], {"role": "atsw", "index": i, "hardware": "eos-atsw"})
    n_rtsw = 0
    for z in range(1, zones + 1):
        for i in range(1, ctsw + 1):
            add(f"z{z}-ctsw{i}", ["ctsw", "eos"], {"role": "ctsw", "zone": z, "index": i, "hardware": "eos-ctsw"})
        for su in range(1, units + 1):
            for i in range(1, rails + 1):
                n_rtsw += 1
                sonic = sonic_every and n_rtsw % sonic_every == 0
                add(f"z{z}-su{su}-rtsw{i}", ["rtsw", "sonic" if sonic else "eos"],
                    {"role": "rtsw", "zone": z, "su": su, "index": i, "hardware": "sonic-rtsw" if sonic else "eos-rtsw"})
            for i in range(1, servers + 1):
                add(f"z{z}-su{su}-gpu{i}", ["gpu"], {"role": "gpu", "zone": z, "su": su, "index": i, "hardware": "gpu"})
    target = path / site
    target.mkdir(parents=True, exist_ok=True)
    for name in ("groups.yaml", "defaults.yaml"):
        (target / name).write_text((DC1 / name).read_text().replace("site: dc1", f"site: {site}"))
    (target / "fabric.yaml").write_text(yaml.safe_dump(fabric, sort_keys=False))
    (target / "hosts.yaml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    return target
