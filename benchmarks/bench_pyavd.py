"""nr-run against Arista AVD (pyavd 6.4) on the same generated all-EOS two-tier fabric: CPU per device.

Two comparisons, each side and size in a fresh process, imports counted on both sides:
- core: pyavd's get_avd_facts + get_device_structured_config + get_device_config per device against nr-run's
  compile + render of the same switches (library calls, no NIC scripts);
- whole: pyavd with validate_inputs too, against `nr-run render` in-process as a user runs it (compile, platform
  preflight, the safety proofs, every switch and every GPU server's NIC script, files), divided by the switches
  only (the proofs and NIC scripts are work AVD does not do).

AVD side: the same fabric as AVD's own structured input (eos_designs; not timed: it is what a user keeps in
group_vars/host_vars), then what pyavd's documented pipeline runs: `validate_inputs` per device,
`get_avd_facts` over all devices, and per device `get_device_structured_config` + `get_device_config`; its
imports counted too. AVD's design is l3ls-evpn; here with `overlay_routing_protocol: none` (no EVPN, no VTEP)
and an eBGP underlay, which is what nr-run builds. Modelled as closely as eos_designs allows:
- CTSWs are `spine` nodes (one ASN), RTSWs `l3leaf` nodes in one node group each (own ASN, nr-run's); uplinks
  to every spine with the peer ports nr-run cabled (`uplink_switch_interfaces`), /31s from `uplink_ipv4_pool`
  (AVD numbers them itself), loopbacks from AVD's pools.
- GPU-facing routed ports as node `l3_interfaces` with nr-run's /31 addresses (eos_designs has no host blocks).
- QoS as nr-run's RoCE profile: a `qos_profiles` entry (trust dscp, PFC no-drop priorities with the watchdog,
  tx-queue DWRR/strict, ECN thresholds) on every fabric and host port (`p2p_uplinks_qos_profile`,
  `l3_interfaces[].qos_profile`), the DSCP -> traffic-class map and the global PFC watchdog, both through
  `custom_structured_configuration_` (eos_designs has no input of its own for them).
Differences left: AVD adds its own defaults (aaa, transceiver, vlan internal order, update wait-install), has
no prefix-list of host blocks (redistributes connected unfiltered here), renders BGP timers/BFD by peer group.

    .venv/bin/pip install -e ".[bench-avd]"     (pyavd 6.4.0: benchmark only, never a runtime dependency)
    .venv/bin/python benchmarks/bench_pyavd.py [--sizes 64,256,1024]
    .venv/bin/python benchmarks/bench_pyavd.py --one avd:256       (one side, one size, one line of JSON)
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.render_timing import cpu_s, render_in_process  # noqa: E402

CTSW = 16
TARGET = 40.0          # nr-run at least this many times less CPU per device


_cpu = cpu_s


def _site(tmp: Path, switches: int) -> Path:
    from tests.sitegen import generate_site

    return generate_site(tmp, rtsw=switches - CTSW, ctsw=CTSW, sonic_every=0)


def _roce_qos(roce: Any) -> dict[str, Any]:
    """nr-run's RoCE profile as an eos_cli_config_gen qos_profiles entry."""
    wd = roce.watchdog
    queues = []
    for s in roce.schedulers:
        q: dict[str, Any] = {"id": s.queue, "priority": "priority strict" if s.type == "strict" else "no priority"}
        if s.type != "strict":
            q["bandwidth_percent"] = s.weight
        if roce.ecn.enabled and s.queue == roce.ecn.queue:
            q["random_detect"] = {"ecn": {"count": True, "threshold": {
                "units": "bytes", "min": roce.ecn.min_bytes, "max": roce.ecn.max_bytes,
                "max_probability": roce.ecn.max_mark_probability}}}
        queues.append(q)
    pfc: dict[str, Any] = {"enabled": True, "priorities": [{"priority": p, "no_drop": True}
                                                          for p in roce.lossless_priorities]}
    if wd.enabled:
        pfc["watchdog"] = {"enabled": True, "action": wd.action, "timer": {
            "timeout": wd.detection_ms / 1000, "polling_interval": wd.poll_ms / 1000,
            "recovery_time": wd.restoration_ms / 1000}}
    return {"name": roce.profile, "trust": roce.trust, "tx_queues": queues, "priority_flow_control": pfc}


