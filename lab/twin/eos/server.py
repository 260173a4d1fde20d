"""eAPI JSON-RPC over HTTP(S): `POST /command-api` with `runCmds`, EOS error objects.

One aiohttp application serves every EOS device; the local port a request arrived on selects the
device (pyeapi hardcodes the path, so one device needs one host:port).
Authentication as EOS does it: HTTP Basic on every request, or a `Session` cookie from `POST /login`
(`/logout` ends it). `HEAD /command-api` answers like EOS's web server (clients such as ANTA probe it).
Only the protocols the device's `management api http-commands` enables are served (cEOS default: HTTPS only);
a request on a disabled one gets its connection closed, as a closed port would.
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
from collections.abc import Callable

from aiohttp import web

from nr_run.lab.twin.eos.device import EosDevice
from nr_run.lab.twin.eos.runner import run_request
from nr_run.lab.twin.platforms import LabContext


def _auth_ok(request: web.Request, user: str, password: str) -> bool:
    header = request.headers.get("Authorization", "")
    if not header.startswith("Basic "):
        return False
    try:
        got = base64.b64decode(header[6:]).decode()
    except ValueError:
        return False
    return got == f"{user}:{password}"


def _cmd_text(cmd: object) -> str:
    return str(cmd.get("cmd", "")) if isinstance(cmd, dict) else str(cmd)


def protocols(dev: EosDevice) -> set[str]:
    """The eAPI protocols the running config enables: https unless `no protocol https`, http only if configured."""
    block = dev.running.root.child("management api http-commands")
    if block is None or "shutdown" in block.lines():
        return set()
    lines = block.lines()
    # the config tree drops a `protocol https` line on `no protocol https`: HTTPS is on when configured, or when
    # no protocol is configured at all (EOS's default)
    explicit = [line for line in lines if line.startswith("protocol ")]
    enabled = {"https"} if "protocol https" in lines or not explicit else set()
    if any(line == "protocol http" or line.startswith("protocol http port") for line in lines):
        enabled.add("http")
    return enabled


def make_app(ctx: LabContext, devices_by_port: dict[int, EosDevice], before: Callable[[], None]) -> web.Application:
    user, password = ctx.credentials.get("eos", ("admin", "admin"))
    sessions: dict[str, str] = {}          # Session cookie -> device name

    def device(request: web.Request) -> EosDevice | None:
        """The device this request reached, or None (connection dropped) when it would not answer."""
        port = request.transport.get_extra_info("sockname")[1] if request.transport else 0
        dev = devices_by_port.get(port)
        if dev is None:
            raise web.HTTPNotFound()
        protocol = "https" if request.secure else "http"
        # a dead management plane, or a protocol the device does not serve: the connection dies unanswered
        if not ctx.fabric.reachable(dev.name) or protocol not in protocols(dev):
            if request.transport:
                request.transport.abort()
            return None
        return dev

    def authorized(request: web.Request, dev: EosDevice) -> bool:
        cookie = request.cookies.get("Session")
        return _auth_ok(request, user, password) or (cookie is not None and sessions.get(cookie) == dev.name)

    async def probe(request: web.Request) -> web.StreamResponse:
        if device(request) is None:
            return web.Response(status=503)
        return web.Response(status=200, content_type="application/json")

    async def command_api(request: web.Request) -> web.StreamResponse:
        dev = device(request)
        if dev is None:
            return web.Response(status=503)
        delay = ctx.latency_s(dev.name)
        if delay:
            await asyncio.sleep(delay)
        if not authorized(request, dev):
            return web.Response(status=401, text="Unauthorized", headers={"WWW-Authenticate": 'Basic realm="eAPI"'})
        try:
            body = json.loads(await request.read())
        except ValueError:
            return web.json_response({"jsonrpc": "2.0", "id": None,
                                      "error": {"code": -32700, "message": "Parse error"}})
        req_id = body.get("id")
        params = body.get("params") or {}
        if body.get("method") != "runCmds":
            return web.json_response({"jsonrpc": "2.0", "id": req_id,
                                      "error": {"code": -32601, "message": "Method not found"}})
        cmds = params.get("cmds") or []
        fmt = params.get("format", "json")
        for c in cmds:
            ctx.log(dev.name, fmt, _cmd_text(c))
        before()
        outputs, failure, idx = run_request(dev, cmds, fmt)
        if failure is None:
            return web.json_response({"jsonrpc": "2.0", "id": req_id, "result": outputs})
        message = f"CLI command {idx + 1} of {len(cmds)} '{_cmd_text(cmds[idx])}' failed: {failure.reason}"
        data = outputs + [{"errors": failure.errors}]
        return web.json_response({"jsonrpc": "2.0", "id": req_id,
                                  "error": {"code": failure.code, "message": message, "data": data}})

    async def login(request: web.Request) -> web.StreamResponse:
        dev = device(request)
        if dev is None:
            return web.Response(status=503)
        try:
            body = await request.json()
        except ValueError:
            body = {}
        if not isinstance(body, dict) or body.get("username") != user or body.get("password") != password:
            return web.json_response({"error": {"code": 401, "message": "Authentication failed"}}, status=401)
        token = secrets.token_urlsafe(24)
        sessions[token] = dev.name
        resp = web.json_response({})
        resp.set_cookie("Session", token, secure=request.secure, httponly=True)
        return resp

    async def logout(request: web.Request) -> web.StreamResponse:
        sessions.pop(request.cookies.get("Session", ""), None)
        return web.json_response({})

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/command-api", command_api)
    app.router.add_route("HEAD", "/command-api", probe)
    app.router.add_post("/login", login)
    app.router.add_post("/logout", logout)
    return app
