"""Parsers on real-format samples (see samples/README.md for origin and verification status)."""

from __future__ import annotations

import json
from pathlib import Path

from nr_run.platforms.eos import collect as eos
from nr_run.platforms.eos.structured import EOS_DEFAULT_DSCP_TO_TC
from nr_run.platforms.linux import collect as linux
from nr_run.platforms.sonic import collect as sonic

S = Path(__file__).parent / "samples"


def j(path: str):
    return json.loads((S / path).read_text())


def t(path: str) -> str:
    return (S / path).read_text()


# ------------------------------------------------------------------ EOS

def test_eos_interfaces_admin_oper_speed_mtu():
    i = eos.parse_interfaces(j("eos/show_interfaces.json"))
    assert (i["Ethernet1"].admin_up, i["Ethernet1"].oper_up, i["Ethernet1"].speed_mbps, i["Ethernet1"].mtu) == \
        (True, True, 400000, 9214)
    assert (i["Ethernet2"].admin_up, i["Ethernet2"].oper_up, i["Ethernet2"].mtu) == (False, False, 1500)
    assert (i["Ethernet3"].admin_up, i["Ethernet3"].oper_up, i["Ethernet3"].speed_mbps) == (True, False, 100000)


def test_eos_lldp():
    n = eos.parse_lldp(j("eos/show_lldp_neighbors.json"))
    assert [(x.local_port, x.remote_device, x.remote_port) for x in n] == [
        ("Ethernet1", "ctsw1.lab.example", "Ethernet1"), ("Ethernet2", "ctsw2", "Ethernet1")]


def test_eos_bgp_asn_string_and_state():
    b = eos.parse_bgp(j("eos/show_ip_bgp_summary_vrf_all.json"))
    assert (b["10.254.0.0"].state, b["10.254.0.0"].remote_asn, b["10.254.0.0"].prefixes_received) == \
        ("Established", 65100, 3)
    assert (b["10.254.0.4"].state, b["10.254.0.4"].remote_asn) == ("Active", 65199)


def test_eos_routes_ecmp():
    r = eos.parse_routes(j("eos/show_ip_route_vrf_default.json"))
    assert [h.ip for h in r["10.255.1.2/32"].next_hops] == ["10.254.0.0", "10.254.0.2"]
    assert r["10.255.1.2/32"].protocol == "eBGP"


def test_eos_running_config_profile_and_interface_level():
    q = eos.parse_running_qos(t("eos/running_config.txt"))
    # Ethernet1 inherits the ROCE service-profile
    assert q["pfc"]["Ethernet1"] == [3]
    wd = q["watchdog"]["Ethernet1"]
    assert (wd.enabled, wd.action, wd.detection_ms, wd.restoration_ms) == (True, "drop", 200, 400)
    e = q["ecn"][("Ethernet1", 3)]
    assert (e.min_bytes, e.max_bytes, e.max_mark_probability) == (150_000, 1_500_000, 20)
    assert q["qos"]["Ethernet1"].trust == "dscp"
    assert q["qos"]["Ethernet1"].schedulers[6] == "strict"
    # the effective map: configured lines over EOS' factory map (DSCP 24-31 would land on TC 3)
    assert q["qos"]["Ethernet1"].dscp_to_tc == {**EOS_DEFAULT_DSCP_TO_TC, 26: 3, 48: 6}
    assert len(q["qos"]["Ethernet1"].dscp_to_tc) == 64 and EOS_DEFAULT_DSCP_TO_TC[24] == 3
    # Ethernet3: interface-level PFC on 4 (3 is "drop"), no watchdog, other ECN threshold
    assert q["pfc"]["Ethernet3"] == [4]
    assert q["watchdog"]["Ethernet3"].enabled is False
    assert q["ecn"][("Ethernet3", 3)].min_bytes == 300_000
    assert q["ecn"][("Ethernet3", 3)].max_mark_probability is None
    # Ethernet4: PFC off, untrusted
    assert q["pfc"]["Ethernet4"] == []
    assert q["qos"]["Ethernet4"].trust is None
    assert ("Ethernet4", 3) not in q["ecn"]


def test_eos_storm_status_unverified_shape():
    s = eos.parse_watchdog_status(j("eos/show_priority-flow-control.json"))
    assert [(x.port, x.priority, x.stormed) for x in s] == [("Ethernet1", 3, False), ("Ethernet3", 3, True)]


