"""ECMP hash fields and RoCE: a preflight warning when a switch's hash cannot tell RoCE flows apart.

RoCEv2 flows all go to UDP port 4791; the NIC puts per-QP entropy into the UDP source port (IBTA RoCEv2,
Annex A17). A switch whose ECMP hash leaves out the L4 source port hashes every flow between two NICs onto
one uplink, however many QPs NCCL opens, so elephant flows collide (polarise) on the fabric.

A platform's config builder may be an `EcmpHashFields` (nr_run.platforms.base): the fields its
rendered config (or, where it renders none, the platform's documented default) makes the ECMP hash use, in
the neutral names below; None when the platform cannot say.
"""

from __future__ import annotations

from nr_run.intent.errors import Finding
from nr_run.intent.models import DeviceIntent, FabricIntent
from nr_run.platforms import registry
from nr_run.platforms.base import EcmpHashFields

FIELDS = frozenset({"src-ip", "dst-ip", "ip-protocol", "l4-src-port", "l4-dst-port", "ingress-port",
                    "ipv6-flow-label", "rdma-dest-qp"})
ROCE_ENTROPY = "l4-src-port"


def ecmp_hash_fields(device: DeviceIntent) -> frozenset[str] | None:
    """The fields the device's ECMP hash uses, as its platform says (None: the platform cannot say)."""
    try:
        builder = registry.get(device.platform).config
    except registry.UnknownPlatform:
        return None
    return builder.ecmp_hash_fields(device) if isinstance(builder, EcmpHashFields) else None


def hash_findings(fabric: FabricIntent) -> list[Finding]:
    """A warning per platform and hardware whose ECMP hash excludes the UDP source port (listing its switches)."""
    missing: dict[tuple[str, str], list[str]] = {}
    for dev in sorted(fabric.switches(), key=lambda d: d.name):
        fields = ecmp_hash_fields(dev)     # an unknown platform has its own preflight error
        if fields is not None and ROCE_ENTROPY not in fields:
            missing.setdefault((dev.platform, dev.hardware.name), []).append(dev.name)
    out = []
    for (platform, hw), names in sorted(missing.items()):
        out.append(Finding("warning", "ecmp-hash-entropy", fabric.fabric_file, names[0], f"hardware.{hw}",
                           f"the {platform} ECMP hash on {len(names)} switch(es) ({', '.join(names[:5])}"
                           f"{' ...' if len(names) > 5 else ''}) leaves out the UDP source port, where RoCEv2 "
                           "carries per-QP entropy: all QPs between two NICs take one uplink"))
    return out
