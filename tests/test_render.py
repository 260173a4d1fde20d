"""Rendering: golden files, determinism, StrictUndefined, structured configs, vendor content, file names,
the Nornir task path."""

from __future__ import annotations

import difflib
import json
import os
import random
import shutil
from pathlib import Path

import jinja2
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from nornir.core import Nornir
from nornir.core.inventory import Defaults, Groups, Host, Hosts, Inventory
from nornir.core.task import Result, Task
from nornir.plugins.runners import SerialRunner

from nr_run.intent import compile_site
from nr_run.platforms import registry
from nr_run.platforms.eos.config import EosConfig
from nr_run.platforms.eos.structured import seconds
from nr_run.platforms.sonic.buffers import ranges
from nr_run.platforms.sonic.config import SonicConfig, to_json
from nr_run.platforms.templates import template_dir
from nr_run.runbooks.render import (
    config_filename,
    render_config,
    render_device,
    render_site,
    write_configs,
)
from tests.corpus import examples

REPO = Path(__file__).resolve().parents[1]
SITE = REPO / "inventory" / "dc1"
GOLDEN = REPO / "tests" / "golden" / "dc1"
SWITCHES = ["ctsw1", "ctsw2", "rtsw1", "rtsw2", "rtsw3", "rtsw4"]
SERVERS = ["gpu1", "gpu2", "gpu3", "gpu4"]
DEVICES = sorted(SWITCHES + SERVERS)
UPDATE = os.environ.get("NR_RUN_UPDATE_GOLDEN") == "1"


@pytest.fixture(scope="module")
def fabric():
    return compile_site(SITE)


@pytest.fixture(scope="module")
def configs(fabric):
    return render_site(fabric)


def _suffix(fabric, name: str) -> str:
    return {"sonic": ".json", "linux": ".sh"}.get(fabric.devices[name].platform, ".cfg")


# --- golden files -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", DEVICES)
def test_golden(fabric, configs, name):
    path = GOLDEN / f"{name}{_suffix(fabric, name)}"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(configs[name], encoding="utf-8")
    assert path.exists(), f"missing golden {path}; run with NR_RUN_UPDATE_GOLDEN=1 and review it"
    expected = path.read_text(encoding="utf-8")
    if configs[name] != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), configs[name].splitlines(True),
                                            f"golden/{path.name}", f"rendered/{path.name}"))
        pytest.fail(f"{name} differs from its golden file (NR_RUN_UPDATE_GOLDEN=1 rewrites):\n{diff}")


def test_site_renders_the_six_switches_and_the_four_servers(configs):
    assert list(configs) == DEVICES


# --- determinism ------------------------------------------------------------------------------

def test_render_twice_is_identical(fabric):
    assert render_site(fabric) == render_site(fabric)


def test_shuffled_hosts_give_identical_bytes(tmp_path, configs):
    site = tmp_path / "dc1"
    shutil.copytree(SITE, site)
    hosts = yaml.safe_load((site / "hosts.yaml").read_text())
    names = list(hosts)
    random.Random(7).shuffle(names)
    if names == list(hosts):            # make sure the order really changed
        names.reverse()
    (site / "hosts.yaml").write_text(yaml.safe_dump({n: hosts[n] for n in names}, sort_keys=False))
    assert list(yaml.safe_load((site / "hosts.yaml").read_text())) == names
    assert render_site(compile_site(site)) == configs


# --- StrictUndefined --------------------------------------------------------------------------

def test_missing_intent_value_raises(fabric):
    broken = fabric.devices["rtsw3"].model_copy(update={"buffers": None})
    with pytest.raises(ValueError, match="rtsw3: no buffer model"):
        render_device(broken)


def test_missing_structured_value_raises(fabric):
    eos = EosConfig()
    structured = eos.structured_config(fabric.devices["ctsw1"])
    del structured["pfc_watchdog"]
    with pytest.raises(jinja2.UndefinedError):
        eos.render(structured)