def test_eos_counters():
    c = eos.parse_counters(j("eos/show_priority-flow-control_counters.json"),
                           j("eos/show_interfaces_counters_queue_detail.json"),
                           j("eos/show_qos_interfaces_ecn_counters_queue.json"), 5.0)
    assert (c.ports["Ethernet1"].pfc_rx_total, c.ports["Ethernet3"].pfc_tx_total) == (12, 5)
    assert c.ports["Ethernet1"].pfc_rx == {} and c.ports["Ethernet3"].pfc_tx == {3: 5}
    assert c.ports["Ethernet1"].queue_drops == {0: 4, 3: 3}          # unicast only, DPs summed
    assert c.ports["Ethernet1"].ecn_marks == {3: 17}                  # "-" = not configured


# ------------------------------------------------------------------ SONiC

def test_sonic_interfaces_status():
    i = sonic.parse_interfaces(t("sonic/show_interfaces_status.txt"))
    assert (i["Ethernet0"].admin_up, i["Ethernet0"].oper_up, i["Ethernet0"].speed_mbps, i["Ethernet0"].mtu) == \
        (True, True, 400000, 9214)
    assert (i["Ethernet8"].admin_up, i["Ethernet8"].mtu) == (False, 1500)
    assert i["Ethernet32"].speed_mbps == 40000


def test_sonic_lldp_table_stops_at_footer():
    n = sonic.parse_lldp(t("sonic/show_lldp_table.txt"))
    assert [(x.local_port, x.remote_device, x.remote_port) for x in n] == [
        ("Ethernet0", "ctsw1", "Ethernet3"), ("Ethernet8", "dummy", "00:00:00:00:00:01")]


def test_sonic_bgp_summary_text():
    b = sonic.parse_bgp(t("sonic/show_ip_bgp_summary.txt"))
    assert (b["10.0.0.1"].state, b["10.0.0.1"].remote_asn, b["10.0.0.1"].prefixes_received) == \
        ("Established", 65200, 6402)
    assert (b["10.0.0.33"].state, b["10.0.0.33"].remote_asn) == ("Active", 64001)


def test_sonic_bgp_summary_vtysh_json():
    b = sonic.parse_bgp_json(j("sonic/vtysh_show_ip_bgp_summary_json.json"))
    assert (b["10.0.0.1"].state, b["10.0.0.1"].remote_asn, b["10.0.0.1"].prefixes_received) == \
        ("Established", 65200, 6402)
    assert (b["10.0.0.33"].state, b["10.0.0.33"].prefixes_received) == ("Active", 0)


def test_sonic_routes_frr_json_selected_only():
    r = sonic.parse_routes(j("sonic/show_ip_route_json.json"))
    assert [h.interface for h in r["10.255.1.4/32"].next_hops] == ["Ethernet0", "Ethernet8"]
    assert "10.255.1.9/32" not in r


def test_sonic_pfc_priority_and_watchdog():
    assert sonic.parse_pfc_priority(t("sonic/show_pfc_priority.txt")) == {
        "Ethernet0": [3, 4], "Ethernet4": [3], "Ethernet8": []}
    wd = sonic.parse_pfcwd_config(t("sonic/pfcwd_show_config.txt"))
    assert (wd["Ethernet4"].enabled, wd["Ethernet4"].action, wd["Ethernet4"].detection_ms,
            wd["Ethernet4"].restoration_ms) == (True, "drop", 200, 400)
    assert wd["Ethernet8"].enabled is False


def test_sonic_pfcwd_stats_storm():
    s = sonic.parse_pfcwd_stats(t("sonic/pfcwd_show_stats.txt"))
    assert [(x.port, x.priority, x.stormed, x.storms_detected) for x in s] == [
        ("Ethernet0", 3, True, 1), ("Ethernet4", 3, False, 2)]


def test_sonic_qos_from_config_db():
    q = sonic.parse_qos(j("sonic/config_db_example.json"))
    e = q["ecn"][("Ethernet0", 3)]
    assert (e.enabled, e.min_bytes, e.max_bytes, e.max_mark_probability) == (True, 250000, 2097152, 5)
    assert ("Ethernet0", 0) not in q["ecn"]
    p = q["qos"]["Ethernet0"]
    assert p.trust == "dscp" and p.dscp_to_tc[3] == 3 and p.dscp_to_tc[48] == 6 and p.dscp_to_tc[0] == 1
    assert p.schedulers[3] == "dwrr"


