"""eAPI as EOS serves it: the HEAD probe clients send first, cookie sessions from /login, Basic auth refused
when wrong. TLS is verified against the lab's self-signed certificate (issued for 127.0.0.1)."""

from __future__ import annotations

import pytest
import requests

from tests.twin_site import TwinSite


class Eapi:
    def __init__(self, site: TwinSite) -> None:
        self.site = site
        self.ca = str(site.state / "tls" / "cert.pem")
        self.session = requests.Session()

    def url(self, host: str, path: str) -> str:
        return f"https://127.0.0.1:{self.site.addresses[host]['port']}{path}"

    def run(self, host: str, cmds: list[str], **kw: object) -> requests.Response:
        body = {"jsonrpc": "2.0", "method": "runCmds", "params": {"version": 1, "cmds": cmds, "format": "json"},
                "id": 1}
        return self.session.post(self.url(host, "/command-api"), json=body, timeout=10, verify=self.ca,
                                 **kw)  # type: ignore[arg-type]

    def post(self, host: str, path: str, body: dict | None = None) -> requests.Response:
        return self.session.post(self.url(host, path), json=body or {}, timeout=10, verify=self.ca)


@pytest.fixture
def eapi(twin: TwinSite):
    client = Eapi(twin)
    yield client
    client.session.close()


def test_head_probe_answers(eapi: Eapi):
    assert requests.head(eapi.url("ctsw1", "/command-api"), verify=eapi.ca, timeout=10).status_code == 200


def test_cookie_session_from_login(eapi: Eapi):
    assert eapi.run("ctsw1", ["show hostname"]).status_code == 401
    assert eapi.post("ctsw1", "/login", {"username": "admin", "password": "wrong"}).status_code == 401
    assert eapi.post("ctsw1", "/login", {"username": "admin", "password": "admin"}).status_code == 200
    assert eapi.run("ctsw1", ["show hostname"]).json()["result"][0]["hostname"] == "ctsw1"
    assert eapi.run("ctsw2", ["show hostname"]).status_code == 401     # a session belongs to its device
    eapi.post("ctsw1", "/logout")
    assert eapi.run("ctsw1", ["show hostname"]).status_code == 401


def test_wrong_basic_auth_is_refused(eapi: Eapi):
    assert eapi.run("ctsw1", ["show hostname"], auth=("admin", "wrong")).status_code == 401
    assert eapi.run("ctsw1", ["show hostname"], auth=("admin", "admin")).status_code == 200