def test_misspelled_field_in_template_raises(fabric, tmp_path):
    shutil.copytree(template_dir("eos"), tmp_path / "eos")
    main = tmp_path / "eos" / "main.j2"
    main.write_text(main.read_text().replace("hostname {{ hostname }}", "hostname {{ hostnmae }}"))
    eos = EosConfig(tmp_path / "eos")
    with pytest.raises(jinja2.UndefinedError):
        eos.render(eos.structured_config(fabric.devices["ctsw1"]))


def test_servers_render_their_nic_script(fabric):
    text = render_device(fabric.devices["gpu1"])
    assert "dcb pfc set dev eth1 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off" in text
    assert "echo 106 > /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos" in text


# --- selection and files ----------------------------------------------------------------------

def test_render_site_filters(fabric):
    assert list(render_site(fabric, role="ctsw")) == ["ctsw1", "ctsw2"]
    assert list(render_site(fabric, hosts=["rtsw4", "rtsw1", "gpu1"])) == ["gpu1", "rtsw1", "rtsw4"]
    assert render_site(fabric, hosts=["rtsw1"], role="ctsw") == {}
    with pytest.raises(ValueError, match="nosuch"):
        render_site(fabric, hosts=["nosuch"])


def test_write_configs_suffixes(fabric, configs, tmp_path):
    paths = write_configs(configs, tmp_path, fabric)
    assert {n: p.name for n, p in paths.items()} == {n: n + _suffix(fabric, n) for n in DEVICES}
    assert all(paths[n].read_text() == configs[n] for n in DEVICES)


@pytest.mark.parametrize("name", ["../escape", "/etc/passwd", "a/b", "..", ".hidden", "x\\y", "", "a\nb"])
def test_file_names_cannot_leave_the_output_folder(fabric, tmp_path, name):
    device = fabric.devices["ctsw1"].model_copy(update={"name": name})
    bad = fabric.model_copy(update={"devices": {**fabric.devices, name: device}})
    with pytest.raises(ValueError, match="not a safe file name"):
        config_filename(device)
    out = tmp_path / "deep" / "out"
    with pytest.raises(ValueError, match="not a safe file name"):
        write_configs({name: "text"}, out, bad)
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_ranges():
    assert ranges([7, 0, 1, 2, 4, 5, 6]) == ["0-2", "4-7"]
    assert ranges([3]) == ["3"]
    assert ranges([3, 4, 6]) == ["3-4", "6"]
    assert ranges([]) == []


# --- EOS content ------------------------------------------------------------------------------

def _block(text: str, header: str) -> list[str]:
    """Lines of one top-level block (header line to the next top-level line)."""
    lines = text.splitlines()
    start = lines.index(header)
    out = []
    for line in lines[start + 1:]:
        if line and not line.startswith(" "):
            break
        out.append(line)
    return out


@pytest.mark.parametrize("name", ["ctsw1", "rtsw1", "rtsw2"])
def test_eos_qos_profile(fabric, configs, name):
    intent = fabric.devices[name]
    profile = _block(configs[name], f"qos profile {intent.roce.profile}")
    assert "   qos trust dscp" in profile
    assert "   priority-flow-control on" in profile
    assert "   priority-flow-control priority 3 no-drop" in profile
    assert "   priority-flow-control pause watchdog port action drop" in profile
    assert ("   priority-flow-control pause watchdog port timer timeout 0.2 polling-interval 0.1 "
            "recovery-time 0.4") in profile
    q3 = profile[profile.index("   tx-queue 3"):profile.index("   tx-queue 6")]
    # bytes, the unit SONiC's WRED_PROFILE thresholds use: the same figure on both platforms
    assert ("      random-detect ecn minimum-threshold 150000 bytes maximum-threshold 1500000 bytes "
            "max-mark-probability 20") in q3
    assert "      random-detect ecn count" in q3
    assert "      bandwidth percent 50" in q3
    q6 = profile[profile.index("   tx-queue 6"):]
    assert "      priority strict" in q6
    assert not any("random-detect" in line for line in q6)