def test_sonic_buffers_lossless_pg():
    b = sonic.parse_buffers(j("sonic/config_db_example.json"))
    pg = b["Ethernet0"]
    assert [(x.pgs, x.profile, x.xoff_bytes) for x in pg] == [([3, 4], "pg_lossless_100000_40m_profile", 177632)]


def test_sonic_counters_commas_and_unicast_only():
    c = sonic.parse_counters(t("sonic/show_pfc_counters.txt"), [t("sonic/show_queue_counters.txt")],
                             [t("sonic/show_queue_wredcounters.txt")], 1.0)
    p = c.ports["Ethernet0"]
    assert p.pfc_rx[0] == 1200 and p.pfc_rx[3] == 203 and p.pfc_tx[7] == 217
    assert p.pfc_rx_total == 1200 + sum(range(201, 208))
    assert p.queue_drops == {0: 0, 3: 19}
    assert p.ecn_marks == {3: 7}


# ------------------------------------------------------------------ Linux

def test_linux_ip_addr():
    n = linux.parse_ip_addr(j("linux/ip_addr.json"))
    assert (n["eth1"].oper_up, n["eth1"].mtu, n["eth1"].addresses) == (True, 9000, ["10.10.0.1/31"])
    assert (n["eth2"].oper_up, n["eth2"].mtu, n["eth2"].addresses) == (False, 1500, [])


def test_linux_dcb():
    assert linux.parse_dcb_pfc(j("linux/dcb_pfc.json")) == [3]
    assert linux.parse_dcb_pfc({"prio_pfc": [{"prio": p, "enabled": p == 4} for p in range(8)]}) == [4]
    assert linux.parse_dcb_app(j("linux/dcb_app.json")) == {26: 3, 48: 6}
    assert linux.parse_dcb_app({"dscp_prio": [{"dscp": 26, "prio": 3}]}) == {26: 3}
    assert linux.parse_dcb_apptrust({"order": ["dscp", "pcp"]}) == "dscp"
    assert linux.parse_dcb_apptrust({"order": []}) is None


def test_linux_ping():
    assert linux.parse_ping(t("linux/ping_ok.txt"))[:2] == (True, 0.0)
    ok, loss, detail = linux.parse_ping(t("linux/ping_mtu.txt"))
    assert (ok, loss) == (False, 100.0) and "message too long, mtu=1500" in detail
    assert linux.parse_ping(t("linux/ping_unreachable.txt"))[:2] == (False, 100.0)
    assert linux.parse_ping("connect: Network is unreachable\n") == (False, None, "connect: Network is unreachable")


def test_linux_ib_write_bw():
    assert linux.parse_ib_write_bw(t("linux/ib_write_bw_client.txt"))[0] == 390.87
    bw, detail = linux.parse_ib_write_bw(t("linux/ib_write_bw_fail.txt"))
    assert bw is None and "Couldn't connect to 10.10.0.13" in detail


def test_linux_rdma_link_map_and_commands():
    assert linux.rdma_device_map(t("linux/rdma_link.json")) == {"eth1": "mlx5_0", "eth2": "mlx5_1"}
    assert linux.rdma_device_map(t("linux/rdma_link.txt")) == {"eth1": "mlx5_0", "eth2": "mlx5_1"}
    assert linux.ping_command("10.10.0.1", "10.10.0.9", 9000, 26) == \
        "ping -c 3 -i 0.2 -W 1 -M do -s 8972 -Q 104 -I 10.10.0.1 10.10.0.9"


# ------------------------------------------------------------------ normalised vendor values

def test_eos_watchdog_action_is_neutral():
    cfg = t("eos/running_config.txt").replace("pause watchdog port action drop", "pause watchdog port action notify-only")
    assert eos.parse_running_qos(cfg)["watchdog"]["Ethernet1"].action == "forward"
    assert eos.parse_running_qos(t("eos/running_config.txt"))["watchdog"]["Ethernet1"].action == "drop"


