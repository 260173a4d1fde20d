"""One switch's gNMI service: Capabilities, Get and Subscribe (ONCE, POLL, STREAM with SAMPLE / ON_CHANGE).

Handlers run in the lab's asyncio loop (grpc.aio), so they read the fabric like the CLI handlers do. Like
the real services, every RPC needs the device's username/password in the call metadata; an unreachable
device answers UNAVAILABLE and latency faults delay every answer. Set is not served (read-only telemetry).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import grpc
from pygnmi.spec.v080 import gnmi_pb2, gnmi_pb2_grpc

from nr_run.lab.twin.fabric import Fabric
from nr_run.lab.twin.gnmi.paths import Leaf, PathError, eos_leaves, sonic_value

GNMI_VERSION = "0.7.0"
MIN_SAMPLE_S = 0.1           # a shorter sample_interval is served at this rate
ON_CHANGE_CHECK_S = 0.1      # how often ON_CHANGE subscriptions look for a change
MODELS = {
    "eos": [("openconfig-interfaces", "OpenConfig working group", "3.0.0"),
            ("openconfig-if-ethernet", "OpenConfig working group", "2.13.0"),
            ("openconfig-qos", "OpenConfig working group", "0.7.0"),
            ("arista-eos-native", "Arista Networks, Inc.", "")],
    "sonic": [("sonic-db", "SONiC", "")],
}


@dataclass
class Device:
    """What the gNMI service of one node reads."""

    name: str
    platform: str                                   # "eos" | "sonic"
    fabric: Fabric
    credentials: tuple[str, str] | None
    running: Callable[[], Mapping[str, Any]] = dict        # SONiC: the running CONFIG_DB


def _elems(path: Any) -> list[tuple[str, dict[str, str]]]:
    return [(e.name, dict(e.key)) for e in path.elem]


def _matches(want: list[tuple[str, dict[str, str]]], leaf: Leaf) -> bool:
    if len(want) > len(leaf):
        return False
    for (name, keys), (lname, lkeys) in zip(want, leaf, strict=False):
        if name not in ("*", lname):
            return False
        have = dict(lkeys)
        if any(v != "*" and have.get(k) != v for k, v in keys.items()):
            return False
    return True


def _path(leaf: Leaf) -> Any:
    return gnmi_pb2.Path(elem=[gnmi_pb2.PathElem(name=n, key=dict(k)) for n, k in leaf])


def _typed(value: Any) -> Any:
    if isinstance(value, bool):
        return gnmi_pb2.TypedValue(bool_val=value)
    if isinstance(value, int):
        return gnmi_pb2.TypedValue(uint_val=value)
    if isinstance(value, (dict, list)):
        return gnmi_pb2.TypedValue(json_ietf_val=json.dumps(value, sort_keys=True).encode())
    return gnmi_pb2.TypedValue(string_val=str(value))


class Query:
    """One requested path resolved against a device: its current values keyed by update path."""

    def __init__(self, dev: Device, prefix: Any, path: Any) -> None:
        self.dev = dev
        self.origin = path.origin or (prefix.origin if prefix is not None else "")
        self.target = prefix.target if prefix is not None else ""
        self.want = (_elems(prefix) if prefix is not None else []) + _elems(path)
        self.prefix = gnmi_pb2.Path(origin=self.origin, target=self.target)

    def values(self) -> dict[Leaf, Any]:
        """Leaf -> value now (PathError when the device serves nothing there)."""
        now = time.time()
        if self.dev.platform == "sonic":
            names = [n for n, _ in self.want]
            value = sonic_value(self.dev.fabric, self.dev.name, self.dev.running(), self.target or "CONFIG_DB", names, now)
            return {tuple((n, ()) for n in names): value}
        if self.target:
            raise PathError(f"{self.dev.name} serves no target {self.target!r}")
        origin = "eos_native" if self.origin == "eos_native" else "openconfig"
        if self.origin not in ("", "openconfig", "eos_native"):
            raise PathError(f"{self.dev.name} serves no origin {self.origin!r}")
        leaves = eos_leaves(self.dev.fabric, self.dev.name, origin, now)
        found = {leaf: v for leaf, v in leaves.items() if _matches(self.want, leaf)}
        if not found:
            raise PathError(f"{self.dev.name} has no data at {self.origin or 'openconfig'}:/"
                            + "/".join(n for n, _ in self.want))
        return found

    def notification(self, values: Mapping[Leaf, Any]) -> Any:
        return gnmi_pb2.Notification(timestamp=time.time_ns(), prefix=self.prefix,
                                     update=[gnmi_pb2.Update(path=_path(leaf), val=_typed(v))
                                             for leaf, v in values.items()])


class GnmiServicer(gnmi_pb2_grpc.gNMIServicer):
    def __init__(self, dev: Device) -> None:
        self.dev = dev

    async def _admit(self, context: Any) -> None:
        """Credentials from the call metadata, reachability and latency faults, like the device's other services."""
        fabric = self.dev.fabric
        if not fabric.reachable(self.dev.name):
            await context.abort(grpc.StatusCode.UNAVAILABLE, "connection refused")
        md = {k: v for k, v in context.invocation_metadata() or ()}
        if self.dev.credentials is not None and (md.get("username"), md.get("password")) != self.dev.credentials:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "authentication failed")
        delay = fabric.faults.latency_ms(self.dev.name) / 1000
        if delay:
            await asyncio.sleep(delay)

    async def Capabilities(self, request: Any, context: Any) -> Any:  # noqa: N802 (gRPC method name)
        await self._admit(context)
        models = [gnmi_pb2.ModelData(name=n, organization=o, version=v) for n, o, v in MODELS[self.dev.platform]]
        return gnmi_pb2.CapabilityResponse(supported_models=models, gNMI_version=GNMI_VERSION,
                                           supported_encodings=[gnmi_pb2.JSON, gnmi_pb2.JSON_IETF])

    async def Get(self, request: Any, context: Any) -> Any:  # noqa: N802
        await self._admit(context)
        notes = []
        for path in request.path:
            query = Query(self.dev, request.prefix if request.HasField("prefix") else None, path)
            try:
                notes.append(query.notification(query.values()))
            except PathError as e:
                await context.abort(grpc.StatusCode.NOT_FOUND, str(e))
        return gnmi_pb2.GetResponse(notification=notes)

    async def Subscribe(self, request_iterator: AsyncIterator[Any], context: Any) -> AsyncIterator[Any]:  # noqa: N802
        await self._admit(context)
        first = await anext(aiter(request_iterator), None)
        if first is None or not first.HasField("subscribe"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first SubscribeRequest must carry a subscribe")
            return
        sl = first.subscribe
        prefix = sl.prefix if sl.HasField("prefix") else None
        subs = [(Query(self.dev, prefix, s.path), s) for s in sl.subscription]
        try:
            current = [q.values() for q, _ in subs]
        except PathError as e:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(e))
        if not sl.updates_only:
            for (q, _), values in zip(subs, current, strict=True):
                yield gnmi_pb2.SubscribeResponse(update=q.notification(values))
        yield gnmi_pb2.SubscribeResponse(sync_response=True)
        if sl.mode == gnmi_pb2.SubscriptionList.ONCE:
            return
        if sl.mode == gnmi_pb2.SubscriptionList.POLL:
            async for req in request_iterator:
                if req.HasField("poll"):
                    for q, _ in subs:
                        yield gnmi_pb2.SubscribeResponse(update=q.notification(q.values()))
                    yield gnmi_pb2.SubscribeResponse(sync_response=True)
            return
        closed = asyncio.Event()

        async def until_client_closes() -> None:
            async for _ in request_iterator:
                pass
            closed.set()

        watcher = asyncio.ensure_future(until_client_closes())
        try:
            async for response in self._stream(subs, current, closed):
                yield response
        finally:
            watcher.cancel()

    async def _stream(self, subs: list[tuple[Query, Any]], last: list[dict[Leaf, Any]],
                      closed: asyncio.Event) -> AsyncIterator[Any]:
        """SAMPLE subscriptions every sample_interval; ON_CHANGE (and TARGET_DEFINED) ones with the leaves that
        changed, checked every ON_CHANGE_CHECK_S; the stream ends when the client half-closes its side."""
        loop = asyncio.get_running_loop()
        due = []
        for _, s in subs:
            interval = max(MIN_SAMPLE_S, s.sample_interval / 1e9) if s.sample_interval else 1.0
            due.append((interval, loop.time() + interval))
        sampled = [i for i, (_, s) in enumerate(subs) if s.mode == gnmi_pb2.SAMPLE]
        while True:
            now = loop.time()
            wake = min([due[i][1] for i in sampled] + [now + ON_CHANGE_CHECK_S])
            try:
                # at least one real wait per round: the loop must leave time to the lab's other tasks
                await asyncio.wait_for(closed.wait(), max(0.001, wake - now))
                return
            except TimeoutError:
                pass
            if not self.dev.fabric.reachable(self.dev.name):
                return                          # the device went away: its stream ends
            now = loop.time()
            for i, (q, s) in enumerate(subs):
                try:
                    values = q.values()
                except PathError:
                    continue                    # the data went away (a port removed): nothing to send
                if s.mode == gnmi_pb2.SAMPLE:
                    interval, at = due[i]
                    if now >= at:
                        due[i] = (interval, at + interval * max(1, int((now - at) // interval) + 1))
                        yield gnmi_pb2.SubscribeResponse(update=q.notification(values))
                    continue
                changed = {leaf: v for leaf, v in values.items() if last[i].get(leaf) != v}
                last[i] = values
                if changed:
                    yield gnmi_pb2.SubscribeResponse(update=q.notification(changed))
