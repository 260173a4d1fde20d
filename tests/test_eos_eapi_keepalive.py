"""The kept-alive eAPI connection against a real HTTPS server (http.server over TLS, a socket per client
connection): requests share one TLS connection, a connection the server dropped is replaced without a
request running twice, and certificate verification stays on."""

from __future__ import annotations

import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pyeapi
import pytest

from nr_run.lab.twin.tls import ensure_cert
from nr_run.platforms.eos import eapi
from nr_run.platforms.eos.eapi import PersistentHttpsEapiConnection


def answer(cmd):
    command = cmd["cmd"] if isinstance(cmd, dict) else cmd
    return {"version": "4.32.1F", "modelName": "cEOSLab"} if command == "show version" else {"echo": command}


class Server:
    """An eAPI stand-in: answers runCmds with one {"echo": cmd} per command; counts connections and requests.
    `drop_after_reply`: closes each connection after its reply without saying so (as an idle timeout does);
    `say_close`: answers with `Connection: close`."""

    def __init__(self, tmp_path, drop_after_reply=False, say_close=False):
        self.connections, self.requests = 0, []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                server.connections += 1
                super().setup()

            def do_POST(self):  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body["params"]["cmds"])
                reply = json.dumps({"jsonrpc": "2.0", "id": body["id"],
                                    "result": [answer(c) for c in body["params"]["cmds"]]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                if say_close:
                    self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(reply)
                self.wfile.flush()
                if drop_after_reply:
                    self.close_connection = True

            def log_message(self, *args):
                pass

        cert, key = ensure_cert(tmp_path / "tls")
        self.cafile = str(cert)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(cert), str(key))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve(tmp_path):
    started = []

    def start(**kwargs):
        started.append(Server(tmp_path, **kwargs))
        return started[-1]

    yield start
    for s in started:
        s.stop()


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def node(server, clock=None, cafile=None):
    context = ssl.create_default_context(cafile=cafile or server.cafile)
    conn = PersistentHttpsEapiConnection("127.0.0.1", port=server.port, username="admin", password="admin",
                                         context=context, clock=clock or Clock())
    return pyeapi.client.Node(conn), conn


def test_requests_share_one_connection(serve):
    server = serve()
    dev, conn = node(server)
    replies = [dev.run_commands([f"show version {i}"]) for i in range(5)]
    assert [r[0]["echo"] for r in replies] == [f"show version {i}" for i in range(5)]
    assert server.connections == 1 and len(server.requests) == 5
    conn.close()
    dev.run_commands(["show clock"])          # a closed connection opens anew
    assert server.connections == 2


def test_a_dropped_connection_is_replaced_and_no_request_runs_twice(serve):
    server = serve(drop_after_reply=True)
    dev, _ = node(server)
    replies = [dev.run_commands([f"cmd {i}"]) for i in range(4)]
    assert [r[0]["echo"] for r in replies] == [f"cmd {i}" for i in range(4)]
    # pyeapi's `enable` goes first in every request; each request reached the server exactly once
    assert [cmds[-1] for cmds in server.requests] == [f"cmd {i}" for i in range(4)]
    assert server.connections == 4


def test_connection_close_from_the_server_is_honoured(serve):
    server = serve(say_close=True)
    dev, _ = node(server)
    for i in range(3):
        dev.run_commands([f"cmd {i}"])
    assert len(server.requests) == 3 and server.connections == 3


def test_an_idle_connection_is_not_reused(serve):
    server = serve()
    clock = Clock()
    dev, _ = node(server, clock)
    dev.run_commands(["a"])
    clock.now += eapi.IDLE_REUSE_S - 1
    dev.run_commands(["b"])
    assert server.connections == 1
    clock.now += eapi.IDLE_REUSE_S + 1
    dev.run_commands(["c"])
    assert server.connections == 2 and len(server.requests) == 3


def test_an_untrusted_certificate_is_refused(serve, tmp_path):
    server = serve()
    other, _ = ensure_cert(tmp_path / "other-ca")
    dev, _ = node(server, cafile=str(other))
    with pytest.raises(pyeapi.eapilib.ConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
        dev.run_commands(["show version"])
    assert server.requests == []


def test_the_eos_plugin_gives_napalm_the_kept_alive_connection(serve):
    from napalm.eos.eos import EOSDriver
    from nornir.core.inventory import Host

    from nr_run.platforms.eos.transport import EosTransport

    server = serve()
    host = Host("ctsw1", platform="eos")
    EosTransport().secure(host, insecure=False)
    args = dict(host.connection_options["napalm"].extras["optional_args"])
    assert args["enforce_verification"] is True and args["transport"] is PersistentHttpsEapiConnection
    driver = EOSDriver("127.0.0.1", "admin", "admin", optional_args={
        **args, "port": server.port, "context": ssl.create_default_context(cafile=server.cafile)})
    driver.open()
    driver.device.run_commands(["show clock"])
    driver.device.run_commands(["show interfaces"])
    assert server.connections == 1 and len(server.requests) == 3
