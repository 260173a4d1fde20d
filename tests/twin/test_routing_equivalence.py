"""The per-prefix routing model answers every routing request exactly as the whole-table model does.

Two in-process twins of the same site boot the same rendered configs: one with the twin's model, one with
tests/twin/reference_routing.ReferenceFabric (every device's whole table, then a lookup in it). Real clients ask
both the same questions (pyeapi on EOS; paramiko exec, vtysh and the SONiC CLI on SONiC): BGP summaries and
neighbours, whole tables, the BGP table, and a lookup of every prefix and of an address inside each, on every
switch. Then the same changes go to both, and the answers are compared again after each: a cable down, a BGP
session shut, and a redistribution route-map removed (dc1, mz1 with
its zone aggregates, star1, and a generated site with EOS and SONiC)."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import re
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pyeapi
import pytest
import yaml

from nr_run.intent import compile_site
from nr_run.lab.twin import lab as lab_module
from nr_run.lab.twin.lab import Lab
from nr_run.lab.twin.model.propagation import Propagation
from nr_run.runbooks.clab import write_topology
from nr_run.runbooks.render import render_device
from tests.sitegen import generate_site
from tests.twin.reference_routing import ReferenceFabric

pytestmark = pytest.mark.long

REPO = Path(__file__).resolve().parents[2]
# what a clock moves: uptimes, timestamps, message counts (keepalives tick)
_JSON_TIMES = re.compile(r'"(\w*[Tt]ime\w*|\w*[Uu]ptime\w*|msg\w*|statsTimestamp)": ("[^"]*"|[0-9.e+-]+)')
_TEXT_TIMES = re.compile(r"\b\d+d\d+h(\d+m)?\b|\b\d\d:\d\d:\d\d\b|\b(never)\b")
# a summary row's message counts (Neighbor V AS MsgRcvd MsgSent ...): keepalives tick with the clock
_TEXT_MSGS = re.compile(r"^(\d+\.\d+\.\d+\.\d+ +4 +\d+ +)\d+( +)\d+", re.M)


def _booted(site_dir: Path, out: Path) -> Path:
    """The site's containerlab file, every switch booting its rendered config and every server its NIC script."""
    intent = compile_site(site_dir)
    path = write_topology(intent, out / "clab")
    doc = yaml.safe_load(path.read_text())
    (out / "configs").mkdir()
    for name, node in doc["topology"]["nodes"].items():
        text = render_device(intent.devices[name], intent)
        if intent.devices[name].role == "gpu":
            node["exec"] = node.get("exec", []) + [ln for ln in text.splitlines() if not ln.startswith("#")]
        else:
            (out / "configs" / name).write_text(text)
            node["startup-config"] = str(out / "configs" / name)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@contextlib.contextmanager