def avd_inputs(intent: Any) -> dict[str, dict[str, Any]]:
    """Per device, the eos_designs input (group vars + its own `type`) of the fabric nr-run compiled."""
    switches = {n: d for n, d in sorted(intent.devices.items()) if d.role in ("ctsw", "rtsw")}
    ctsw = [n for n, d in switches.items() if d.role == "ctsw"]
    rtsw = sorted((n for n, d in switches.items() if d.role == "rtsw"), key=lambda n: int(n.removeprefix("rtsw")))
    first = switches[rtsw[0]]
    roce, bgp = first.roce, first.bgp
    assert bgp is not None and first.loopback is not None
    tcs: dict[int, list[int]] = {}
    for dscp, tc in sorted(roce.dscp_to_tc.items()):
        tcs.setdefault(tc, []).append(dscp)
    group = {
        "fabric_name": first.site.upper(), "underlay_routing_protocol": "ebgp", "overlay_routing_protocol": "none",
        "mgmt_interface": "Management0", "mgmt_interface_vrf": first.mgmt_vrf or "MGMT",
        "mgmt_gateway": first.mgmt_gateway or None,
        "p2p_uplinks_mtu": first.interfaces[0].mtu, "p2p_uplinks_qos_profile": roce.profile,
        "bgp_maximum_paths": bgp.maximum_paths, "bgp_ecmp": bgp.ecmp,
        "bgp_peer_groups": {"ipv4_underlay_peers": {"name": bgp.peer_group, "bfd": bgp.bfd,
                                                    "maximum_routes": bgp.maximum_routes,
                                                    "structured_config": {"timers": f"{bgp.keepalive} {bgp.holdtime}"}}},
        "underlay_filter_redistribute_connected": False,
        "custom_structured_configuration_qos_profiles": [_roce_qos(roce)],
        "custom_structured_configuration_qos": {"map": {"dscp": [
            f"{' '.join(str(d) for d in dscps)} to traffic-class {tc}" for tc, dscps in sorted(tcs.items())]}},
        "custom_structured_configuration_priority_flow_control": {"watchdog": {
            "action": roce.watchdog.action, "timeout": roce.watchdog.detection_ms / 1000,
            "polling_interval": roce.watchdog.poll_ms / 1000,
            "recovery_time": roce.watchdog.restoration_ms / 1000}} if roce.watchdog.enabled else {},
        "spine": {"defaults": {"loopback_ipv4_pool": "10.255.0.0/24", "bgp_as": str(switches[ctsw[0]].asn)},
                  "nodes": [{"name": n, "id": i + 1, "mgmt_ip": switches[n].mgmt_prefix}
                            for i, n in enumerate(ctsw)]},
        "l3leaf": {"defaults": {"loopback_ipv4_pool": "10.254.0.0/20", "uplink_ipv4_pool": "10.128.0.0/12",
                                "uplink_switches": ctsw, "max_uplink_switches": len(ctsw), "vtep": False,
                                "uplink_interfaces": [i.name for i in first.interfaces if i.role == "fabric"]},
                   "node_groups": [{"group": n, "bgp_as": str(switches[n].asn), "nodes": [{
                       "name": n, "id": k + 1, "mgmt_ip": switches[n].mgmt_prefix,
                       "uplink_switch_interfaces": [i.peer_port for i in switches[n].interfaces if i.role == "fabric"],
                       "l3_interfaces": [{"name": i.name, "ip_address": i.address, "description": i.description,
                                          "peer": i.peer_device, "peer_interface": i.peer_port, "speed": "400g",
                                          "qos_profile": roce.profile, "structured_config": {"mtu": i.mtu}}
                                         for i in switches[n].interfaces if i.role == "host"]}]}
                                   for k, n in enumerate(rtsw)]},
    }
    return {n: {**group, "type": "spine" if d.role == "ctsw" else "l3leaf"} for n, d in switches.items()}