@pytest.mark.parametrize("name", ["ctsw2", "rtsw1"])
def test_eos_interfaces_and_maps(fabric, configs, name):
    intent = fabric.devices[name]
    text = configs[name]
    for itf in intent.interfaces:
        block = _block(text, f"interface {itf.name}")
        assert block[:7] == [f"   description {itf.description}", "   no shutdown", "   mtu 9214",
                             "   speed 400g-8", "   no switchport", f"   ip address {itf.address}",
                             f"   service-profile {intent.roce.profile}"]
    assert _block(text, "interface Loopback0") == [f"   ip address {intent.loopback}"]
    assert "qos map dscp 26 to traffic-class 3" in text.splitlines()
    assert "qos map dscp 48 to traffic-class 6" in text.splitlines()
    # every one of the 64 DSCPs is mapped, the unlisted ones to default_tc (0)
    mapped = {}
    for line in text.splitlines():
        if line.startswith("qos map dscp "):
            words = line.split()
            for d in words[3:words.index("to")]:
                assert int(d) not in mapped
                mapped[int(d)] = int(words[-1])
    assert mapped == intent.roce.dscp_to_tc and len(mapped) == 64
    assert "priority-flow-control pause watchdog action drop" in text.splitlines()
    assert text.endswith("end\n")


@pytest.mark.parametrize("name", ["ctsw1", "rtsw2"])
def test_eos_bgp(fabric, configs, name):
    bgp = fabric.devices[name].bgp
    block = _block(configs[name], f"router bgp {bgp.asn}")
    assert f"   router-id {bgp.router_id}" in block
    assert "   maximum-paths 64 ecmp 64" in block
    # BFD on the peer group when every peer runs it, else per neighbor toward the peers whose platform can
    bfd = {p.address: bgp.bfd and registry.get(p.peer_platform).config.bgp_neighbor_bfd for p in bgp.peers}
    if all(bfd.values()):
        assert f"   neighbor {bgp.peer_group} bfd" in block
    else:
        assert f"   neighbor {bgp.peer_group} bfd" not in block
        assert sorted(ln.split()[1] for ln in block if ln.endswith(" bfd") and "FABRIC" not in ln) == sorted(
            a for a, on in bfd.items() if on)
    assert name != "ctsw1" or sorted(a for a, on in bfd.items() if on) == ["10.254.0.1", "10.254.0.5"]
    assert f"   neighbor {bgp.peer_group} timers 3 9" in block
    assert f"      neighbor {bgp.peer_group} activate" in block
    assert "   redistribute connected route-map RM-CONN-2-BGP" in block
    assert "   redistribute connected" not in block
    remote_as = [line.split() for line in block if line.endswith(tuple(f" {p.remote_asn}" for p in bgp.peers))
                 and " remote-as " in line]
    assert sorted((w[1], int(w[3])) for w in remote_as) == sorted((p.address, p.remote_asn) for p in bgp.peers)
    assert len(bgp.peers) == (4 if name == "ctsw1" else 2)


def test_eos_watchdog_alert_maps_to_notify_only(fabric):
    intent = fabric.devices["rtsw1"]
    wd = intent.roce.watchdog.model_copy(update={"action": "alert"})
    text = render_device(intent.model_copy(update={"roce": intent.roce.model_copy(update={"watchdog": wd})}))
    assert "priority-flow-control pause watchdog action notify-only" in text
    assert "   priority-flow-control pause watchdog port action notify-only" in text
    assert not [line for line in text.splitlines() if line.endswith("action drop")]


# --- structured configs -----------------------------------------------------------------------

