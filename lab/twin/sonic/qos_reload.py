"""`config qos reload` on a running switch: the QoS and buffer tables cleared and rendered again from the HWSKU.

sonic-utilities (config/main.py `reload` of the `qos` group): `_clear_qos` deletes the tables below, then
sonic-cfggen renders the HWSKU's buffers.json.j2 and qos.json.j2 for the switch's current DEVICE_METADATA and
PORT, and buffermgrd adds the lossless PGs. The rendering is the factory day 0's (lab.twin.sonic.factory).
"""

from __future__ import annotations

import copy
from typing import Any

from nr_run.lab.twin.sonic import factory

# sonic-utilities config/main.py _clear_qos QOS_TABLE_NAMES
QOS_TABLES = ("PORT_QOS_MAP", "QUEUE", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE", "TC_TO_QUEUE_MAP",
              "DSCP_TO_TC_MAP", "MPLS_TC_TO_TC_MAP", "SCHEDULER", "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "WRED_PROFILE",
              "CABLE_LENGTH", "BUFFER_PG", "BUFFER_QUEUE", "BUFFER_PORT_INGRESS_PROFILE_LIST",
              "BUFFER_PORT_EGRESS_PROFILE_LIST", "BUFFER_PROFILE", "BUFFER_POOL", "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
              "LOSSLESS_TRAFFIC_PATTERN")


def reload(db: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """(the CONFIG_DB after the reload, what the command prints). Without the HWSKU's templates the tables are
    cleared and nothing is rendered, with sonic-utilities' warnings."""
    meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
    hwsku, platform = str(meta.get("hwsku", "")), str(meta.get("platform", ""))
    out = {t: v for t, v in copy.deepcopy(db).items() if t not in QOS_TABLES}
    folder = factory._folder(hwsku)
    missing = [t for t in ("buffers.json.j2", "qos.json.j2") if folder is None or not folder.joinpath(t).is_file()]
    ctx = {"DEVICE_METADATA": {"localhost": dict(meta)}, "PORT": copy.deepcopy(db.get("PORT", {}))}
    for template in ("buffers.json.j2", "qos.json.j2"):
        if folder is not None and template not in missing:
            out.update(factory._render(folder, template, ctx))
    if folder is not None and folder.joinpath("pg_profile_lookup.ini").is_file():
        factory.buffermgrd(out, factory._pg_lookup(folder.joinpath("pg_profile_lookup.ini").read_text()))
    where = f"/usr/share/sonic/device/{platform}/{hwsku}"
    words = {"buffers.json.j2": "Buffer definition", "qos.json.j2": "QoS definition"}
    return out, "".join(f"{words[t]} template not found at {where}/{t}\n" for t in missing)
