"""nr-run against Arista AVD (pyavd 6.4) on the same generated all-EOS two-tier fabric: CPU per device.

nr-run side: `nr-run render` in-process as a user runs it (its imports, compile, platform preflight, the safety
proofs, render of every switch and of every GPU server's NIC script, configs written), CPU divided by the
switches only (the NIC scripts are extra work nr-run does and AVD does not).

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

    .venv/bin/pip install pyavd==6.4.0          (benchmark only; never a runtime dependency)
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

CTSW = 16
TARGET = 40.0          # nr-run at least this many times less CPU per device


def _cpu() -> float:
    """CPU seconds of this process and its children (user + system)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


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
    import contextlib
    import io

    with tempfile.TemporaryDirectory() as tmp:
        site = _site(Path(tmp), switches)
        c0, w0 = _cpu(), time.perf_counter()
        from nr_run.cli.main import main

        with contextlib.redirect_stdout(io.StringIO()):
            rc = main(["render", "--site", site.name, "--inventory-dir", str(site.parent), "--out",
                       str(Path(tmp) / "out"), "-q"])
        c1, w1 = _cpu(), time.perf_counter()
        if rc != 0:
            raise SystemExit(f"nr-run render exit {rc}")
        files = list((Path(tmp) / "out").iterdir())
        size = sum(p.stat().st_size for p in files if p.suffix == ".cfg")
    return {"side": "nr-run", "devices": switches, "configs": len(files), "cpu_s": c1 - c0, "wall_s": w1 - w0,
            "cpu_ms_per_device": (c1 - c0) * 1000 / switches, "config_mb": size / 1e6,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _fresh(side: str, n: int) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--one", f"{side}:{n}"], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{side} at {n} switches failed:\n{out.stderr[-3000:]}")
    row: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="64,256,1024")
    ap.add_argument("--one")
    args = ap.parse_args()
    if args.one:
        side, _, n = args.one.partition(":")
        print(json.dumps(run_avd(int(n)) if side == "avd" else run_nr(int(n))))
        return 0
    import os

    print(f"load average {os.getloadavg()[0]:.1f}; each side and size in a fresh process; CPU incl. imports",
          flush=True)
    worst = None
    for n in (int(x) for x in args.sizes.split(",")):
        nr, avd = _fresh("nr", n), _fresh("avd", n)
        ratio = avd["cpu_ms_per_device"] / nr["cpu_ms_per_device"]
        worst = ratio if worst is None else min(worst, ratio)
        print(f"{n:5d} EOS switches: nr-run {nr['cpu_ms_per_device']:.2f} ms CPU/switch ({nr['cpu_s']:.1f} s CPU, "
              f"{nr['wall_s']:.1f} s wall, {nr['peak_rss_mb']:.0f} MB, +{nr['configs'] - n} NIC scripts); "
              f"pyavd {avd['cpu_ms_per_device']:.1f} ms CPU/device ({avd['cpu_s']:.1f} s CPU: import "
              f"{avd['import_s']:.1f}, validate {avd['validate_s']:.1f}, facts {avd['facts_s']:.1f}, "
              f"structured+config {avd['device_s']:.1f}; {avd['wall_s']:.1f} s wall, {avd['peak_rss_mb']:.0f} MB); "
              f"x{ratio:.1f} less CPU per device", flush=True)
    if worst is not None:
        print(f"smallest ratio x{worst:.1f} (target >= x{TARGET:.0f}): {'met' if worst >= TARGET else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