def test_eos_structured_config_shape(fabric):
    sc = EosConfig().structured_config(fabric.devices["ctsw1"], fabric)
    assert sc["hostname"] == "ctsw1"
    assert [i["name"] for i in sc["ethernet_interfaces"]] == ["Ethernet1", "Ethernet2", "Ethernet3", "Ethernet4"]
    assert sc["ethernet_interfaces"][0]["ip_address"] == "10.254.0.0/31"
    assert sc["pfc_watchdog"] == {"timeout": "0.2", "polling_interval": "0.1", "recovery_time": "0.4",
                                  "action": "drop"}
    assert sc["qos_maps"]["dscp_to_traffic_class"] == [
        {"dscps": [d for d in range(64) if d not in (26, 48)], "traffic_class": 0},
        {"dscps": [26], "traffic_class": 3}, {"dscps": [48], "traffic_class": 6}]
    bgp = sc["router_bgp"]
    assert bgp["asn"] == 65100 and bgp["peer_group"]["bfd"] is False
    # per-neighbor BFD toward the EOS peers only (SONiC's bgpcfgd cannot carry it)
    assert [(n["ip_address"], n["bfd"]) for n in bgp["neighbors"]] == [
        ("10.254.0.1", True), ("10.254.0.5", True), ("10.254.0.9", False), ("10.254.0.13", False)]
    rtsw1 = EosConfig().structured_config(fabric.devices["rtsw1"], fabric)["router_bgp"]
    assert rtsw1["peer_group"]["bfd"] is True and not any(n["bfd"] for n in rtsw1["neighbors"])


def test_eos_formats_watchdog_seconds():
    assert [seconds(ms) for ms in (100, 200, 1000, 1500)] == ["0.1", "0.2", "1", "1.5"]


def test_sonic_structured_config_shape(fabric):
    db = SonicConfig().structured_config(fabric.devices["rtsw3"], fabric)
    # Arista-7060X6-64PE-O128S2 port_config.ini (master): Ethernet8 = lanes 1-4, alias etp2a, index 2
    assert db["PORT"]["Ethernet8"]["lanes"] == "1,2,3,4"
    assert (db["PORT"]["Ethernet8"]["alias"], db["PORT"]["Ethernet8"]["index"]) == ("etp2a", "2")
    assert db["DEVICE_METADATA"]["localhost"]["platform"] == "x86_64-arista_7060x6_64pe"
    assert db["DEVICE_METADATA"]["localhost"]["hwsku"] == "Arista-7060X6-64PE-O128S2"
    assert db["BUFFER_POOL"]["ingress_lossless_pool"] == {
        "type": "ingress", "mode": "dynamic", "size": "166115492", "xoff": "29423360"}    # buffers_defaults_t1.j2
    assert "bfd" not in json.dumps(db["BGP_NEIGHBOR"])


def test_sonic_render_is_json_dumps_of_the_structured_dict(fabric, configs):
    sonic = SonicConfig()
    for name in ("rtsw3", "rtsw4"):
        structured = sonic.structured_config(fabric.devices[name], fabric)
        assert configs[name] == sonic.render(structured) == json.dumps(structured, indent=4, sort_keys=True) + "\n"
    assert sorted(p.name for p in template_dir("sonic").iterdir() if p.suffix == ".j2") == []


# --- SONiC content ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["rtsw3", "rtsw4"])
def test_sonic_roce_tables(fabric, configs, name):
    intent = fabric.devices[name]
    db = json.loads(configs[name])
    ports = [i.name for i in intent.interfaces]
    assert sorted(db["PORT"]) == sorted(ports)
    for port in ports:
        qmap = db["PORT_QOS_MAP"][port]
        assert qmap["pfc_enable"] == qmap["pfcwd_sw_enable"] == "3"
        assert db["PORT"][port]["admin_status"] == "up"
        assert db["PFC_WD"][port] == {"action": "drop", "detection_time": "200", "restoration_time": "400"}
        assert db["QUEUE"][f"{port}|3"] == {"scheduler": "scheduler.q3", "wred_profile": "ROCE_LOSSLESS"}
        assert db["BUFFER_QUEUE"][f"{port}|3"] == {"profile": "egress_lossless_profile"}
        assert {k for k in db["BUFFER_QUEUE"] if k.startswith(port + "|")} == {f"{port}|{r}" for r in ("0-2", "3", "4-7")}
    for key, entry in db["BUFFER_PG"].items():
        assert entry["profile"] in db["BUFFER_PROFILE"], key
    lossless = {k: v for k, v in db["BUFFER_PG"].items() if k.endswith("|3")}
    assert len(lossless) == len(ports)
    for itf in intent.interfaces:
        prof = db["BUFFER_PROFILE"][lossless[f"{itf.name}|3"]["profile"]]
        assert int(prof["xoff"]) >= itf.headroom.xoff_bytes      # the SKU's table row, not below physics
        assert prof["dynamic_th"] == "0"
    dscp = db["DSCP_TO_TC_MAP"]["ROCE"]
    assert len(dscp) == 64 and dscp["26"] == "3" and dscp["48"] == "6" and dscp["0"] == "0"
    assert db["PFC_WD"]["GLOBAL"] == {"POLL_INTERVAL": "100"}
    assert db["SCHEDULER"]["scheduler.q6"] == {"type": "STRICT"}
    assert db["SCHEDULER"]["scheduler.q3"] == {"type": "DWRR", "weight": "50"}
    wred = db["WRED_PROFILE"]["ROCE_LOSSLESS"]
    assert wred["ecn"] == "ecn_all" and wred["green_min_threshold"] == "150000"
    assert wred["green_max_threshold"] == "1500000" and wred["green_drop_probability"] == "20"
    meta = db["DEVICE_METADATA"]["localhost"]
    assert meta["bgp_asn"] == str(intent.asn) and meta["type"] == "LeafRouter"
    assert {a: (n["asn"], n["local_addr"]) for a, n in db["BGP_NEIGHBOR"].items()} == {
        p.address: (str(p.remote_asn), p.local_address) for p in intent.bgp.peers}


