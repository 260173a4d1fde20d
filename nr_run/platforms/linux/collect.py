"""Linux GPU server collector: RoCE NIC state and the RDMA probe commands/parsers.

Commands run on SSH exec channels of the host's plain SSH connection (nr_run_ssh: one handshake, no shell),
without netmiko's prompt-matching read loop: the quick reads of a collection one after another on one channel
(one request per host, transport.exec_batch), pings and perftest each on its own channel, at the same time.
Output formats:
  ip -j addr show                  iproute2 JSON: [{ifname, mtu, operstate, addr_info[{family, local, prefixlen}]}]
  dcb -j pfc show dev X            iproute2 dcb JSON: {"pfc_cap", "macsec_bypass", "delay", "prio_pfc": [...]}
                                   (dcb_pfc.c prints prio_pfc with dcb_print_named_array -> array of on/off
                                   booleans; [{"prio", "enabled"}] items, as the twin prints them, also accepted)
  dcb -j app show dev X dscp-prio  DCB APP table ({"dscp_prio": [[26, 3]]} or [{"dscp", "prio"}] items) -- JSON
                                   shape UNVERIFIED against a real NIC
  dcb -j apptrust show dev X       {"order": ["dscp", ...]}: the first selector is the NIC's trust
  grep -r . /sys/class/net/X/ecn   mlx5 DCQCN knobs; cat .../rdma_cm/D/ports/1/default_roce_tos (nicstate)
  rdma link show                   "link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev eth1"
  ping -M do -s N -Q TOS ...       iputils text ("N packets transmitted, M received, ..% packet loss")
  ib_write_bw --report_gbits ...   perftest text; the result row under "#bytes #iterations BW peak[Gb/sec] ..."
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from nr_run.intent.models import DeviceIntent
from nr_run.platforms.collector import FunctionCollector
from nr_run.platforms.linux.config import NP_KEYS, PRIORITIES, RP_KEYS, rdma_device
from nr_run.platforms.linux.nicstate import RDMA_CM, ecn_dir, mlnx_qos_trust, parse_dcb_pfc, parse_sysfs
from nr_run.platforms.linux.nicstate import commands as nic_commands
from nr_run.platforms.state import DeviceState, NicState
from nr_run.platforms.transport import (
    SSH_EXEC,
    drop_connection,
    exec_batch,
    exec_many,
    exec_read,
    exec_start,
    is_open,
    ssh_transport,
)

Runner = Callable[[list[str]], dict[str, Any]]


# Commands that take their time on the host (ping counts, perftest durations): each on its own channel, all at
# once; every other command is a quick read and they share one channel (exec_batch)
TIMED = re.compile(r"^(ping|ib_\w+_(bw|lat))\s")


def run_commands(transport: Any, cmds: list[str], timeout: float = 60) -> dict[str, str]:
    """command -> output (stderr merged): the quick reads in one batch, the timed commands on their own
    channels at the same time as it."""
    timed = [c for c in dict.fromkeys(cmds) if TIMED.match(c)]
    quick = [c for c in dict.fromkeys(cmds) if not TIMED.match(c)]
    if not quick:
        return exec_many(transport, timed, timeout)
    channels = {c: exec_start(transport, c, timeout) for c in timed}
    out = exec_batch(transport, quick, timeout)
    return {**out, **{c: exec_read(ch, timeout)[1] for c, ch in channels.items()}}


def runner(task: Any) -> Runner:
    task.host.get_connection(SSH_EXEC, task.nornir.config)      # connect now: an unreachable host fails here

    def run(cmds: list[str]) -> dict[str, Any]:
        # the connection is looked up per call: a failed call drops it, and the next one must reconnect rather
        # than reuse the closed client
        conn = task.host.get_connection(SSH_EXEC, task.nornir.config)
        transport = ssh_transport(conn)
        if not is_open(transport):
            # closed while idle (the server, or a firewall's idle timeout, ended it): nothing was sent on it yet,
            # so a new session is safe, and a long run's later phase does not fail on what an earlier one held
            drop_connection(task, SSH_EXEC)
            transport = ssh_transport(task.host.get_connection(SSH_EXEC, task.nornir.config))
        try:
            return run_commands(transport, list(cmds))
        except Exception:
            drop_connection(task, SSH_EXEC)
            raise

    return run


def _nic_ports(device: DeviceIntent) -> list[tuple[str, str, int]]:
    return [(nic.name, rdma_device(i), 1) for i, nic in enumerate(device.nics)]


def section_commands(section: str, device: DeviceIntent) -> list[str]:
    if section == "nics":
        cmds = ["ip -j addr show", f"test -d {RDMA_CM} && echo yes"]
        for nic, rdma, port in _nic_ports(device):
            cmds += nic_commands(nic, rdma, port)[1:] + [f"mlnx_qos -i {nic}"]
        return cmds
    return []


def _json(text: str) -> Any:
    """JSON output, or a clear error carrying the first line of what came back."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        first = text.strip().splitlines()[0] if text.strip() else "<empty>"
        raise ValueError(f"not JSON: {first}") from exc


