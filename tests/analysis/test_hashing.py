"""ECMP hash fields: preflight warns when a platform's hash leaves out the UDP source port (RoCE's per-QP
entropy); dc1's platforms keep it (EOS by its default, SONiC cannot say from its config)."""

from __future__ import annotations

from nr_run.platforms import registry
from nr_run.platforms.eos import config as eos_config
from nr_run.platforms.hashing import FIELDS, ROCE_ENTROPY, hash_findings
from nr_run.platforms.site import load_site
from tests.conftest import DC1


def test_dc1_hashes_on_the_udp_source_port():
    intent, findings = load_site(DC1)
    assert not [f for f in findings if f.rule == "ecmp-hash-entropy"]
    eos = registry.get("eos").config
    assert ROCE_ENTROPY in eos.ecmp_hash_fields(intent.devices["rtsw1"]) <= FIELDS
    assert registry.get("sonic").config.ecmp_hash_fields(intent.devices["rtsw3"]) is None


def test_a_hash_without_the_source_port_warns_per_hardware(monkeypatch):
    monkeypatch.setattr(eos_config, "EOS_DEFAULT_ECMP_HASH", frozenset({"src-ip", "dst-ip", "l4-dst-port"}))
    intent, findings = load_site(DC1)
    found = [f for f in findings if f.rule == "ecmp-hash-entropy"]
    assert [(f.severity, f.host, f.field) for f in found] == [("warning", "ctsw1", "hardware.eos-ctsw"),
                                                              ("warning", "rtsw1", "hardware.eos-rtsw")]
    assert "2 switch(es) (ctsw1, ctsw2)" in found[0].message and "UDP source port" in found[0].message
    assert found == hash_findings(intent)