def test_sonic_watchdog_alert_is_forward():
    text = t("sonic/pfcwd_show_config.txt")
    alert = text.replace("Ethernet4      drop", "Ethernet4     alert")
    forward = text.replace("Ethernet4      drop", "Ethernet4   forward")
    assert sonic.parse_pfcwd_config(alert)["Ethernet4"].action == "forward"
    assert sonic.parse_pfcwd_config(forward)["Ethernet4"].action == "forward"
    assert sonic.parse_pfcwd_config(text)["Ethernet0"].action == "drop"


def test_dscp_map_scope_per_platform():
    # EOS running-config lines overlay EOS' factory map: the collector reports all 64 code points
    e = eos.parse_running_qos(t("eos/running_config.txt"))["qos"]["Ethernet1"]
    assert (e.dscp_map, e.dscp_to_tc) == ("complete", {**EOS_DEFAULT_DSCP_TO_TC, 26: 3, 48: 6})
    # SONiC's bound DSCP_TO_TC_MAP is the whole classification
    s = sonic.parse_qos(j("sonic/config_db_example.json"))["qos"]["Ethernet0"]
    assert s.dscp_map == "complete" and len(s.dscp_to_tc) == 64


def test_sonic_collector_and_driver_share_one_table_parser(monkeypatch):
    from napalm_sonic import parsers

    calls: list[tuple[str, str | None]] = []
    monkeypatch.setattr(parsers, "parse_table", lambda text, header=None: calls.append((text, header)) or [])
    assert sonic.parse_table("text", "Port") == [] and calls == [("text", "Port")]   # the driver's parser, no copy
    monkeypatch.undo()
    # two tables in one output: the header selects which one
    pfc = t("sonic/show_pfc_counters.txt")
    rx, tx = parsers.parse_table(pfc, "Port Rx"), parsers.parse_table(pfc, "Port Tx")
    assert rx and tx and "Port Rx" in rx[0] and "Port Tx" in tx[0]
    assert parsers.parse_table(pfc) == rx                      # no header given: the first table
    assert parsers.parse_table(pfc, "Nope") == []


# ------------------------------------------------------------------ the generic collection driver

def test_driver_collects_through_the_platform_plugin():
    from nr_run.intent import compile_site
    from nr_run.platforms import registry
    from nr_run.platforms.state import DeviceState
    from nr_run.validators.collect import collect_sections, collector_for

    rtsw1 = compile_site("inventory/dc1").devices["rtsw1"]          # an EOS switch
    assert collector_for(rtsw1) is registry.get("eos").collector
    outputs = {("show interfaces", "json"): j("eos/show_interfaces.json"),
               ("show lldp neighbors", "json"): j("eos/show_lldp_neighbors.json"),
               ("show running-config", "text"): t("eos/running_config.txt")}
    calls: list[list] = []

    def run(cmds):
        calls.append(list(cmds))
        if ("show ip bgp summary vrf all", "json") in cmds:        # this command fails on the device
            raise RuntimeError("eAPI error")
        return {c[0]: outputs[c] for c in cmds}

    state = DeviceState("rtsw1", "eos")
    collect_sections(run, rtsw1, ["interfaces", "bgp", "lldp", "qos"], state)
    assert state.sections == {"interfaces", "lldp", "qos"}
    assert state.errors == {"bgp": "RuntimeError: eAPI error"}
    assert state.interfaces["Ethernet1"].mtu == 9214 and state.qos["Ethernet1"].dscp_map == "complete"
    # one batch first, then each section alone; the shared running-config is asked once per batch
    assert sum(c == ("show running-config", "text") for c in calls[0]) == 1 and len(calls) == 1 + 4


def test_linux_mlnx_qos_trust_and_the_script_for_a_kernel_without_apptrust():
    from nr_run.platforms.linux.nicstate import mlnx_qos_trust, with_mlnx_qos

    assert mlnx_qos_trust("DCBX mode: OS controlled\nPriority trust state: dscp\n") == "dscp"
    assert mlnx_qos_trust("bash: mlnx_qos: command not found\n") is None
    script = "dcb apptrust set dev eth1 order dscp\ndcb apptrust set dev eth2 order dscp pcp\n"
    assert with_mlnx_qos(script, ["eth2"]) == "dcb apptrust set dev eth1 order dscp\nmlnx_qos -i eth2 --trust=dscp\n"