def parse_ip_addr(data: list[dict[str, Any]]) -> dict[str, NicState]:
    nics = {}
    for link in data:
        addrs = [f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", []) if a.get("family") == "inet"]
        nics[link["ifname"]] = NicState(link["ifname"], link.get("operstate") == "UP", link.get("mtu"), addrs)
    return nics


def parse_dcb_apptrust(data: dict[str, Any]) -> str | None:
    """The NIC's trust: the first selector of its DCB APP trust order ("dscp", "pcp"), None when empty."""
    order = data.get("order") if isinstance(data, dict) else None
    return str(order[0]) if order else None


def parse_dcb_app(data: dict[str, Any]) -> dict[int, int]:
    pairs = data.get("dscp_prio", []) if isinstance(data, dict) else []
    return dict(sorted((int(d["dscp"]), int(d["prio"])) if isinstance(d, dict) else (int(d[0]), int(d[1]))
                       for d in pairs))


def _read_nic(st: NicState, nic: str, rdma: str, port: int, out: Mapping[str, Any], rdma_cm: bool) -> None:
    """The DCB, DCQCN and ToS knobs of one NIC into its NicState; an unreadable knob is kept with its reason."""
    _, trust_cmd, app_cmd, pfc_cmd, ecn_cmd, tos_cmd = nic_commands(nic, rdma, port)
    for key, cmd, parse, attr in (("pfc", pfc_cmd, parse_dcb_pfc, "pfc_priorities"),
                                  ("trust", trust_cmd, parse_dcb_apptrust, "trust"),
                                  ("dscp-prio", app_cmd, parse_dcb_app, "dscp_to_prio")):
        try:
            setattr(st, attr, parse(_json(out[cmd])))
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            st.unreadable[key] = str(exc)
    # a kernel without the DCB APP trust knob: the trust state MLNX_OFED's mlnx_qos reports
    legacy = mlnx_qos_trust(str(out.get(f"mlnx_qos -i {nic}", "")))
    if st.trust is None and legacy is not None:
        st.trust = legacy
        st.unreadable.pop("trust", None)
    knobs = parse_sysfs(nic, out.get(ecn_cmd, ""))
    if f"roce_rp/enable/{PRIORITIES[0]}" in knobs:
        st.ecn_rp = [p for p in PRIORITIES if knobs.get(f"roce_rp/enable/{p}") == "1"]
        st.ecn_np = [p for p in PRIORITIES if knobs.get(f"roce_np/enable/{p}") == "1"]
        for key in RP_KEYS:
            if knobs.get(f"roce_rp/{key}", "").isdigit():
                st.dcqcn[key] = int(knobs[f"roce_rp/{key}"])
        for key in NP_KEYS:
            if knobs.get(f"roce_np/{key}", "").isdigit():
                st.dcqcn[key] = int(knobs[f"roce_np/{key}"])
    else:
        st.unreadable["dcqcn"] = f"no ECN/DCQCN knobs under {ecn_dir(nic)} (not an mlx5 RoCE NIC?)"
    tos = str(out.get(tos_cmd, "")).strip()
    if tos.isdigit():
        st.roce_tos = int(tos)
    elif rdma_cm:
        st.roce_tos = 0
    else:
        st.unreadable["tos"] = f"no RDMA CM configfs at {RDMA_CM}"


def apply_section(section: str, out: Mapping[str, Any], state: DeviceState, device: DeviceIntent | None = None,
                  taken_at: float = 0.0) -> None:
    if section != "nics" or device is None:
        raise KeyError(f"Linux collector has no section {section!r}")
    nics = parse_ip_addr(_json(out["ip -j addr show"]))
    rdma_cm = str(out.get(f"test -d {RDMA_CM} && echo yes", "")).strip() == "yes"
    for nic, rdma, port in _nic_ports(device):
        st = nics.get(nic)
        if st is not None:
            _read_nic(st, nic, rdma, port, out, rdma_cm)
    state.nics = {n: s for n, s in sorted(nics.items())}
    state.sections.add("nics")


# ---------------------------------------------------------------- RDMA probe commands and parsers

def dscp_to_tos(dscp: int) -> int:
    return dscp << 2


def ping_command(src_ip: str, dst_ip: str, mtu: int, dscp: int, count: int = 3) -> str:
    """Jumbo ping that must not fragment: payload = MTU - 20 (IP) - 8 (ICMP)."""
    return f"ping -c {count} -i 0.2 -W 1 -M do -s {mtu - 28} -Q {dscp_to_tos(dscp)} -I {src_ip} {dst_ip}"


def parse_ping(text: str) -> tuple[bool, float | None, str]:
    """(all replies received, loss %, one-line detail)."""
    m = re.search(r"(\d+) packets transmitted, (\d+) received(?:, \+(\d+) errors)?, ([\d.]+)% packet loss", text)
    if not m:
        err = next((ln.strip() for ln in text.splitlines() if ln.strip()), "<no output>")
        return False, None, err
    sent, recv, loss = int(m[1]), int(m[2]), float(m[4])
    detail = m[0]
    local_err = re.search(r"local error: (.+)", text)
    if local_err:
        detail += f" ({local_err[1].strip()})"
    return sent > 0 and recv == sent, loss, detail


def ib_server_command(dev: str, port: int, dscp: int, seconds: int) -> str:
    """perftest server: runs in the foreground of its own session (see start_command/finish_command)."""
    return f"ib_write_bw -d {dev} -x 3 --report_gbits -F -D {seconds} -p {port} --tclass={dscp_to_tos(dscp)}"


def ib_client_command(dev: str, port: int, dscp: int, seconds: int, dst_ip: str) -> str:
    return (f"ib_write_bw -d {dev} -x 3 --report_gbits -F -D {seconds} -p {port} "
            f"--tclass={dscp_to_tos(dscp)} {dst_ip}")


def parse_ib_write_bw(text: str) -> tuple[float | None, str]:
    """(BW average in Gb/s, detail). The result row follows the '#bytes ... BW average[Gb/sec]' header."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "#bytes" in line and "BW average" in line:
            # Fixed perftest layout: #bytes, #iterations, BW peak, BW average, MsgRate.
            for row in lines[i + 1:]:
                parts = row.split()
                if len(parts) >= 4 and parts[0].isdigit():
                    return float(parts[3]), f"{parts[3]} Gb/s avg ({parts[0]} B messages)"
            break
    first = next((ln.strip() for ln in lines if ln.strip() and not set(ln.strip()) <= {"-"}), "")
    return None, f"no bandwidth result: {first}" if first else "no output from ib_write_bw"


def rdma_device_map(text: str) -> dict[str, str]:
    """netdev -> RDMA device from `rdma link show` text (or its -j JSON form)."""
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return {}
        return {d["netdev"]: d["ifname"].split("/")[0] for d in data if d.get("netdev") and d.get("ifname")}
    out = {}
    for m in re.finditer(r"^link (\S+?)(?:/\d+)? .*\bnetdev (\S+)", text, re.M):
        out[m[2]] = m[1]
    return out


# perftest servers print this once they listen (perftest_communication.c)
LISTENING = "Waiting for client to connect"


def start_command(task: Any, command: str) -> Any:
    """Start a long-running command (a perftest server) on its own exec channel; returns its handle."""
    conn = task.host.get_connection(SSH_EXEC, task.nornir.config)
    try:
        return exec_start(ssh_transport(conn), command, timeout=60)
    except Exception:
        drop_connection(task, SSH_EXEC)
        raise


def wait_ready(handle: Any, timeout: float) -> bool:
    """Wait until the server says it listens (at most `timeout` s); False if it did not say so in time."""
    try:
        status, text = exec_read_peek(handle, timeout)
    except TimeoutError:
        return False
    return status is None or LISTENING in text


def finish_command(task: Any, handle: Any, timeout: float = 30.0) -> str:
    """Wait for the command started by start_command to end; returns what it printed."""
    try:
        return getattr(handle, "nr_run_seen", "") + exec_read(handle, timeout)[1]
    except Exception:
        drop_connection(task, SSH_EXEC)
        raise


def exec_read_peek(handle: Any, timeout: float) -> tuple[int | None, str]:
    """Read until the listening banner (kept on the handle for finish_command) or the command's exit."""
    status, text = exec_read(handle, timeout, until=LISTENING)
    handle.nr_run_seen = text
    return status, text


class LinuxCollector(FunctionCollector):
    """The Linux hosts' `Collector`, plus the RDMA endpoint commands and parsers the RDMA probe uses
    (ping, perftest, rdma link)."""

    # RDMA endpoint (duck-typed by nr_run.validators.probes.RdmaEndpoint)
    def ping_command(self, src_ip: str, dst_ip: str, mtu: int, dscp: int) -> str:
        return ping_command(src_ip, dst_ip, mtu, dscp)

    def parse_ping(self, text: str) -> tuple[bool, float | None, str]:
        return parse_ping(text)

    def rdma_devices_command(self) -> str:
        return "rdma link show"

    def rdma_device_map(self, text: str) -> dict[str, str]:
        return rdma_device_map(text)

    def bw_server_command(self, dev: str, port: int, dscp: int, seconds: int) -> str:
        return ib_server_command(dev, port, dscp, seconds)

    def bw_client_command(self, dev: str, port: int, dscp: int, seconds: int, dst_ip: str) -> str:
        return ib_client_command(dev, port, dscp, seconds, dst_ip)

    def parse_bw(self, text: str) -> tuple[float | None, str]:
        return parse_ib_write_bw(text)

    def start_command(self, task: Any, command: str) -> Any:
        return start_command(task, command)

    def wait_ready(self, handle: Any, timeout: float) -> bool:
        return wait_ready(handle, timeout)

    def finish_command(self, task: Any, handle: Any, timeout: float) -> str:
        return finish_command(task, handle, timeout)


collector = LinuxCollector(runner, section_commands, apply_section)
