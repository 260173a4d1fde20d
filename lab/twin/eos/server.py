"""eAPI JSON-RPC over HTTP(S): `POST /command-api` with `runCmds`, Basic auth, EOS error objects.

One aiohttp application serves every EOS device; the local port a request arrived on selects the
device (pyeapi hardcodes the path, so one device needs one host:port).
"""

from __future__ import annotations

import asyncio
import base64
import json
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


def make_app(ctx: LabContext, devices_by_port: dict[int, EosDevice], before: Callable[[], None]) -> web.Application:
    user, password = ctx.credentials.get("eos", ("admin", "admin"))

    async def command_api(request: web.Request) -> web.StreamResponse:
        port = request.transport.get_extra_info("sockname")[1] if request.transport else 0
        dev = devices_by_port.get(port)
        if dev is None:
            raise web.HTTPNotFound()
        if ctx.fabric.faults.is_unreachable(dev.name):
            # a dead management plane: drop the connection without an answer
            if request.transport:
                request.transport.close()
            return web.Response(status=503)
        delay = ctx.latency_s(dev.name)
        if delay:
            await asyncio.sleep(delay)
        if not _auth_ok(request, user, password):
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
        try:
            body = await request.json()
        except ValueError:
            body = {}
        if body.get("username") == user and body.get("password") == password:
            resp = web.json_response({})
            resp.set_cookie("Session", base64.b64encode(f"{user}:{password}".encode()).decode())
            return resp
        return web.Response(status=401)

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/command-api", command_api)
    app.router.add_post("/login", login)
    return app
