"""Counters over gNMI (pygnmi), platform-neutral; polling is the fallback.

A platform that streams telemetry gives its plug-in a `TelemetryProfile` (`Platform.telemetry`): the gNMI
paths that carry the counters section, and a decoder from their values to the same `CounterSample` its
polling collector builds, so history, exporters and checks take either source.

- `collect_counters_gnmi(nr)`  one Get per device -> {host: CounterSample}; a device that does not offer
  gNMI (port closed, TLS or Capabilities failing) is polled through its platform collector instead, and
  `Collected.sources` says which source each device's sample came from.
- `subscribe_counters(target)`  a STREAM subscription (SAMPLE every interval, or ON_CHANGE) yielding one
  CounterSample per complete round of updates.

TLS verification is on: the device certificate must chain to the CA file given as the `gnmi` connection
option `tls_ca` (the lab overlay sets the twin's), else to the system's CA bundle; `insecure` (--insecure)
accepts any certificate, explicitly. Credentials are the host's (username/password call metadata).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nr_run.platforms.state import CounterSample

if TYPE_CHECKING:
    from nornir.core import Nornir
    from nornir.core.inventory import Host

GNMI = "gnmi"            # the Nornir connection-options name holding port, tls_ca and insecure


@dataclass(frozen=True)
class TelemetryProfile:
    """What one platform streams for the counters section.

    paths: gNMI paths ("origin:/a/b" or "a/b") read with Get and subscribed to; target: the prefix target
    (SONiC: "COUNTERS_DB"); context: paths read once before decoding (e.g. a port-alias table), as
    (target, path); decode(values, context, taken_at): {update path: value} -> CounterSample.
    """

    default_port: int
    paths: tuple[str, ...]
    decode: Callable[[Mapping[str, Any], Mapping[str, Any], float], CounterSample]
    target: str | None = None
    context: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class GnmiTarget:
    """Where and how to reach one device's gNMI service."""

    name: str
    host: str
    port: int
    username: str
    password: str = field(repr=False)       # never in a log line or a traceback's locals
    tls_ca: str | None = None
    insecure: bool = False
    timeout_s: float = 5.0


@dataclass
class Collected:
    samples: dict[str, CounterSample] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)      # host -> "gnmi" | "poll (<why gNMI failed>)"


class GnmiUnavailable(ConnectionError):
    """The device offers no usable gNMI service (closed port, TLS failure, Capabilities refused)."""


# ---------------------------------------------------------------- paths as pygnmi renders them

_ELEM = re.compile(r"([^/\[]+)((?:\[[^=\]]+=[^\]]*\])*)")
_KEY = re.compile(r"\[([^=\]]+)=([^\]]*)\]")


def split_path(path: str) -> list[tuple[str, dict[str, str]]]:
    """'a/b[k=v]/c' -> [("a", {}), ("b", {"k": "v"}), ("c", {})] (an origin prefix is dropped)."""
    path = path.split(":", 1)[1] if re.match(r"^[\w-]+:/", path) else path
    return [(m.group(1), dict(_KEY.findall(m.group(2)))) for m in _ELEM.finditer(path.strip("/"))]


# ---------------------------------------------------------------- transport

def _ca_file(target: GnmiTarget) -> str | None:
    """The CA file the device's certificate must chain to (None with insecure)."""
    if target.insecure:
        return None
    if target.tls_ca:
        return target.tls_ca
    # imported here: loading the platform plug-ins (every command does) needs no TLS
    import ssl

    default = ssl.get_default_verify_paths().cafile
    if not default:
        raise GnmiUnavailable(f"{target.name}: no CA to verify the gNMI certificate (set the gnmi option tls_ca, "
                              "or --insecure)")
    return default


def _quiet_pygnmi() -> None:
    """pygnmi attaches a handler that prints its errors on stdout: that would break `--json` output and put device
    errors on the screen. Its records go through the logging tree instead (a run's log file)."""
    log = logging.getLogger("pygnmi.client")
    for handler in list(log.handlers):
        if type(handler) is logging.StreamHandler:
            log.removeHandler(handler)


def connect(target: GnmiTarget) -> Any:
    """An open pygnmi client (Capabilities answered), or GnmiUnavailable with the cause."""
    from pygnmi.client import gNMIclient

    _quiet_pygnmi()
    try:
        ca = _ca_file(target)
        client = gNMIclient(target=(target.host, target.port), username=target.username, password=target.password,
                            path_cert=ca, skip_verify=target.insecure, gnmi_timeout=int(max(1, target.timeout_s)))
        client.connect(timeout=target.timeout_s)
    except GnmiUnavailable:
        raise
    except Exception as e:          # pygnmi wraps grpc, ssl and socket errors in several types
        raise GnmiUnavailable(f"{target.name}: gNMI at {target.host}:{target.port}: {_cause(e)}") from e
    return client


def _cause(e: BaseException) -> str:
    details = getattr(e, "details", None)
    text = details() if callable(details) else str(e)
    return " ".join(str(text).split())[:200] or type(e).__name__


def _updates(notifications: list[dict[str, Any]], into: dict[str, Any]) -> None:
    for note in notifications:
        for upd in note.get("update") or []:
            into[upd["path"]] = upd["val"]


def get_values(client: Any, paths: tuple[str, ...] | list[str], target: str | None) -> dict[str, Any]:
    """{update path: value} of one Get."""
    out: dict[str, Any] = {}
    kwargs = {"target": target} if target else {}
    reply = client.get(path=list(paths), encoding="json_ietf", **kwargs)
    _updates(reply.get("notification") or [], out)
    return out


