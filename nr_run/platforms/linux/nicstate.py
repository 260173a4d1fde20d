"""Read a server's RoCE NICs back into the structured config shape (nr_run.platforms.linux.config), so the same
template renders what a NIC runs, and the deploy diffs script against script.

Commands and the output they give (iproute2 `-j` JSON; sysfs through `grep -r . DIR`, one `path:value` line per
file):
  ip -j link show dev X              [{"ifname", "mtu", ...}]
  dcb -j apptrust show dev X         {"order": ["dscp"]}            (dcb-apptrust(8); mlx5 ships "pcp")
  dcb -j app show dev X dscp-prio    {"dscp_prio": [[26, 3], ...]}  (dcb-app(8))
  dcb -j pfc show dev X              {"prio_pfc": [...]}            (dcb-pfc(8); see linux.collect.parse_dcb_pfc)
  grep -r . /sys/class/net/X/ecn     mlx5 ECN/DCQCN knobs: roce_rp|roce_np/enable/<prio> and the parameters
  cat /sys/kernel/config/rdma_cm/D/ports/1/default_roce_tos      the RDMA CM default ToS (configfs)
A NIC without one of these knobs (not an mlx5 NIC, no rdma_cm configfs) raises KnobMissing naming it: the
deploy leaves such a host untouched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from nr_run.platforms.base import LeftUntouched
from nr_run.platforms.linux.config import NP_KEYS, PRIORITIES, RP_KEYS

RDMA_CM = "/sys/kernel/config/rdma_cm"


class KnobMissing(LeftUntouched):
    """A NIC lacks a knob the intent sets; nothing on the host is changed."""


def ecn_dir(nic: str) -> str:
    return f"/sys/class/net/{nic}/ecn"


def tos_path(rdma: str, port: int) -> str:
    return f"{RDMA_CM}/{rdma}/ports/{port}/default_roce_tos"


def commands(nic: str, rdma: str, port: int) -> list[str]:
    return [f"ip -j link show dev {nic}", f"dcb -j apptrust show dev {nic}", f"dcb -j app show dev {nic} dscp-prio",
            f"dcb -j pfc show dev {nic}", f"grep -r . {ecn_dir(nic)}", f"cat {tos_path(rdma, port)}"]


def _json(nic: str, what: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        first = text.strip().splitlines()[0] if text.strip() else "no output"
        raise KnobMissing(f"{nic}: cannot read {what} ({first})") from None


def parse_dcb_pfc(data: dict[str, Any]) -> list[int]:
    prio = data.get("prio_pfc", [])
    if isinstance(prio, dict):     # tolerate {"0": false, ...}
        return sorted(int(k) for k, v in prio.items() if v)
    if prio and isinstance(prio[0], dict):
        return sorted(int(p["prio"]) for p in prio if p.get("enabled"))
    return [i for i, on in enumerate(prio) if on]


def parse_sysfs(nic: str, text: str) -> dict[str, str]:
    """`grep -r . DIR` lines -> {path below DIR: value}."""
    base = ecn_dir(nic) + "/"
    out = {}
    for line in text.splitlines():
        path, sep, value = line.partition(":")
        if sep and path.startswith(base):
            out[path[len(base):]] = value.strip()
    return out


def nic_from_outputs(nic: str, rdma: str, port: int, out: Mapping[str, str], rdma_cm_present: bool) -> dict[str, Any]:
    """One NIC's structured entry from the outputs of commands(nic, rdma, port)."""
    ip_cmd, trust_cmd, app_cmd, pfc_cmd, ecn_cmd, tos_cmd = commands(nic, rdma, port)
    links = [link for link in _json(nic, "its link", out[ip_cmd]) if link.get("ifname") == nic]
    if not links:
        raise KnobMissing(f"{nic}: no such interface")
    trust = _json(nic, "DCB APP trust (dcb apptrust: kernel 6.2+, iproute2 6.1+)", out[trust_cmd])
    app = _json(nic, "its DCB APP table", out[app_cmd])
    pfc = set(parse_dcb_pfc(_json(nic, "its PFC state", out[pfc_cmd])))
    knobs = parse_sysfs(nic, out[ecn_cmd])
    missing = [k for k in [f"roce_rp/enable/{p}" for p in PRIORITIES] + [f"roce_np/enable/{p}" for p in PRIORITIES]
               + [f"roce_rp/{k}" for k in RP_KEYS] + [f"roce_np/{k}" for k in NP_KEYS] if k not in knobs]
    if missing:
        raise KnobMissing(f"{nic}: the NIC has no ECN/DCQCN knob {ecn_dir(nic)}/{missing[0]}"
                          f"{f' (and {len(missing) - 1} more)' if len(missing) > 1 else ''}: not an mlx5 RoCE NIC?")
    tos_text = out[tos_cmd].strip()
    if tos_text.isdigit():
        tos = int(tos_text)
    elif rdma_cm_present:
        tos = 0               # the device's rdma_cm group is not created yet: the kernel's default ToS
    else:
        raise KnobMissing(f"{nic}: no RDMA CM configfs at {RDMA_CM} (load rdma_cm, mount configfs) to set "
                          f"{rdma}'s default RoCE ToS")
    pairs = app.get("dscp_prio", []) if isinstance(app, dict) else []
    dscp_prio = sorted([int(d["dscp"]), int(d["prio"])] if isinstance(d, dict) else [int(d[0]), int(d[1])]
                       for d in pairs)
    return {"name": nic, "rdma": rdma, "port": port, "mtu": int(links[0].get("mtu", 0)),
            "trust": list(trust.get("order", [])) if isinstance(trust, dict) else [],
            "dscp_prio": dscp_prio, "pfc": [p in pfc for p in PRIORITIES],
            "rp_enable": [_int(knobs[f"roce_rp/enable/{p}"]) for p in PRIORITIES],
            "np_enable": [_int(knobs[f"roce_np/enable/{p}"]) for p in PRIORITIES],
            "rp": [[k, _int(knobs[f"roce_rp/{k}"])] for k in RP_KEYS],
            "np": [[k, _int(knobs[f"roce_np/{k}"])] for k in NP_KEYS], "tos": tos}


