"""eAPI as EOS serves it: the HEAD probe clients send first, cookie sessions from /login, Basic auth refused
when wrong."""

from __future__ import annotations

import requests
import urllib3

from tests.twin_site import TwinSite

urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)   # the lab's self-signed certificate


def _url(site: TwinSite, host: str, path: str) -> str:
    return f"https://127.0.0.1:{site.addresses[host]['port']}{path}"


def _run(session: requests.Session, url: str, cmds: list[str], **kw: object) -> requests.Response:
    body = {"jsonrpc": "2.0", "method": "runCmds", "params": {"version": 1, "cmds": cmds, "format": "json"}, "id": 1}
    return session.post(url, json=body, verify=False, timeout=10, **kw)  # type: ignore[arg-type]


def test_head_probe_answers(twin: TwinSite):
    assert requests.head(_url(twin, "ctsw1", "/command-api"), verify=False, timeout=10).status_code == 200


def test_cookie_session_from_login(twin: TwinSite):
    with requests.Session() as s:
        assert _run(s, _url(twin, "ctsw1", "/command-api"), ["show hostname"]).status_code == 401
        assert s.post(_url(twin, "ctsw1", "/login"), json={"username": "admin", "password": "wrong"},
                      verify=False, timeout=10).status_code == 401
        assert s.post(_url(twin, "ctsw1", "/login"), json={"username": "admin", "password": "admin"},
                      verify=False, timeout=10).status_code == 200
        answer = _run(s, _url(twin, "ctsw1", "/command-api"), ["show hostname"]).json()
        assert answer["result"][0]["hostname"] == "ctsw1"
        # a session belongs to the device that issued it
        assert _run(s, _url(twin, "ctsw2", "/command-api"), ["show hostname"]).status_code == 401
        s.post(_url(twin, "ctsw1", "/logout"), verify=False, timeout=10)
        assert _run(s, _url(twin, "ctsw1", "/command-api"), ["show hostname"]).status_code == 401


def test_wrong_basic_auth_is_refused(twin: TwinSite):
    with requests.Session() as s:
        assert _run(s, _url(twin, "ctsw1", "/command-api"), ["show hostname"],
                    auth=("admin", "wrong")).status_code == 401
