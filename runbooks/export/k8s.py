"""Kubernetes node labels for the tiers, in the keys NVIDIA's topograph writes (network.topology.nvidia.com/
block, spine, datacenter) so topology-aware schedulers (Kueue TAS, Volcano) read them, plus nr-run's own zone
and unit labels. One Node manifest per GPU server, for `kubectl label` or a server-side apply of labels only.
"""

from __future__ import annotations

import yaml

from nr_run.intent.models import FabricIntent
from nr_run.runbooks.export.placement import placement

LABELS_FILE = "k8s-node-labels.yaml"
TOPOLOGY = "network.topology.nvidia.com"
OWN = "fabric.nr-run.io"


def node_labels(intent: FabricIntent) -> dict[str, dict[str, str]]:
    p = placement(intent)
    out: dict[str, dict[str, str]] = {}
    for unit in p.units.values():
        for server in unit.servers:
            labels = {f"{TOPOLOGY}/block": unit.name, f"{OWN}/site": p.site, f"{OWN}/unit": unit.name}
            if unit.zone is not None:
                labels[f"{TOPOLOGY}/spine"] = f"z{unit.zone}"
                labels[f"{OWN}/zone"] = f"z{unit.zone}"
                labels[f"{TOPOLOGY}/datacenter"] = f"{p.site}-aggregation"
            elif p.spines:
                labels[f"{TOPOLOGY}/spine"] = f"{p.site}-spine"
            out[server] = dict(sorted(labels.items()))
    return dict(sorted(out.items()))


def export_k8s_labels(intent: FabricIntent) -> dict[str, str]:
    docs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
            for name, labels in node_labels(intent).items()]
    header = f"# Node labels of site {intent.site} ({intent.shape}), written by `nr-run export k8s-labels`.\n"
    return {LABELS_FILE: header + yaml.safe_dump_all(docs, sort_keys=False)}
