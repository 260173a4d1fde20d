"""Test helpers for the EOS twin: start a whole-site lab on free ports, connect real clients."""

from __future__ import annotations

from pathlib import Path

import napalm
import pyeapi

from nr_run.lab.twin.lab import Lab

DC1 = Path(__file__).resolve().parents[2] / "inventory" / "dc1"


def start_dc1(state_dir: Path) -> Lab:
    lab = Lab(DC1, state_dir, base_port=0)
    lab.start()
    return lab


def napalm_eos(lab: Lab, host: str, transport: str = "https"):
    a = lab.addresses[host]
    port = a["port"] if transport == "https" else a["http_port"]
    drv = napalm.get_network_driver("eos")("127.0.0.1", "admin", "admin", timeout=20,
                                           optional_args={"transport": transport, "port": port})
    drv.open()
    return drv


def eapi(lab: Lab, host: str, transport: str = "http") -> pyeapi.client.Node:
    a = lab.addresses[host]
    port = a["port"] if transport == "https" else a["http_port"]
    conn = pyeapi.client.connect(transport=transport, host="127.0.0.1", username="admin", password="admin",
                                 port=port, timeout=20)
    return pyeapi.client.Node(conn)
