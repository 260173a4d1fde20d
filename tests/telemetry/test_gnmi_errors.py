"""A gNMI client that cannot reach its device says why in GnmiUnavailable only: nothing on stdout (pygnmi's own
handler would print there, into `--json` output), and the password in no message or repr."""

from __future__ import annotations

import socket

import pytest

from nr_run.platforms.telemetry import GnmiTarget, GnmiUnavailable, connect

SECRET = "s3cret-Pw-42"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("insecure", [True, False])
def test_unreachable_gnmi_prints_nothing_and_hides_the_password(insecure: bool,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    target = GnmiTarget("rtsw1", "127.0.0.1", _closed_port(), "admin", SECRET, insecure=insecure,
                        tls_ca=None if insecure else __file__, timeout_s=1)
    with pytest.raises(GnmiUnavailable, match=r"rtsw1: gNMI at 127\.0\.0\.1") as info:
        connect(target)
    out, err = capsys.readouterr()
    assert out == ""
    assert SECRET not in str(info.value) and SECRET not in repr(target) and SECRET not in err