def _twin(topology: Path, state: Path, reference: bool, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    with monkeypatch.context() as m:
        if reference:
            m.setattr(lab_module, "Fabric", ReferenceFabric)
        lab = Lab(topology, state, base_port=0)
    assert isinstance(lab.fabric, ReferenceFabric) == reference
    lab.start(timeout=300)
    try:
        yield lab
    finally:
        lab.stop()


def _eapi(lab: Lab, host: str) -> pyeapi.client.Node:
    ep = lab.addresses[host]
    return pyeapi.client.Node(pyeapi.client.connect(transport="https", host="127.0.0.1", port=ep["port"],
                                                    username="admin", password="admin", timeout=120))


def _ssh(lab: Lab, host: str, password: str = "YourPaSsWoRd") -> paramiko.SSHClient:
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect("127.0.0.1", port=lab.addresses[host]["port"], username="admin", password=password,
                   look_for_keys=False, allow_agent=False, timeout=60, banner_timeout=60)
    return client


def _run(client: paramiko.SSHClient, cmd: str) -> str:
    _, out, err = client.exec_command(cmd, timeout=120)
    text = out.read().decode() + err.read().decode()
    # column widths follow the widest count, so runs of spaces are one space
    masked = re.sub(r" +", " ", _TEXT_MSGS.sub(r"\1M\2M", _TEXT_TIMES.sub("T", text)))
    return f"exit {out.channel.recv_exit_status()}\n{masked}"


def _masked(doc: object) -> str:
    return _JSON_TIMES.sub(r'"\1": 0', json.dumps(doc, sort_keys=True))


def _targets(prefixes: set[str]) -> list[str]:
    """Every prefix, an address inside each, and one outside all of them."""
    out = set(prefixes)
    for p in prefixes:
        net = ipaddress.ip_network(p)
        out.add(str(net.network_address + (1 if net.num_addresses > 1 else 0)))
    return sorted(out) + ["203.0.113.9"]


def _answers(lab: Lab) -> dict[str, object]:
    """Every switch's routing answers, read through real clients."""
    out: dict[str, object] = {}
    for host, ep in sorted(lab.addresses.items()):
        if ep["platform"] == "eos":
            node = _eapi(lab, host)
            whole = node.enable(["show ip route vrf default"])[0]["result"]
            targets = _targets(set(whole["vrfs"]["default"]["routes"]))
            cmds = ["show ip bgp summary vrf all", "show ip bgp summary", "show bgp summary", "show ip bgp neighbors",
                    "show ip route summary", "show ip bgp", "show ip route vrf default bgp",
                    *(f"show ip route vrf default {t}" for t in targets)]
            out[host] = [_masked(whole), *(_masked(r["result"]) for r in node.enable(cmds))]
            out[host + " text"] = node.enable(["show ip bgp neighbors vrf all"], encoding="text")[0]["result"]["output"]
            out[host + " text"] = _TEXT_TIMES.sub("T", re.sub(r"up for \S+", "up for T", str(out[host + " text"])))
        elif ep["platform"] == "sonic":
            client = _ssh(lab, host)
            try:
                whole = _run(client, "vtysh -c 'show ip route json'")
                targets = _targets(set(json.loads(whole.split("\n", 1)[1])))
                answers = [_masked(json.loads(_run(client, "vtysh -c 'show ip bgp summary json'").split("\n", 1)[1])),
                           whole, _run(client, "show ip bgp summary"), _run(client, "vtysh -c 'show ip bgp summary'"),
                           _run(client, "vtysh -c 'show ip route'"), _run(client, "show ip interfaces")]
                for i in range(0, len(targets), 40):
                    answers.append(_run(client, "vtysh " + " ".join(f"-c 'show ip route {t} json'"
                                                                   for t in targets[i:i + 40])))
                out[host] = answers
            finally:
                client.close()
    return out


def _eos_config(labs: list[Lab], host: str, lines: list[str]) -> None:
    for lab in labs:
        _eapi(lab, host).run_commands(["enable", "configure", *lines, "end"])


def _first_bgp(lab: Lab, host: str) -> tuple[str, str, str | None] | None:
    """(ASN, a neighbour address, the redistribution route-map) of an EOS switch's running config (None: it
    runs no BGP, as the one switch of a star site)."""
    text = _eapi(lab, host).enable(["show running-config"], encoding="text")[0]["result"]["output"]
    asn = re.search(r"^router bgp (\d+)", text, re.M)
    peer = re.search(r"^   neighbor (\d+\.\d+\.\d+\.\d+) (remote-as|peer group)", text, re.M)
    rmap = re.search(r"^   redistribute connected route-map (\S+)", text, re.M)
    if not asn or not peer:
        return None
    return asn.group(1), peer.group(1), rmap.group(1) if rmap else None


def _switch_link(lab: Lab) -> tuple[str, str]:
    """A switch's end of the first switch-to-switch cable, or of a server's cable on a one-switch site."""
    switch = {n for n, node in lab.topology.nodes.items() if node.platform in ("eos", "sonic")}
    ends = [(c.a_dev, c.a_port, c.b_dev in switch) for c in lab.topology.links if c.a_dev in switch] + \
        [(c.b_dev, c.b_port, c.a_dev in switch) for c in lab.topology.links if c.b_dev in switch]
    dev, port, _ = next((e for e in ends if e[2]), ends[0])
    return dev, port


def _compare(new: Lab, ref: Lab, step: str, before: dict[str, object] | None = None) -> dict[str, object]:
    """Both twins' answers are equal (and, after a change, differ from the answers before it)."""
    got, want = _answers(new), _answers(ref)
    assert before is None or got != before, f"{step}: changed no answer"
    assert sorted(got) == sorted(want)
    differing = [h for h in sorted(want) if got[h] != want[h]]
    if differing:
        a, b = got[differing[0]], want[differing[0]]
        pairs = list(zip(a, b, strict=False)) if isinstance(a, list) and isinstance(b, list) else [(a, b)]
        first = next((x, y) for x, y in pairs if x != y)
        at = next(i for i, (x, y) in enumerate(zip(str(first[0]), str(first[1]), strict=False)) if x != y) \
            if str(first[0])[:len(str(first[1]))] != str(first[1])[:len(str(first[0]))] else 0
        raise AssertionError(f"{step}: per-prefix model differs on {differing[:5]}; first: "
                             f"{str(first[0])[max(0, at - 300):at + 300]!r} != {str(first[1])[max(0, at - 300):at + 300]!r}")
    return got


SITES = {"dc1": REPO / "inventory" / "dc1", "mz1": REPO / "inventory" / "mz1", "star1": REPO / "inventory" / "star1"}


@pytest.mark.parametrize("site", [*SITES, "generated", "mz1 per speaker", "generated per speaker"])
def test_per_prefix_routing_equals_the_whole_table_model(site, tmp_path, monkeypatch):
    """"per speaker": the model answers every speaker it can from its own advertisers, never expanding a layer
    it need not (what it does past a few dozen edges per layer), against the reference's whole propagations."""
    if site.endswith(" per speaker"):
        monkeypatch.setattr(Propagation, "_worth_expanding", lambda self, dev: False)
        site = site.removesuffix(" per speaker")
    site_dir = SITES.get(site) or generate_site(tmp_path / "inv", rtsw=8, ctsw=2, nics=2, site="gen8")
    topology = _booted(Path(site_dir), tmp_path)
    with _twin(topology, tmp_path / "new", False, monkeypatch) as new, \
            _twin(topology, tmp_path / "ref", True, monkeypatch) as ref:
        labs = [new, ref]
        seen = _compare(new, ref, "healthy")
        dev, port = _switch_link(new)
        for lab in labs:
            lab.fault("link_down", device=dev, port=port)
        seen = _compare(new, ref, "link down", seen)
        eos = sorted(h for h, ep in new.addresses.items() if ep["platform"] == "eos" and h.startswith(("rtsw", "ctsw")))
        if not eos:
            return
        bgp = _first_bgp(new, eos[0])
        if bgp is None:
            return
        asn, peer, rmap = bgp
        _eos_config(labs, eos[0], [f"router bgp {asn}", f"neighbor {peer} shutdown"])
        seen = _compare(new, ref, "session shut", seen)
        if rmap:
            _eos_config(labs, eos[0], [f"router bgp {asn}", "redistribute connected"])
            _compare(new, ref, "redistribution route-map removed", seen)
