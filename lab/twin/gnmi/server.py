"""One switch's gNMI service: Capabilities, Get and Subscribe (ONCE, POLL, STREAM with SAMPLE / ON_CHANGE).

Handlers run in the lab's asyncio loop (grpc.aio), so they read the fabric like the CLI handlers do. Like
the real services, every RPC needs the device's username/password in the call metadata; an unreachable
device answers UNAVAILABLE and latency faults delay every answer. Set is not served (read-only telemetry).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import grpc
from pygnmi.spec.v080 import gnmi_pb2, gnmi_pb2_grpc

from nr_run.lab.twin.fabric import Fabric
from nr_run.lab.twin.gnmi.paths import Leaf, PathError
from nr_run.lab.twin.personality import Personality

GNMI_VERSION = "0.7.0"
MIN_SAMPLE_S = 0.1           # a shorter sample_interval is served at this rate
ON_CHANGE_CHECK_S = 0.1      # how often ON_CHANGE subscriptions look for a change


@dataclass
class Device:
    """What the gNMI service of one node reads."""

    name: str
    personality: Personality                        # what the platform serves at a path
    fabric: Fabric
    credentials: tuple[str, str] | None
    service: Any = None                             # the platform's PlatformService (SONiC: CONFIG_DB)


def _elems(path: Any) -> list[tuple[str, dict[str, str]]]:
    return [(e.name, dict(e.key)) for e in path.elem]


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
        dev = self.dev
        return dict(dev.personality.gnmi_values(dev.fabric, dev.service, dev.name, self.origin, self.target,
                                                self.want, time.time()))

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
        models = [gnmi_pb2.ModelData(name=n, organization=o, version=v) for n, o, v in self.dev.personality.gnmi_models]
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