def test_sonic_all_values_are_strings(configs):
    def walk(node):
        if isinstance(node, dict):
            for value in node.values():
                yield from walk(value)
        else:
            yield node
    for name in ("rtsw3", "rtsw4"):
        assert all(isinstance(v, str) for v in walk(json.loads(configs[name])))


# --- Nornir task path -------------------------------------------------------------------------

def _render_by_name(task: Task, fabric) -> Result:
    """How a user script would call the task: look up the host's intent, render it."""
    return render_config(task, intent=fabric.devices[task.host.name], fabric=fabric)


def test_nornir_task_equals_render_device(fabric, configs):
    hosts = Hosts({n: Host(name=n, hostname=fabric.devices[n].mgmt_address) for n in SWITCHES})
    nr = Nornir(inventory=Inventory(hosts=hosts, groups=Groups(), defaults=Defaults()), runner=SerialRunner())
    results = nr.run(task=_render_by_name, fabric=fabric)
    assert not results.failed
    for name in SWITCHES:
        assert results[name][0].result == configs[name]       # render_config's Result


# --- scale ------------------------------------------------------------------------------------

@pytest.mark.long
def test_512_rtsw_16_ctsw_site_renders(tmp_path):
    from tests.sitegen import generate_site

    fabric = compile_site(generate_site(tmp_path, rtsw=512, ctsw=16))
    configs = render_site(fabric)
    servers = len(fabric.servers())
    assert len(configs) == 528 + servers and servers > 0
    ctsw = configs["ctsw16"]
    assert ctsw.count(" remote-as ") == 512
    sonic = [n for n in configs if fabric.devices[n].platform == "sonic"]
    assert len(sonic) == 256
    db = json.loads(configs[sonic[0]])
    assert len(db["BGP_NEIGHBOR"]) == 16 and len(db["PORT"]) == 32
    assert all(q["pfc_enable"] == "3" for k, q in db["PORT_QOS_MAP"].items() if k != "global")


_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=8)


@given(st.dictionaries(_text, st.dictionaries(_text, st.dictionaries(_text, _text, max_size=3), max_size=3),
                       max_size=4))
@settings(max_examples=examples(300), deadline=None)
def test_config_db_serialisation_is_json_dumps_byte_for_byte(doc: dict) -> None:
    assert to_json(doc) == json.dumps(doc, indent=4, sort_keys=True) + "\n"


def test_config_db_serialisation_of_other_shapes_falls_back_to_json() -> None:
    doc = {"PORT": {"Ethernet0": {"lanes": ["0", "1"]}}, "VERSIONS": {"DATABASE": {"VERSION": 3}}}
    assert to_json(doc) == json.dumps(doc, indent=4, sort_keys=True) + "\n"
