"""Every fault kind on an EOS and on a SONiC switch of the deployed dc1 twin: `check` names the faulted device
(and port, where the fault has one), and nothing else fails. Faults that change no state a check reads (a slow
or lagging management plane, refused commits, congestion, a reboot into the saved config) leave every check
passing. One kind runs in the default suite;
the whole matrix is `long`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from nr_run.lab.twin.clab import load_clab
from tests.conftest import REPO
from tests.twin_site import TwinSite
from tests.validators.test_checks_twin import NO_RDMA, Twin, failed, show

TOPOLOGY = load_clab(REPO / "lab" / "dc1.clab.yml")
# the faulted switch of each platform and two of its ports (uplinks to the two CTSWs)
SWITCH = {"eos": "rtsw1", "sonic": "rtsw3"}


def _ports(device: str) -> list[str]:
    return [p for p in TOPOLOGY.nodes[device].ports if (TOPOLOGY.nodes[device].name, p) in _far()][:2]


def _far() -> dict[tuple[str, str], tuple[str, str]]:
    out = {}
    for c in TOPOLOGY.links:
        out[(c.a_dev, c.a_port)] = (c.b_dev, c.b_port)
        out[(c.b_dev, c.b_port)] = (c.a_dev, c.a_port)
    return out


def _mtu_drift(device: str, port: str) -> list[str]:
    if TOPOLOGY.nodes[device].platform == "eos":
        return [f"interface {port}", "mtu 1500"]
    return [f"config interface mtu {port} 1500"]


@dataclass(frozen=True)
class Kind:
    name: str
    params: Callable[[str, list[str]], dict]      # (device, its two ports) -> fault parameters
    port: bool = True                             # the finding names the first port
    found: bool = True                            # False: no check reads what it changes


KINDS = [
    Kind("link_down", lambda d, p: {"device": d, "port": p[0]}),
    Kind("cable_swap", lambda d, p: {"device_a": d, "port_a": p[0], "device_b": d, "port_b": p[1]}),
    Kind("unreachable", lambda d, p: {"device": d}, port=False),
    Kind("drift", lambda d, p: {"device": d, "lines": _mtu_drift(d, p[0])}),
    Kind("pfc_storm", lambda d, p: {"device": d, "port": p[0], "priority": 3}),
    Kind("lossless_drops", lambda d, p: {"device": d, "port": p[0], "queue": 3}),
    # congestion marks ECN on the lossless queue (how DCQCN slows the senders) and drops on a lossy one: what
    # a fabric under load does, which no check fails on (the counters show it: tests/twin/test_counters_over_time)
    Kind("congestion", lambda d, p: {"device": d, "port": p[0], "queue": 3}, found=False),
    Kind("congestion-lossy", lambda d, p: {"device": d, "port": p[0], "queue": 1}, found=False),
    # deploy saved the rendered config: the switch boots into it again
    Kind("reboot", lambda d, p: {"device": d}, port=False, found=False),
    Kind("slow", lambda d, p: {"device": d, "ms": 50}, found=False),
    Kind("commit_rejected", lambda d, p: {"device": d}, found=False),
    Kind("latency", lambda d, p: {"ms": 20}, found=False),
]
SONIC_ONLY = [Kind("appl_lag", lambda d, p: {"device": d, "ms": 200}, found=False)]
CASES = [(k, platform) for k in KINDS for platform in SWITCH] + [(k, "sonic") for k in SONIC_ONLY]


@pytest.fixture
def dc1(deployed_twin: TwinSite) -> Iterator[Twin]:
    t = Twin(deployed_twin)
    yield t
    t.nr.close_connections()


def _run(dc1: Twin, kind: Kind, platform: str) -> None:
    device = SWITCH[platform]
    ports = _ports(device)
    params = kind.params(device, ports)
    dc1.site.fault(kind.name.split("-")[0], **params)
    report = dc1.check(NO_RDMA)
    bad = failed(report)
    if not kind.found:
        assert not bad, f"{kind.name} on {device} made checks fail:\n{show(report)}"
        return
    named = [f for f in bad if f.device == device and (not kind.port or ports[0] in f.target)]
    assert named, f"{kind.name} on {device}:{ports[0]} not named:\n{show(report)}"
    # findings on (or about: a path's peer) the faulted device or the far end of a faulted cable, nothing else
    allowed = {device} | {_far()[(device, p)][0] for p in ports if kind.port}
    others = [f for f in bad if f.device not in allowed and f.peer_device not in allowed]
    assert not others, f"{kind.name} on {device} also failed elsewhere:\n{show(report)}"


def test_link_down_is_named_on_eos_and_sonic(dc1: Twin):
    for platform in SWITCH:
        dc1.site.clear_faults()
        _run(dc1, KINDS[0], platform)


@pytest.mark.long
@pytest.mark.parametrize(("kind", "platform"), CASES, ids=[f"{k.name}-{p}" for k, p in CASES])
def test_fault_matrix(dc1: Twin, kind: Kind, platform: str):
    _run(dc1, kind, platform)
