"""Render a DeviceIntent into a candidate config: EOS CLI text or SONiC config_db JSON.

Templates live in ``templates/<platform>/main.j2`` and only format the intent. The few values a
template needs in a shape the intent does not hold (number ranges, DSCPs grouped by traffic class,
the distinct headroom profiles) are computed here by :func:`build_view`; it formats, it does not
derive addresses, ASNs or sizes.

Rendering is pure. ``render_device`` and the Nornir task ``render_config`` share one Jinja2
environment factory and one post-processing step, so both give the same bytes.

Only switches are rendered: a ``linux`` (GPU server) intent raises ``ValueError``; callers that
walk a whole site use :func:`render_site`, which skips servers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from nornir.core.task import Result, Task
from nornir_jinja2.plugins.tasks import template_file

from nr_run.intent.models import DeviceIntent, FabricIntent, Headroom
from nr_run.platforms.templates import template_dir

TEMPLATES_DIR = template_dir("eos").parent
RENDERED_PLATFORMS = ("eos", "sonic")
MAIN_TEMPLATE = "main.j2"
FILE_SUFFIX = {"eos": ".cfg", "sonic": ".json"}

# SONiC traditional-model buffer profiles besides the per-port lossless PG profiles. The intent has
# no field for them yet (asked of the lead: Buffers.profiles); the values are those of the Broadcom
# TH T1 BALANCED profile (sonic.md §1, BI:device/common/profiles/th/gen/BALANCED/buffers_defaults_t1.j2),
# the same source as the pool sizes in nr_run.intent.compile.
_LOSSY_PROFILE_SIZE = 0
_EGRESS_PROFILE_SIZE = 1518
_LOSSY_DYNAMIC_TH = 3


def make_env(templates_dir: Path | None = None, platform: str = "eos") -> Environment:
    """The one Jinja2 environment used by every render path (StrictUndefined: a missing value raises).

    Cached per (folder, platform) so a site of hundreds of switches compiles each template once;
    the loader still reloads a template whose file changed.
    """
    folder = Path(templates_dir) / platform if templates_dir is not None else template_dir(platform)
    return _env(str(folder.resolve()))


@lru_cache(maxsize=32)
def _env(folder: str) -> Environment:
    return Environment(
        loader=FileSystemLoader(folder),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def ranges(values: Iterable[int]) -> list[str]:
    """Compress integers into SONiC-style range strings: [0,1,2,4] -> ["0-2", "4"]."""
    out: list[str] = []
    nums = sorted(set(values))
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        out.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return out


def dscp_groups(dscp_to_tc: dict[int, int]) -> list[dict[str, Any]]:
    """DSCPs grouped by traffic class, sorted: [{"tc": 3, "dscps": [26]}, ...]."""
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in dscp_to_tc.items():
        by_tc.setdefault(tc, []).append(dscp)
    return [{"tc": tc, "dscps": sorted(by_tc[tc])} for tc in sorted(by_tc)]


def headroom_profiles(intent: DeviceIntent) -> list[Headroom]:
    """Distinct lossless PG headroom profiles of the device, sorted by name."""
    seen: dict[str, Headroom] = {}
    for itf in intent.interfaces:
        if itf.headroom is None:
            continue
        prev = seen.setdefault(itf.headroom.profile_name, itf.headroom)
        if prev != itf.headroom:
            raise ValueError(f"{intent.name}: headroom profile {prev.profile_name} has two different values")
    return [seen[name] for name in sorted(seen)]


def buffer_profiles(intent: DeviceIntent) -> list[dict[str, str]]:
    """The lossy / egress BUFFER_PROFILE entries (see the module constants for their source)."""
    if intent.buffers is None:
        return []
    pools = {p.name: p for p in intent.buffers.pools}
    out = [
        {"name": "ingress_lossy_profile", "pool": "ingress_lossless_pool",
         "size": str(_LOSSY_PROFILE_SIZE), "dynamic_th": str(_LOSSY_DYNAMIC_TH)},
        {"name": "egress_lossless_profile", "pool": "egress_lossless_pool",
         "size": str(_EGRESS_PROFILE_SIZE), "static_th": str(pools["egress_lossless_pool"].size)},
        {"name": "egress_lossy_profile", "pool": "egress_lossy_pool",
         "size": str(_EGRESS_PROFILE_SIZE), "dynamic_th": str(_LOSSY_DYNAMIC_TH)},
    ]
    missing = {p["pool"] for p in out} - set(pools)
    if missing:
        raise ValueError(f"{intent.name}: buffer pools missing from intent: {sorted(missing)}")
    return out


def tx_queues(intent: DeviceIntent) -> list[dict[str, Any]]:
    """One entry per configured egress queue: its scheduler (or None) and whether it marks ECN."""
    roce = intent.roce
    scheds = {s.queue: s for s in roce.schedulers}
    queues = set(scheds) | ({roce.ecn.queue} if roce.ecn.enabled else set())
    return [{"queue": q, "scheduler": scheds.get(q), "ecn": roce.ecn.enabled and q == roce.ecn.queue}
            for q in sorted(queues)]


def build_view(intent: DeviceIntent) -> dict[str, Any]:
    """Formatting helpers for the templates (platform-neutral shapes of intent values)."""
    roce = intent.roce
    all_queues = sorted(set(roce.tc_to_queue.values()))
    lossless_pgs = sorted({roce.tc_to_pg[p] for p in roce.lossless_priorities})
    peers = intent.bgp.peers if intent.bgp else []
    return {
        "dscp_groups": dscp_groups(roce.dscp_overrides),
        "lossless_csv": ",".join(str(p) for p in roce.lossless_priorities),
        "lossless_pg_ranges": ranges(lossless_pgs),
        "lossless_queue_ranges": ranges(roce.lossless_queues),
        "lossy_queue_ranges": ranges(q for q in all_queues if q not in roce.lossless_queues),
        "tx_queues": tx_queues(intent),
        "headroom_profiles": headroom_profiles(intent),
        "buffer_profiles": buffer_profiles(intent),
        # one peer-group "bfd" line when every peer wants BFD, else per-neighbor lines
        "bgp_group_bfd": bool(peers) and all(p.bfd for p in peers),
    }


def _check_platform(intent: DeviceIntent) -> None:
    if intent.platform not in RENDERED_PLATFORMS:
        raise ValueError(f"{intent.name}: platform {intent.platform!r} is not rendered (switches only)")


def finish(platform: str, text: str) -> str:
    """Post-process a rendered template; SONiC JSON is canonicalized so the bytes are deterministic."""
    if platform == "sonic":
        return json.dumps(json.loads(text), indent=4, sort_keys=True) + "\n"
    return text


def render_device(intent: DeviceIntent, templates_dir: Path | None = None) -> str:
    """Candidate config of one switch (EOS CLI text or SONiC config_db JSON text).

    Raises ValueError for a non-switch (linux) intent and jinja2.UndefinedError for a missing value.
    """
    _check_platform(intent)
    env = make_env(templates_dir, intent.platform)
    text = env.get_template(MAIN_TEMPLATE).render(intent=intent, view=build_view(intent), host=None)
    return finish(intent.platform, text)


def render_config(task: Task, intent: DeviceIntent, templates_dir: Path | None = None) -> Result:
    """Nornir task: render ``intent`` with nornir-jinja2's ``template_file``; result is the config text.

    Usable in a user's script: ``nr.run(task=render_config, intent=fabric.devices[name])`` per host.
    """
    _check_platform(intent)
    env = make_env(templates_dir, intent.platform)
    sub = task.run(task=template_file, template=MAIN_TEMPLATE, jinja_env=env,
                   intent=intent, view=build_view(intent))
    return Result(host=task.host, result=finish(intent.platform, sub.result))


def select_switches(fabric: FabricIntent, hosts: list[str] | None = None,
                    role: str | None = None) -> list[DeviceIntent]:
    """Rendered devices of a site, sorted by name, filtered by host names and role."""
    if hosts:
        unknown = sorted(set(hosts) - set(fabric.devices))
        if unknown:
            raise ValueError(f"unknown hosts: {', '.join(unknown)}")
    return [d for name, d in sorted(fabric.devices.items())
            if d.platform in RENDERED_PLATFORMS
            and (not hosts or name in hosts)
            and (role is None or d.role == role)]


def render_site(fabric: FabricIntent, hosts: list[str] | None = None,
                role: str | None = None, templates_dir: Path | None = None) -> dict[str, str]:
    """Configs of the site's switches (servers are skipped), keyed and sorted by device name."""
    return {d.name: render_device(d, templates_dir) for d in select_switches(fabric, hosts, role)}


def config_filename(intent: DeviceIntent) -> str:
    """``<host>.cfg`` for EOS, ``<host>.json`` for SONiC."""
    _check_platform(intent)
    return intent.name + FILE_SUFFIX[intent.platform]


def write_configs(configs: dict[str, str], out_dir: Path,
                  fabric: FabricIntent | None = None) -> dict[str, Path]:
    """Write each config to ``out_dir/<host>.cfg`` (EOS) or ``<host>.json`` (SONiC); paths keyed by host.

    The suffix comes from the device's platform when ``fabric`` is given, else from the text itself
    (a config_db file is a JSON object, EOS CLI never starts with "{").
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for name in sorted(configs):
        if fabric is not None:
            filename = config_filename(fabric.devices[name])
        else:
            filename = name + FILE_SUFFIX["sonic" if configs[name].lstrip().startswith("{") else "eos"]
        path = out / filename
        path.write_text(configs[name], encoding="utf-8")
        paths[name] = path
    return paths