def _int(text: str) -> int | str:
    return int(text) if re.fullmatch(r"-?\d+", text) else text


MLNX_TRUST = re.compile(r"Priority trust state:\s*(\w+)")


def mlnx_qos_trust(text: str) -> str | None:
    """The trust state `mlnx_qos -i X` (MLNX_OFED) prints ("Priority trust state: dscp"), or None."""
    m = MLNX_TRUST.search(text)
    return m[1] if m else None


def read_nics(run: Callable[[list[str]], dict[str, str]], nics: list[tuple[str, str, int]]) -> dict[str, Any]:
    """The structured config of what `nics` [(netdev, rdma device, port)] run now. One round of commands; a
    second, `mlnx_qos -i X`, for the NICs whose kernel has no DCB APP trust knob (`dcb apptrust` needs kernel
    6.2+ and iproute2 6.1+; MLNX_OFED's mlnx_qos sets the mlx5 trust state on older kernels). Those NICs are
    listed under "mlnx_qos_trust": their trust line is applied with mlnx_qos (NicDriver)."""
    cmds = [c for nic, rdma, port in nics for c in commands(nic, rdma, port)] + [f"test -d {RDMA_CM} && echo yes"]
    out = dict(run(cmds))
    present = out[cmds[-1]].strip() == "yes"
    legacy = []
    for nic, rdma, port in nics:
        trust_cmd = commands(nic, rdma, port)[1]
        try:
            json.loads(out[trust_cmd])
            continue
        except json.JSONDecodeError:
            pass
        state = mlnx_qos_trust(run([f"mlnx_qos -i {nic}"])[f"mlnx_qos -i {nic}"])
        if state is None:
            raise KnobMissing(f"{nic}: no DCB APP trust knob (dcb apptrust needs kernel 6.2+ and iproute2 6.1+) "
                              "and no mlnx_qos (MLNX_OFED) to set the trust state")
        out[trust_cmd] = json.dumps({"order": [state]})
        legacy.append(nic)
    return {"nics": [nic_from_outputs(nic, rdma, port, out, present) for nic, rdma, port in nics],
            "mlnx_qos_trust": legacy}


_APPTRUST = re.compile(r"^dcb apptrust set dev (\S+) order (\S+)(?: .*)?$", re.M)


def with_mlnx_qos(script: str, nics: list[str]) -> str:
    """The NIC script with the trust line of each of `nics` as mlnx_qos runs it (the first selector of the
    order is the trust state mlx5 keeps)."""
    wanted = set(nics)
    return _APPTRUST.sub(lambda m: f"mlnx_qos -i {m[1]} --trust={m[2]}" if m[1] in wanted else m[0], script)