def run_avd(switches: int) -> dict[str, Any]:
    from nr_run.intent import compile_site

    with tempfile.TemporaryDirectory() as tmp:
        intent = compile_site(_site(Path(tmp), switches))
    raw = avd_inputs(intent)
    del intent
    c0, w0 = _cpu(), time.perf_counter()
    import pyavd

    c_import = _cpu()
    inputs = {}
    for name, data in raw.items():
        result = pyavd.validate_inputs(data)
        if result.validated_data is None or result.validation_result.violations:
            raise SystemExit(f"{name}: AVD refused the input: "
                             f"{[(v.path, v.message) for v in result.validation_result.violations][:3]}")
        inputs[name] = result.validated_data
    c_valid = _cpu()
    facts = pyavd.get_avd_facts(inputs)
    c_facts = _cpu()
    size = 0
    for name, data in inputs.items():
        size += len(pyavd.get_device_config(pyavd.get_device_structured_config(name, data, facts)))
    c1, w1 = _cpu(), time.perf_counter()
    n = len(inputs)
    return {"side": "avd", "devices": n, "cpu_s": c1 - c0, "wall_s": w1 - w0, "cpu_ms_per_device": (c1 - c0) * 1000 / n,
            "import_s": c_import - c0, "validate_s": c_valid - c_import, "facts_s": c_facts - c_valid,
            "device_s": c1 - c_facts, "config_mb": size / 1e6,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def run_nr(switches: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        site = _site(Path(tmp), switches)
        cpu, wall = render_in_process(site, Path(tmp) / "out")
        files = list((Path(tmp) / "out").iterdir())
        size = sum(p.stat().st_size for p in files if p.suffix == ".cfg")
    return {"side": "nr-run", "devices": switches, "configs": len(files), "cpu_s": cpu, "wall_s": wall,
            "cpu_ms_per_device": cpu * 1000 / switches, "config_mb": size / 1e6,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def run_nr_library(switches: int) -> dict[str, Any]:
    """compile + render of the switches (no NIC scripts, no safety proofs, nothing written), imports counted."""
    with tempfile.TemporaryDirectory() as tmp:
        site = _site(Path(tmp), switches)
        c0, w0 = _cpu(), time.perf_counter()
        from nr_run.cli.common import gc_paused
        from nr_run.intent import compile_site
        from nr_run.runbooks.render import render_site

        with gc_paused():
            intent = compile_site(site)
            names = [n for n, d in intent.devices.items() if d.tier]
            configs = render_site(intent, hosts=names)
        c1, w1 = _cpu(), time.perf_counter()
    return {"side": "nr-lib", "devices": len(configs), "cpu_s": c1 - c0, "wall_s": w1 - w0,
            "cpu_ms_per_device": (c1 - c0) * 1000 / len(configs),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _fresh(side: str, n: int) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--one", f"{side}:{n}"], capture_output=True, text=True,
                         env=ENV)
    if out.returncode != 0:
        raise SystemExit(f"{side} at {n} switches failed:\n{out.stderr[-3000:]}")
    row: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return row


ENV: dict[str, str] = {}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="64,256,1024")
    ap.add_argument("--one")
    args = ap.parse_args()
    if not args.one:
        from benchmarks.installed import installed_env

        ENV.update(installed_env())
    if args.one:
        side, _, n = args.one.partition(":")
        run = {"avd": run_avd, "nr": run_nr, "nrlib": run_nr_library}[side]
        print(json.dumps(run(int(n))))
        return 0
    import os

    print(f"load average {os.getloadavg()[0]:.1f}; each side and size in a fresh process; CPU incl. imports",
          flush=True)
    worst: dict[str, float] = {}
    for n in (int(x) for x in args.sizes.split(",")):
        nr, lib, avd = _fresh("nr", n), _fresh("nrlib", n), _fresh("avd", n)
        core = (avd["facts_s"] + avd["device_s"]) * 1000 / avd["devices"]
        ratios = {"core": core / lib["cpu_ms_per_device"], "whole": avd["cpu_ms_per_device"] / nr["cpu_ms_per_device"]}
        for k, v in ratios.items():
            worst[k] = min(worst.get(k, v), v)
        print(f"{n:5d} EOS switches:\n"
              f"  core  (pyavd get_avd_facts + structured config + config per device / nr-run compile + render of the "
              f"switches): pyavd {core:.1f} vs nr-run {lib['cpu_ms_per_device']:.2f} ms CPU per device = "
              f"x{ratios['core']:.1f}\n"
              f"  whole (pyavd also validate_inputs / `nr-run render`: safety proofs, {nr['configs'] - n} NIC "
              f"scripts, files): pyavd {avd['cpu_ms_per_device']:.1f} vs nr-run {nr['cpu_ms_per_device']:.2f} ms = "
              f"x{ratios['whole']:.1f}\n"
              f"  pyavd {avd['cpu_s']:.1f} s CPU (validate {avd['validate_s']:.1f}, facts {avd['facts_s']:.1f}, "
              f"structured+config {avd['device_s']:.1f}), {avd['wall_s']:.1f} s wall, {avd['peak_rss_mb']:.0f} MB; "
              f"nr-run render {nr['cpu_s']:.1f} s CPU, {nr['wall_s']:.1f} s wall, {nr['peak_rss_mb']:.0f} MB; "
              f"compile+render {lib['cpu_s']:.1f} s CPU, {lib['peak_rss_mb']:.0f} MB", flush=True)
    for k, v in worst.items():
        print(f"smallest {k} ratio x{v:.1f} (target >= x{TARGET:.0f}): {'met' if v >= TARGET else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
