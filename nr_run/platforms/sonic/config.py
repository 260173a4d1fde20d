"""SONiC config builder: DeviceIntent -> CONFIG_DB dict -> JSON text (serialised once, sorted and indented)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from json.encoder import encode_basestring_ascii
from typing import Any

from nr_run.intent.errors import Finding
from nr_run.intent.models import DeviceIntent, FabricIntent, Interface
from nr_run.platforms.base import ClabNode
from nr_run.platforms.qos import DeviceQos
from nr_run.platforms.sonic import hwsku
from nr_run.platforms.sonic.buffers import pg_row
from nr_run.platforms.sonic.config_db import DEVICE_TYPES, config_db, management, port_facts
from nr_run.platforms.sonic.qosview import qos_view

PLATFORM = "sonic"


def _block(items: list[str], indent: str) -> str:
    if not items:
        return "{}"
    inner = indent + "    "
    return "{\n" + inner + (",\n" + inner).join(items) + "\n" + indent + "}"


# an entry's fields (in their order) -> its indented JSON object: ports, queues and peers of every switch repeat a
# few entries (QUEUE, PORT_QOS_MAP, PFC_WD, BUFFER_PG rows), so each distinct one is laid out once (bounded)
_ENTRIES: dict[tuple[tuple[Any, Any], ...], str] = {}
_ENTRIES_MAX = 1 << 16


def _entry(fields: dict[str, Any]) -> str:
    """One CONFIG_DB entry's object at the third level; TypeError for a name or value that is no string (or
    cannot be a key), as the encoder raises it."""
    key = tuple(fields.items())
    found = _ENTRIES.get(key)
    if found is None:
        found = _block([f"{encode_basestring_ascii(f)}: {encode_basestring_ascii(v)}"
                        for f, v in sorted(fields.items())], " " * 8)
        if len(_ENTRIES) >= _ENTRIES_MAX:
            _ENTRIES.clear()
        _ENTRIES[key] = found
    return found


def to_json(doc: Mapping[str, Any]) -> str:
    """The one serialisation of a config_db document: sorted keys, 4-space indent, final newline.

    The bytes are those of json.dumps(doc, indent=4, sort_keys=True); for CONFIG_DB's fixed three levels
    the layout is written here and only the strings go through json's C encoder, because the indenting
    encoder is pure Python and dominated rendering time at hundreds of switches.
    """
    enc = encode_basestring_ascii
    tables = []
    try:
        # the shape is checked on the way: a table or entry that is no dict, or a name or value that is no
        # string (the encoder refuses it with TypeError), is not CONFIG_DB's shape
        for table in sorted(doc):
            entries = doc[table]
            if type(entries) is not dict or not all(type(fields) is dict for fields in entries.values()):
                raise TypeError(table)
            keys = [f"{enc(key)}: " + _entry(entries[key]) for key in sorted(entries)]
            tables.append(f"{enc(table)}: " + _block(keys, " " * 4))
    except TypeError:
        return json.dumps(doc, indent=4, sort_keys=True) + "\n"
    return _block(tables, "") + "\n"


def _hardware_findings(dev: DeviceIntent, file: str, hw: str) -> tuple[list[Finding], hwsku.HwskuProfile | None]:
    """The HWSKU must have a folder, agree with fabric.yaml, and carry every link at its speed."""
    try:
        prof = hwsku.profile(dev.model, [dev.hardware.sku_dir])
    except hwsku.HwskuError as exc:
        return [Finding("error", "sonic-hardware", file, dev.name, f"{hw}.sku_dir", str(exc))], None
    if prof is None:
        return [Finding("error", "sonic-hardware", file, dev.name, f"{hw}.model",
                        f"no SONiC hardware profile for HWSKU {dev.model!r} (known: "
                        f"{', '.join(hwsku.known([dev.hardware.sku_dir]))}; add one with {hw}.sku_dir)")], None
    out: list[Finding] = []
    if dev.hardware.asic and prof.asic and dev.hardware.asic != prof.asic:
        out.append(Finding("error", "sonic-hardware", file, dev.name, f"{hw}.asic",
                           f"HWSKU {dev.model} is a {prof.asic} switch, not {dev.hardware.asic}"))
    if dev.hardware.platform_id and prof.platform and dev.hardware.platform_id != prof.platform:
        out.append(Finding("error", "sonic-hardware", file, dev.name, f"{hw}.platform_id",
                           f"HWSKU {dev.model} belongs to platform {prof.platform}, not {dev.hardware.platform_id}"))
    modes: dict[str, tuple[str, str]] = {}
    for itf in dev.interfaces:
        if dev.hardware.speed_mbps and itf.speed_mbps > dev.hardware.speed_mbps:
            continue        # faster than the hardware's speed: the site's link-speed rule names the cabling key
        parent = prof.parent_of(itf.name)
        mode = hwsku.breakout_mode(prof, itf.name, itf.speed_mbps) if parent is not None else None
        if parent is not None and mode is not None:
            first = modes.setdefault(parent.name, (mode, itf.name))
            if first[0] != mode:
                out.append(Finding("error", "sonic-breakout", file, dev.name, f"cabling ({itf.name})",
                                   f"{itf.name} at {itf.speed_mbps // 1000}G needs breakout mode {mode} of "
                                   f"{parent.name}, but {first[1]} on the same cage needs {first[0]}: one cage "
                                   "runs one mode (platform.json)"))
                continue
        try:
            hwsku.port_entry(prof, itf.name, itf.speed_mbps)
        except hwsku.HwskuError as exc:
            out.append(Finding("error", "sonic-hardware", file, dev.name, f"{hw} port {itf.name}", str(exc)))
            continue
        row = prof.by_name(itf.name)
        if row is not None and dev.hardware.lanes_per_port and len(row.lanes) != dev.hardware.lanes_per_port:
            out.append(Finding("error", "sonic-hardware", file, dev.name, f"{hw}.lanes_per_port",
                               f"HWSKU {dev.model} port {itf.name} has {len(row.lanes)} lanes, not "
                               f"{dev.hardware.lanes_per_port}"))
            break
    return out, prof


def image_release(image: str) -> str:
    """The release branch (YYYYMM) an image tag names ("vrnetlab/sonic_sonic-vs:202511" -> "202511"), "" if none."""
    m = re.search(r":(\d{6})(?:$|[^\d])", image)
    return m.group(1) if m else ""


def _release_findings(dev: DeviceIntent, prof: hwsku.HwskuProfile, file: str, hw: str, release: str) -> list[Finding]:
    """A lab switch runs the release its image tag names: a HWSKU first shipped in a later release cannot
    exist on it (its device folder is not on that image)."""
    if release and prof.first_release and release < prof.first_release:
        return [Finding("error", "sonic-release", file, dev.name, f"{hw}.model",
                        f"HWSKU {prof.hwsku} first ships in SONiC {prof.first_release}; the lab image runs {release}, "
                        "which has no device folder for it")]
    return []


def _headroom_findings(dev: DeviceIntent, prof: hwsku.HwskuProfile, file: str, hw: str) -> list[Finding]:
    """Every lossless port needs a row of the SKU's table (buffermgrd programs nothing without one); a row
    whose xoff is below the physics-based headroom of the port is a warning: the table still wins on the
    switch (it is the vendor's measured value, with the ASIC's cell and pipeline effects that the formula
    lacks), but a shortfall means the vendor assumed a shorter cable or a smaller MTU than this link has."""
    out: list[Finding] = []
    low: dict[tuple[int, int, str], list[str]] = {}
    for itf in dev.interfaces:
        if not itf.lossless_priorities or (dev.hardware.speed_mbps and itf.speed_mbps > dev.hardware.speed_mbps):
            continue        # a link faster than the hardware: the site's link-speed rule names the cabling key
        try:
            row = pg_row(prof, itf)
        except hwsku.HwskuError as exc:
            out.append(Finding("error", "sonic-headroom-table", file, dev.name,
                               f"cabling cable_length_m ({itf.name})", str(exc)))
            continue
        if itf.headroom is not None and int(row.xoff) < itf.headroom.xoff_bytes:
            low.setdefault((itf.speed_mbps, itf.cable_length_m, row.cable), []).append(itf.name)
    for (speed, cable_m, cable), ports in sorted(low.items()):
        itf = next(i for i in dev.interfaces if i.name == ports[0])
        assert itf.headroom is not None
        row = pg_row(prof, itf)
        out.append(Finding("warning", "sonic-headroom-below-physics", file, dev.name,
                           f"cabling cable_length_m ({', '.join(ports[:4])}{' ...' if len(ports) > 4 else ''})",
                           f"HWSKU {prof.hwsku} pg_profile_lookup.ini row {speed} {cable} has xoff {row.xoff} B, "
                           f"below the {itf.headroom.xoff_bytes} B the PFC delay model needs for {speed // 1000}G "
                           f"over {cable_m} m at MTU {itf.mtu}: the switch uses the table; check the cable or "
                           "add a longer row to the SKU (hardware sku_dir)"))
    return out


# What bgpcfgd (SONiC's default BGP config daemon, docker_routing_config_mode "separated") renders into FRR
# from CONFIG_DB: sonic-buildimage dockers/docker-fpm-frr/frr/bgpd/bgpd.main.conf.j2 sets `maximum-paths 64`
# for every instance, and templates/general/peer-group.conf.j2 puts every BGP_NEIGHBOR into peer group
# PEER_V4 with no BFD and no prefix limit; only BGP_NEIGHBOR keepalive/holdtime reach the session. The
# BGP_GLOBALS/BGP_PEER_GROUP tables that could carry the rest (sonic-bgp-global.yang, sonic-bgp-peergroup.yang)
# are read only by frrcfgd (frr_mgmt_framework_config "true"), a different FRR management mode.
BGPCFGD_MAXIMUM_PATHS = 64
BGPCFGD_PEER_GROUP = "PEER_V4"


def _bgp_findings(dev: DeviceIntent, file: str) -> list[Finding]:
    """One warning listing the BGP intent that bgpcfgd cannot carry to FRR on this switch."""
    bgp = dev.bgp
    if bgp is None:
        return []
    lost = []
    if bgp.maximum_paths != BGPCFGD_MAXIMUM_PATHS:
        lost.append(f"maximum-paths {bgp.maximum_paths} (runs {BGPCFGD_MAXIMUM_PATHS}: a different ECMP width "
                    "than the other platforms)")
    if bgp.bfd:
        lost.append("BFD (its sessions run without; peers configure none toward it)")
    if bgp.peer_group != BGPCFGD_PEER_GROUP:
        lost.append(f"peer group {bgp.peer_group} (neighbors go to {BGPCFGD_PEER_GROUP})")
    if bgp.maximum_routes:
        lost.append(f"maximum-routes {bgp.maximum_routes} (no per-peer limit)")
    if not lost:
        return []
    return [Finding("warning", "sonic-bgp-intent", file, dev.name, "bgp",
                    "SONiC's bgpcfgd cannot carry " + "; ".join(lost))]


def _aggregation_findings(dev: DeviceIntent, file: str) -> list[Finding]:
    """An ATSW of zones that are summarised must keep every zone's host blocks out of its table and away from
    the other zones: that is a per-peer route policy, which CONFIG_DB cannot give bgpcfgd (separated mode).
    Aggregating on the ATSW instead would originate each summary with a shorter AS path than the CTSWs' own,
    drawing all cross-zone traffic through the SONiC ATSWs."""
    if not dev.zone_summaries:
        return []
    return [Finding("error", "sonic-aggregation", file, dev.name, f"hardware.{dev.hardware.name}.platform",
                    f"a SONiC ATSW cannot filter the zones' host blocks ({', '.join(dev.zone_summaries)} are "
                    "summarised): bgpcfgd has no per-peer route-map in CONFIG_DB; make the aggregation tier EOS")]


def clab_index(port: str) -> int:
    """K of the sonic-vm container interface ethK that carries SONiC port `port` (EthernetN -> N/4 + 1)."""
    number = port.removeprefix("Ethernet")
    if not number.isdigit() or int(number) % 4:
        raise ValueError(f"{port}: containerlab's sonic-vm maps eth1, eth2, ... to Ethernet0, Ethernet4, ...; "
                         f"{port} is none of them")
    return int(number) // 4 + 1


class SonicConfig:
    suffix = ".json"
    escaped_json_output = True     # to_json escapes every string: render checks the text, not the dict again
    bgp_neighbor_bfd = False       # bgpcfgd renders BGP_NEIGHBOR into FRR without per-neighbor BFD
    # containerlab kind sonic-vm (a vrnetlab-built VM of sonic-vs; docs/manual/kinds/sonic-vm.md): its startup
    # config is the VM's /etc/sonic/config_db.json; 202511 is the newest release whose GCU knows every shipped SKU
    clab = ClabNode(kind="sonic-vm", image="vrnetlab/sonic_sonic-vs:202511", startup_suffix=".config_db.json")

    def structured_config(self, device: DeviceIntent, fabric: FabricIntent | None = None) -> dict[str, Any]:
        return config_db(device)

    def qos_view(self, device: DeviceIntent, structured: Mapping[str, Any]) -> DeviceQos:
        """What the rendered CONFIG_DB makes each port do with RoCE traffic (whole-fabric analyses)."""
        return qos_view(device, structured)

    def ecmp_hash_fields(self, device: DeviceIntent) -> frozenset[str] | None:
        """Unknown from the config: SONiC's generic hash table (SWITCH_HASH|GLOBAL ecmp_hash, `config switch-hash
        global ecmp-hash`, sonic-switch-hash.yang, 202305+) is not among the YANG models the rendered CONFIG_DB is
        validated against (shared/sonic-yang), so nr-run renders none and the switch keeps its SAI/ASIC default,
        which the config does not show."""
        return None

    def render(self, structured: Mapping[str, Any]) -> str:
        return to_json(structured)

    def preflight(self, fabric: FabricIntent) -> list[Finding]:
        """What the SONiC config cannot carry: ports without lanes, buffers without a known pool size."""
        out: list[Finding] = []
        file = fabric.fabric_file
        for dev in sorted((d for d in fabric.devices.values() if d.platform == PLATFORM), key=lambda d: d.name):
            hw = f"hardware.{dev.hardware.name}"
            found, prof = _hardware_findings(dev, file, hw)
            out += found
            out += _bgp_findings(dev, file)
            out += _aggregation_findings(dev, file)
            if dev.buffers is None:
                out.append(Finding("error", "sonic-hardware", file, dev.name, f"{hw}.buffer_cell_bytes",
                                   "SONiC switches get a buffer model: set the buffer cell size"))
                continue
            if prof is None:
                continue
            if fabric.lab:
                out += _release_findings(dev, prof, file, hw, image_release(self.clab.image))
            out += _headroom_findings(dev, prof, file, hw)
            pool = int(prof.pools["ingress_lossless_pool"].get("size", "0") or 0)
            rows = [pg_row(prof, i) for i in dev.interfaces if i.lossless_priorities and
                    prof.pg_row(i.speed_mbps, i.cable_length_m) is not None]
            total = sum(int(r.xoff) for r in rows) * len(dev.roce.lossless_priorities)
            if pool and "xoff" not in prof.pools["ingress_lossless_pool"] and total > pool:
                out.append(Finding("error", "headroom-exceeds-pool", file, dev.name, hw,
                                   f"lossless headroom {total} B (the SKU's table xoff of every lossless port and "
                                   f"priority) exceeds the ingress pool {pool} B of HWSKU {dev.model}: shorten "
                                   "the cables (cabling cable_length_m) or use fewer lossless priorities "
                                   "(roce_profiles.<profile>.lossless_priorities)"))
        return out

    def startup_config(self, device: DeviceIntent) -> str:
        """Minimal SONiC config_db: metadata, management interface, ports (admin down, as shipped)."""
        doc = {
            "DEVICE_METADATA": {"localhost": {"hostname": device.name, "hwsku": device.model,
                                              "platform": device.hardware.platform_id, "type": DEVICE_TYPES[device.role],
                                              "buffer_model": "traditional"}},
            **management(device),
            "FEATURE": {"lldp": {"state": "enabled"}, "bgp": {"state": "enabled"}},
            "PORT": {i.name: {"admin_status": "down", **port_facts(i, device), "mtu": "9100"}
                     for i in device.interfaces},
        }
        return to_json(doc)

    def port_names(self, device: DeviceIntent) -> dict[str, str]:
        """PORT aliases (the LLDP port ID a SONiC switch sends, e.g. Ethernet1/1 or etp1a) -> port names."""
        out: dict[str, str] = {}
        for itf in device.interfaces:
            try:
                out[port_facts(itf, device)["alias"]] = itf.name
            except hwsku.HwskuError:
                continue
        return out

    def clab_interface(self, interface: Interface, device: DeviceIntent) -> str:
        """containerlab's sonic-vm: `eth1` is Ethernet0 and each next ethK is the previous port + 4
        (docs/manual/kinds/sonic-vm.md, "Interfaces mapping"), whatever the PORT table holds: EthernetN is
        eth(N/4 + 1). A port whose number is no multiple of 4 has no container interface (ValueError)."""
        return f"eth{clab_index(interface.name)}"
