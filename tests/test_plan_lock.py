"""Rollout plan ordering and the per-site lock."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nr_run.intent import compile_site
from nr_run.runbooks.lock import SiteLock, SiteLocked
from nr_run.runbooks.plan import batch_size, plan_rollout
from tests.conftest import DC1
from tests.sitegen import generate_site


def test_batch_size():
    assert batch_size("3", 10) == 3
    assert batch_size("25%", 10) == 3
    assert batch_size("1%", 4) == 1
    with pytest.raises(ValueError):
        batch_size("0", 4)
    with pytest.raises(ValueError):
        batch_size("150%", 4)


def test_dc1_plan_canary_then_batches_one_ctsw_at_a_time():
    intent = compile_site(DC1)
    switches = sorted(n for n, d in intent.devices.items() if d.role != "gpu")
    stages = plan_rollout(intent, switches, canary=1, batch="25%")
    assert stages[0].name == "canary" and stages[0].devices == ("rtsw1", "ctsw1")
    # rail-major: rail 1 of unit 2 (rtsw3) before rail 2 of unit 1 (rtsw2)
    assert [s.devices for s in stages[1:]] == [("rtsw3",), ("rtsw2",), ("rtsw4",), ("ctsw2",)]
    assert sorted(d for s in stages for d in s.devices) == switches


def test_large_plan_keeps_capacity(tmp_path):
    intent = compile_site(generate_site(tmp_path, rtsw=64, ctsw=4))
    switches = [n for n, d in intent.devices.items() if d.role != "gpu"]
    stages = plan_rollout(intent, switches, canary=2, batch="10%")
    for stage in stages:
        ctsws = [d for d in stage.devices if intent.devices[d].role == "ctsw"]
        rtsws = [d for d in stage.devices if intent.devices[d].role == "rtsw"]
        assert len(ctsws) <= 1
        assert len(rtsws) <= 7  # 10% of 64, rounded up
        # never every RTSW of one scalable unit in the same stage
        units = {}
        for d in rtsws:
            units.setdefault(intent.devices[d].su, []).append(d)
        assert all(len(v) < 8 for v in units.values())
    assert len({d for s in stages for d in s.devices}) == len(switches)


def _server_links(intent) -> dict[str, set[str]]:
    """RTSW -> the servers cabled to it."""
    out: dict[str, set[str]] = {}
    for link in intent.links:
        for a, b in ((link.a_device, link.b_device), (link.b_device, link.a_device)):
            if intent.devices[a].role == "rtsw" and intent.devices[b].role == "gpu":
                out.setdefault(a, set()).add(b)
    return out


@pytest.mark.parametrize(("canary", "batch"), [(1, "25%"), (2, "3"), (3, "10%"), (1, "100%")])
def test_eight_rail_site_batches_are_whole_rails(tmp_path, canary, batch):
    """8 rails x 4 units: each batch is RTSWs of one rail (across units), bounded by --batch; no batch
    (canary included) takes two RTSWs of the same server; the canary does not shift the chunks."""
    intent = compile_site(generate_site(tmp_path, rtsw=32, ctsw=4, nics=8))
    switches = sorted(n for n, d in intent.devices.items() if d.role != "gpu")
    stages = plan_rollout(intent, switches, canary=canary, batch=batch)
    size = batch_size(batch, 32)
    servers_of = _server_links(intent)
    for stage in stages:
        rtsws = [d for d in stage.devices if intent.devices[d].role == "rtsw"]
        assert len({intent.devices[d].index for d in rtsws}) <= 1, (stage, "mixes rails")
        assert len(rtsws) <= max(size, canary)
        seen: set[str] = set()
        for d in rtsws:
            assert not servers_of[d] & seen, (stage, "takes two switches of one server")
            seen |= servers_of[d]
    batches = [s for s in stages if s.name != "canary" and intent.devices[s.devices[0]].role == "rtsw"]
    # the rail's chunks are cut before the canary leaves it: rail 1's first chunk only lost the canary
    canary_rtsw = [d for d in stages[0].devices if intent.devices[d].role == "rtsw"]
    assert {intent.devices[d].index for d in canary_rtsw} == {1}
    rail1 = [s for s in batches if intent.devices[s.devices[0]].index == 1]
    assert sum(len(s.devices) for s in rail1) == 4 - len(canary_rtsw)
    if size >= 4:
        assert [len(s.devices) for s in batches[len(rail1):]] == [4] * 7      # rails 2-8, one whole rail each
    assert sorted(d for s in stages for d in s.devices) == switches


def test_site_lock_refuses_second_holder_and_names_it(tmp_path):
    first = SiteLock("dc1", tmp_path)
    first.acquire()
    with pytest.raises(SiteLocked, match=rf"locked by .*pid {os.getpid()}"):
        SiteLock("dc1", tmp_path).acquire()
    first.release()
    SiteLock("dc1", tmp_path).acquire()


def test_lock_is_host_wide_and_shared_by_every_user(tmp_path, monkeypatch):
    """The lock folder does not depend on the artifacts folder: it is NR_RUN_LOCK_DIR or /run/lock/nr-run,
    world-writable with the sticky bit (every operator can lock, only the holder can unlock)."""
    from nr_run.runbooks.lock import lock_dir

    monkeypatch.delenv("NR_RUN_LOCK_DIR")
    assert lock_dir() == Path("/run/lock/nr-run")
    monkeypatch.setenv("NR_RUN_LOCK_DIR", str(tmp_path / "host-locks"))
    lock = SiteLock("dc1")
    lock.acquire()
    assert (lock.dir.stat().st_mode & 0o7777) == 0o1777
    with pytest.raises(SiteLocked):
        SiteLock("dc1").acquire()
    lock.release()


def test_stale_lock_of_dead_process_is_taken_over(tmp_path):
    lock = SiteLock("dc1", tmp_path)
    import socket
    lock.path.write_text(json.dumps({"pid": 999999, "host": socket.gethostname(), "user": "x", "since": "-"}))
    lock.acquire()
    assert lock.holder()["pid"] == os.getpid()


def test_bandwidth_rounds_never_put_a_nic_in_a_round_twice():
    from nr_run.validators.probes import bandwidth_rounds
    from nr_run.validators.rdma import plan_pairs

    intent = compile_site(DC1)
    for pattern in ("ring", "mesh", "same_rail", "cross_rail"):
        pairs = plan_pairs(intent, pattern, 64)
        rounds = bandwidth_rounds(pairs)
        assert sorted(map(repr, (p for r in rounds for p in r))) == sorted(map(repr, pairs))
        for members in rounds:
            ends = [e for p in members for e in ((p.src_device, p.src_nic), (p.dst_device, p.dst_nic))]
            assert len(ends) == len(set(ends)), (pattern, members)
        # pairs do run together: dc1's 4 servers of 2 NICs give these plans and rounds
        assert (len(pairs), len(rounds)) == {"ring": (8, 2), "mesh": (48, 12), "same_rail": (24, 6),
                                             "cross_rail": (24, 6)}[pattern]


def test_server_batches_are_whole_racks_bounded_by_the_share_of_a_rail(tmp_path):
    from tests.sitegen import generate_site

    dc1 = compile_site(DC1)
    servers = sorted(d.name for d in dc1.servers())
    stages = [s for s in plan_rollout(dc1, servers, batch="50%")]
    assert [s.devices for s in stages] == [("gpu1",), ("gpu2",), ("gpu3", "gpu4")]
    assert stages[0].name == "server canary"

    intent = compile_site(generate_site(tmp_path, rtsw=8, ctsw=2, nics=2))
    servers = sorted(d.name for d in intent.servers())
    limit = batch_size("25%", len(servers))
    stages = plan_rollout(intent, servers, batch="25%")
    assert sorted(n for s in stages for n in s.devices) == servers
    unit = {n: (intent.devices[n].zone, intent.devices[n].rack, intent.devices[n].su) for n in servers}
    sizes = {}
    for n in servers:
        sizes[unit[n]] = sizes.get(unit[n], 0) + 1
    for stage in stages[1:]:
        assert len(stage.devices) <= limit
        for u in {unit[n] for n in stage.devices}:      # a rack in a batch is in it whole (unless above the limit)
            assert sizes[u] > limit or all(unit[n] != u for s in stages if s is not stage for n in s.devices
                                           if s is not stages[0])
