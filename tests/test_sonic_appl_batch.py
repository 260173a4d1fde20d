"""The SONiC driver reads the APPL_DB entries a change must reach in one command, not one per key."""

from __future__ import annotations

import copy

from tests.twin_site import ssh_run


def _keys(twin, host: str) -> list[str]:
    client = twin.ssh(host, "admin", "YourPaSsWoRd")
    try:
        rc, out = ssh_run(client, "sonic-db-cli APPL_DB KEYS 'BUFFER_PG_TABLE:*'")
    finally:
        client.close()
    assert rc == 0
    return sorted(out.split())


def test_appl_db_entries_read_in_one_command_equal_reading_each(deployed_twin) -> None:
    keys = _keys(deployed_twin, "rtsw3")
    assert len(keys) >= 4
    drv = deployed_twin.driver("rtsw3")
    try:
        before = len(deployed_twin.log_commands("rtsw3"))
        batched = drv._appl_entries(keys + ["BUFFER_PG_TABLE:NoSuchPort:3"])
        sent = deployed_twin.log_commands("rtsw3")[before:]
        single = {k: drv._appl_entries([k])[k] for k in keys}
    finally:
        drv.close()
    assert len(sent) == 1 and all(k in sent[0] for k in keys)
    assert {k: batched[k] for k in keys} == single and all(single.values())
    assert batched["BUFFER_PG_TABLE:NoSuchPort:3"] == {}


def test_verify_applied_names_the_keys_still_behind(deployed_twin) -> None:
    from napalm_sonic import configdb

    drv = deployed_twin.driver("rtsw3")
    try:
        running = drv._running_now()
        target = copy.deepcopy(running)
        pg = next(k for k in target["BUFFER_PG"])
        target["BUFFER_PG"][pg] = {**target["BUFFER_PG"][pg], "profile": "nr-run-not-applied"}
        before = len(deployed_twin.log_commands("rtsw3"))
        assert drv.verify_applied(running, running, 1.0) == []           # nothing changes: nothing to read
        behind = drv.verify_applied(running, target, 0.3)
        reads = len(deployed_twin.log_commands("rtsw3")) - before
    finally:
        drv.close()
    assert behind == list(configdb.appl_db_changes(running, target))
    assert 1 <= reads <= 10          # one command per poll of the keys behind, whatever their number
