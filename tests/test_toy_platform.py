"""A platform from another distribution plugs in through the `nr_run.platforms` entry-point group and is
rendered, deployed (to a fake device behind its own Nornir connection plugin) and checked, while no
nr-run core file knows its name. The distribution lives under tests/toy_platform/dist (a dist-info with
entry_points.txt beside its package), found by importlib.metadata once that folder is on sys.path."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from nr_run.platforms import registry
from tests.conftest import SiteCopy

DIST = Path(__file__).resolve().parent / "toy_platform" / "dist"
TOY_HOST, TOY_ADDRESS = "rtsw2", "172.20.20.22"


@pytest.fixture
def toy_installed() -> Iterator[None]:
    sys.path.insert(0, str(DIST))
    registry.reload()
    yield
    sys.path.remove(str(DIST))
    for name in [m for m in sys.modules if m == "toy_nos" or m.startswith("toy_nos.")]:
        del sys.modules[name]
    from nornir.core.plugins.connections import ConnectionPluginRegister

    ConnectionPluginRegister.available.pop("toynos_fake", None)    # the next import registers its own
    registry.reload()


@pytest.fixture
def toy_site(site: SiteCopy) -> SiteCopy:
    """dc1 with rtsw2 running the toy NOS (same port layout as the EOS RTSWs)."""
    def hardware(data: dict) -> None:
        data["hardware"]["toy-rtsw"] = {**data["hardware"]["eos-rtsw"], "platform": "toynos", "model": "Toy-1"}
    site.edit("fabric.yaml", hardware)

    def host(data: dict) -> None:
        data[TOY_HOST]["groups"] = ["rtsw", "toynos"]
        data[TOY_HOST]["data"]["hardware"] = "toy-rtsw"
    site.edit("hosts.yaml", host)
    site.edit("groups.yaml", lambda data: data.setdefault("toynos", {"platform": "toynos"}))
    return site


def test_no_core_file_names_the_toy_platform() -> None:
    package = Path(str(resources.files("nr_run")))
    roots = [package, *(Path(str(resources.files(f"nr_run.{sub}"))) for sub in
                        ("runbooks", "validators", "lab", "templates"))]
    hits = [p for root in roots for p in root.rglob("*") if p.is_file() and p.suffix in (".py", ".j2", ".yaml")
            and "toynos" in p.read_text(encoding="utf-8", errors="replace")]
    assert hits == []


def test_unknown_platform_without_the_plugin_is_refused(toy_site: SiteCopy) -> None:
    from nr_run.platforms.site import load_site

    intent, findings = load_site(toy_site.path)
    errors = [f for f in findings if f.severity == "error"]
    assert intent is None or errors
    assert any("toynos" in f.message and f.host == TOY_HOST for f in errors), errors


def test_toy_platform_renders_deploys_and_is_checked(toy_installed: None, toy_site: SiteCopy, tmp_path: Path) -> None:
    import toy_nos

    from nr_run.platforms.site import load_site
    from nr_run.runbooks.check import run_checks
    from nr_run.runbooks.deploy import Deployment
    from nr_run.runbooks.inventory import init_nornir
    from nr_run.runbooks.progress import DeviceProgress
    from nr_run.runbooks.records import RunRecords
    from nr_run.runbooks.render import config_filename, render_site

    assert "toynos" in registry.names()
    intent, findings = load_site(toy_site.path)
    assert intent is not None, [str(f) for f in findings if f.severity == "error"]
    device = intent.devices[TOY_HOST]
    assert device.platform == "toynos"

    configs = render_site(intent, hosts=[TOY_HOST])
    text = configs[TOY_HOST]
    assert text.startswith(f"set system hostname {TOY_HOST}\n")
    assert [ln.split()[2] for ln in text.splitlines()[1:]] == [i.name for i in device.interfaces]
    assert config_filename(device) == f"{TOY_HOST}.toy"

    nr = init_nornir(toy_site.path.name, toy_site.path.parent, env={"NR_USERNAME": "u", "NR_PASSWORD": "p"})
    nr = nr.filter(filter_func=lambda h: h.name == TOY_HOST)
    records = RunRecords(tmp_path / "artifacts", intent.site, "deploy")
    toy_nos.RUNNING[TOY_ADDRESS] = f"set system hostname {TOY_HOST}\nmanagement ssh secret hunter2\n"
    run = Deployment(nr, intent, configs, records, DeviceProgress(None, [TOY_HOST]))
    run.dry_run()
    outcome = run.report.devices[TOY_HOST]
    # the rendered config drops the management line: the toy's own policy refuses it, secret masked
    assert outcome.state == "skipped" and "management ssh secret <removed>" in outcome.detail
    saved = (records.dir / "diffs" / f"{TOY_HOST}.diff").read_text()
    assert "hunter2" not in saved and "secret <removed>" in saved

    toy_nos.RUNNING[TOY_ADDRESS] = f"set system hostname {TOY_HOST}\n"
    run = Deployment(nr, intent, configs, records, DeviceProgress(None, [TOY_HOST]))
    run.dry_run()
    assert run.report.devices[TOY_HOST].state == "diffed"
    run.commit(canary=1, batch="1")
    assert run.report.devices[TOY_HOST].state == "confirmed"
    assert toy_nos.RUNNING[TOY_ADDRESS] == text

    report = run_checks(nr, intent, ["interfaces"])
    mine = [f for f in report.findings if f.device == TOY_HOST]
    assert len(mine) == len(device.interfaces) and all(f.passed for f in mine), mine

    # a wrong MTU on the fake device is found by the platform-neutral check through the toy collector
    toy_nos.RUNNING[TOY_ADDRESS] = text.replace(f"mtu {device.interfaces[0].mtu}", "mtu 1500", 1)
    report = run_checks(nr, intent, ["interfaces"])
    failed = [f for f in report.findings if f.device == TOY_HOST and not f.passed]
    assert [(f.target, f.observed) for f in failed] == [(device.interfaces[0].name, "mtu 1500")]


def test_a_platform_without_a_needed_capability_fails_closed(toy_installed: None, toy_site: SiteCopy) -> None:
    """`toybare` is the toy without QosView and MarksDevices: loading a site that uses it is refused with one
    line naming platform and capability (the safety analyses would pass vacuously), and so is a commit."""
    from nr_run.platforms.site import load_site
    from nr_run.runbooks.deploy import check_policies

    toy_site.edit("fabric.yaml", lambda d: d["hardware"]["toy-rtsw"].update(platform="toybare"))
    toy_site.edit("groups.yaml", lambda d: d.update(toynos={"platform": "toybare"}))
    assert registry.capabilities("toybare") == []
    _, findings = load_site(toy_site.path)
    refused = [f for f in findings if f.rule == "missing-capability"]
    assert [(f.host, f.field, f.message) for f in refused] == [
        (TOY_HOST, "hardware.toy-rtsw.platform",
         "platform toybare lacks capability QosView (config), needed by preflight: refused: the safety analyses "
         "would pass vacuously on the intent")]

    check_policies({"toybare"})                                  # a dry run needs no marker
    with pytest.raises(registry.MissingCapability) as refusal:
        check_policies({"toybare", "toynos"}, commit=True)
    assert str(refusal.value) == ("platform toybare lacks capability MarksDevices (deploy), needed by deploy "
                                  "--commit: refused: another operator's deploy from another host could not see "
                                  "this one")
    check_policies({"toynos"}, commit=True)


def test_a_part_missing_a_protocol_member_is_refused_at_load(toy_installed: None) -> None:
    import dataclasses

    import toy_nos

    class NoCheck:                     # a deploy policy that cannot say whether it is readable
        capabilities = toy_nos.platform.deploy.capabilities

        def redact(self, diff: str) -> str:
            return diff

        def lockouts(self, diff: str) -> list[str]:
            return []

    broken = dataclasses.replace(toy_nos.platform, deploy=NoCheck())
    with pytest.raises(TypeError, match=r"platform toynos: its deploy is not a DeployPolicy \(missing: check\)"):
        registry.check_parts("toynos", broken)
