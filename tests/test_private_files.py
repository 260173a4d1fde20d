"""Private files: artifacts 0700/0600, the lab's TLS key created 0600, nothing written before the input is
valid, and the test session writes nothing into the checkout."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from nr_run.cli.main import main
from nr_run.runbooks.records import RunRecords
from tests.conftest import DC1


def _modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in [root, *root.rglob("*")]}


def test_run_records_are_private_whatever_the_umask(tmp_path):
    old = os.umask(0o000)
    try:
        records = RunRecords(tmp_path / "art", "dc1", "deploy")
        records.write("backup/rtsw1.running", "username admin secret x\n")
        records.write_json("results.json", {"ok": True})
        records.log("one line")
        records.audit("rtsw1", "commit", "+x", "confirmed")
    finally:
        os.umask(old)
    modes = _modes(tmp_path / "art")
    for path, mode in modes.items():
        is_dir = (tmp_path / "art" / path).is_dir()
        assert mode == (0o700 if is_dir else 0o600), (path, oct(mode))
    assert "audit.jsonl" in modes and "runs/dc1" in modes


def test_lab_tls_key_is_created_0600(tmp_path):
    from nr_run.lab.twin.tls import ensure_cert

    seen: list[int] = []
    real_open = os.open

    def watch(path, flags, mode=0o777, *a, **kw):
        if str(path).endswith("key.pem"):
            seen.append(mode)
        return real_open(path, flags, mode, *a, **kw)

    old = os.umask(0o000)
    os.open = watch                      # the mode the key file is created with, not one set afterwards
    try:
        cert, key = ensure_cert(tmp_path / "tls")
    finally:
        os.open = real_open
        os.umask(old)
    assert seen == [0o600]
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE((tmp_path / "tls").stat().st_mode) == 0o700
    assert cert.read_bytes().startswith(b"-----BEGIN CERTIFICATE-----")


def test_refused_runs_write_nothing(tmp_path, capsys, monkeypatch):
    art = tmp_path / "art"
    # bad option value, unknown host, --commit without a TTY: refused before any file is written
    assert main(["deploy", "--site", "dc1", "--inventory-dir", str(DC1.parent), "--artifacts", str(art),
                 "--option", "counters.interval_s=-1"]) == 3
    assert main(["deploy", "--site", "dc1", "--inventory-dir", str(DC1.parent), "--artifacts", str(art),
                 "--hosts", "nosuch"]) == 3
    assert main(["deploy", "--site", "dc1", "--inventory-dir", str(DC1.parent), "--artifacts", str(art),
                 "--commit"]) == 3
    # no credentials for the real devices
    for var in ("NR_USERNAME", "NR_PASSWORD", "NR_EOS_USERNAME", "NR_EOS_PASSWORD"):
        monkeypatch.delenv(var, raising=False)
    assert main(["deploy", "--site", "dc1", "--inventory-dir", str(DC1.parent), "--artifacts", str(art)]) == 3
    # a site held by another deploy: refused, and still nothing written
    from nr_run.runbooks.lock import SiteLock

    with SiteLock("dc1"):
        assert main(["deploy", "--site", "dc1", "--inventory-dir", str(DC1.parent), "--artifacts", str(art),
                     "--lab"]) == 1
    assert not art.exists()
    assert "locked by" in capsys.readouterr().out