def read_context(client: Any, profile: TelemetryProfile) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for target, path in profile.context:
        out.update(get_values(client, [path], target))
    return out


def sample_once(target: GnmiTarget, profile: TelemetryProfile) -> CounterSample:
    """One Get of the profile's paths, decoded (GnmiUnavailable when the device offers no gNMI)."""
    client = connect(target)
    try:
        context = read_context(client, profile)
        taken_at = time.monotonic()
        values = get_values(client, profile.paths, profile.target)
    except Exception as e:
        raise GnmiUnavailable(f"{target.name}: gNMI Get failed: {_cause(e)}") from e
    finally:
        client.close()
    return profile.decode(values, context, taken_at)


def subscribe_counters(target: GnmiTarget, profile: TelemetryProfile, *, interval_s: float = 1.0,
                       on_change: bool = False, max_samples: int | None = None) -> Iterator[CounterSample]:
    """Stream the profile's paths (SAMPLE every interval_s, or ON_CHANGE) and yield a CounterSample after the
    initial sync and after every update; the iterator ends after max_samples or when the stream ends."""
    client = connect(target)
    try:
        context = read_context(client, profile)
        mode = "on_change" if on_change else "sample"
        subscribe: dict[str, Any] = {"mode": "stream", "encoding": "json_ietf", "subscription": [
            {"path": p, "mode": mode, "sample_interval": int(interval_s * 1e9)} for p in profile.paths]}
        stream = client.subscribe2(subscribe=subscribe, target=profile.target) if profile.target \
            else client.subscribe2(subscribe=subscribe)
        values: dict[str, Any] = {}
        sent = 0
        try:
            # pygnmi hands the initial updates and the sync_response over as one message, then each update
            for msg in stream:
                if "update" not in msg:
                    continue
                _updates([msg["update"]], values)
                yield profile.decode(values, context, time.monotonic())
                sent += 1
                if max_samples is not None and sent >= max_samples:
                    return
        finally:
            stream.close()
    finally:
        client.close()


# ---------------------------------------------------------------- Nornir hosts

def target_for(host: Host, profile: TelemetryProfile, timeout_s: float = 5.0) -> GnmiTarget:
    """A host's gNMI endpoint: its hostname, the `gnmi` connection option's port (else the platform's), CA
    and insecure flag, and its credentials."""
    opts = host.connection_options.get(GNMI)
    extras = (opts.extras or {}) if opts else {}
    return GnmiTarget(name=host.name, host=str(host.hostname), port=int(opts.port if opts and opts.port
                                                                       else profile.default_port),
                      username=str(host.username or ""), password=str(host.password or ""),
                      tls_ca=extras.get("tls_ca"), insecure=bool(extras.get("insecure", False)), timeout_s=timeout_s)


def secure_gnmi(host: Host, insecure: bool) -> None:
    """Certificate verification for gNMI (on unless insecure)."""
    from nr_run.platforms.transport import set_options

    set_options(host, GNMI, extras={"insecure": insecure})


def gnmi_lab_overlay(host: Host, endpoint: Mapping[str, Any]) -> None:
    """A twin endpoint: its gNMI port, verified against the lab's own CA certificate."""
    from nr_run.platforms.transport import set_options

    if endpoint.get("gnmi_port"):
        set_options(host, GNMI, port=int(endpoint["gnmi_port"]),
                    extras={"tls_ca": endpoint.get("tls_ca"), "insecure": False})


def _poll(task: Any) -> Any:
    """The counters section through the platform's polling collector (the fallback)."""
    from nr_run.platforms import registry
    from nr_run.platforms.state import DeviceState

    collector = registry.get(str(task.host.platform)).collector
    device: Any = None          # the counters commands and parsers need no intent
    outputs = collector.runner(task)(collector.section_commands("counters", device))
    state = DeviceState(task.host.name, str(task.host.platform))
    collector.apply_section("counters", outputs, state, device, time.monotonic())
    return state.counters_first


def collect_counters_gnmi(nr: Nornir, *, fallback: bool = True, timeout_s: float = 5.0,
                          workers: int = 20) -> Collected:
    """Counters of every host whose platform has a TelemetryProfile, over gNMI; hosts without gNMI are polled
    (fallback=True) or left out with the reason in `sources`."""
    from nr_run.platforms import registry

    profiles = {name: registry.get(str(h.platform)).telemetry for name, h in nr.inventory.hosts.items()}
    hosts = {name: h for name, h in nr.inventory.hosts.items() if profiles[name] is not None}
    out = Collected()

    def one(name: str) -> tuple[str, CounterSample | None, str]:
        profile = profiles[name]
        assert profile is not None
        try:
            return name, sample_once(target_for(hosts[name], profile, timeout_s), profile), "gnmi"
        except GnmiUnavailable as e:
            return name, None, str(e)

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(hosts) or 1))) as pool:
        results = list(pool.map(one, sorted(hosts)))
    failed = {}
    for name, sample, how in results:
        if sample is not None:
            out.samples[name], out.sources[name] = sample, how
        else:
            failed[name] = how
    if failed and fallback:
        polled = nr.filter(filter_func=lambda h: h.name in failed).run(task=_poll, on_failed=True)
        for name, why in failed.items():
            result = polled.get(name)
            if result is not None and not result.failed and result.result is not None:
                out.samples[name] = result.result
                out.sources[name] = f"poll ({why})"
            else:
                out.sources[name] = f"none ({why}; polling failed too)"
    else:
        out.sources.update({name: f"none ({why})" for name, why in failed.items()})
    return out
