"""Regression tests: hostile or malformed inventory input is refused with exit 3 naming file, host and field.

Config injection, path traversal, crashes on malformed files, loose values (one test per defect found by
the fuzz run on a second site).
"""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nr_run.cli.main import main
from nr_run.intent import compile_site
from nr_run.intent.errors import InventoryError
from nr_run.platforms.site import load_site
from nr_run.runbooks.render import render_device
from tests.conftest import REPO, unexpected
from tests.corpus import examples

# every line break str.splitlines() honours
LINE_BREAKS = ["\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def errors(site) -> list:
    intent, findings = load_site(site.path)
    return [f for f in findings if f.severity == "error"]


def render_rc(site, tmp_path) -> int:
    out = tmp_path / "out"
    rc = main(["render", "--site", site.path.name, "--inventory-dir", str(site.path.parent), "--out", str(out),
               "--artifacts", str(tmp_path / "art")])
    if rc == 3:
        assert not out.exists() or not any(out.iterdir()), "nothing may be written for an invalid site"
    return rc


def _rename_host(old: str, new: str):
    def edit(hosts: dict) -> None:
        hosts[new] = hosts.pop(old)
    return edit


INJECTIONS = {
    "host name": ("hosts.yaml", lambda d, v: d.__setitem__(f"rtsw1{v}username evil", d.pop("rtsw1")), ("", "name")),
    "hostname": ("hosts.yaml", lambda d, v: d["rtsw1"].__setitem__("hostname", f"172.20.20.21{v}username x"),
                 ("rtsw1", "hostname")),
    "site": ("fabric.yaml", lambda d, v: d.__setitem__("site", f"dc1{v}username x"), ("", "site")),
    "peer_group": ("fabric.yaml", lambda d, v: d["bgp"].__setitem__("peer_group", f"FABRIC{v}x"),
                   ("", "bgp.peer_group")),
    "roce profile": ("fabric.yaml", lambda d, v: d["roce_profiles"].__setitem__(f"roce{v}x", d["roce_profiles"]["roce"]),
                     ("", "roce_profiles")),
    "port_name": ("fabric.yaml", lambda d, v: d["hardware"]["eos-rtsw"].__setitem__("port_name", f"Ethernet{{n}}{v}x"),
                  ("", "hardware.eos-rtsw.port_name")),
}


@pytest.mark.parametrize("char", LINE_BREAKS, ids=[repr(c) for c in LINE_BREAKS])
@pytest.mark.parametrize("where", sorted(INJECTIONS))
def test_line_breaks_in_any_rendered_name_are_refused(site, tmp_path, where, char):
    file, edit, (host, field) = INJECTIONS[where]
    site.edit(file, lambda d: edit(d, char))
    found = errors(site)
    assert found, f"{where} with {char!r} accepted"
    assert any(f.file.endswith(file) and f.field.startswith(field) for f in found), found
    if host:
        assert any(f.host == host for f in found)
    assert render_rc(site, tmp_path) == 3


def test_crafted_hostname_cannot_add_a_user(site, tmp_path):
    site.edit("hosts.yaml", lambda d: d["rtsw1"].__setitem__(
        "hostname", "172.20.20.21\nusername evil privilege 15 secret evil"))
    [f] = errors(site)
    assert (f.host, f.field) == ("rtsw1", "hostname") and "not an IPv4 address" in f.message
    assert render_rc(site, tmp_path) == 3


def test_crafted_management_address_cannot_add_a_sonic_table(site, tmp_path):
    site.edit("hosts.yaml", lambda d: d["rtsw3"].__setitem__("hostname", '172.20.20.23/24", "AAA": {"x": "y'))
    [f] = errors(site)
    assert (f.host, f.field) == ("rtsw3", "hostname")
    assert render_rc(site, tmp_path) == 3


def test_management_interface_with_the_site_prefix_renders_once(site, tmp_path):
    site.edit("hosts.yaml", lambda d: d["rtsw1"].__setitem__("hostname", "172.20.20.21/24"))
    intent, findings = load_site(site.path)
    assert unexpected(findings) == [] and intent is not None
    text = render_device(intent.devices["rtsw1"], intent)
    assert "ip address 172.20.20.21/24\n" in text and "/24/24" not in text


@pytest.mark.parametrize("value, why", [
    ("10.0.0.1/16", "prefix length /16"), ("172.20.20.0", "network or broadcast"),
    ("172.20.20.255", "network or broadcast"), ("224.0.0.1", "cannot be"), ("127.0.0.1", "cannot be"),
    ("rtsw1.example.net", "not an IPv4"), ("300.1.1.1", "not an IPv4"), ("::1", "not an IPv4"),
])
def test_management_address_is_checked(site, value, why):
    site.edit("hosts.yaml", lambda d: d["rtsw1"].__setitem__("hostname", value))
    [f] = errors(site)
    assert (f.host, f.field) == ("rtsw1", "hostname") and why in f.message


@pytest.mark.parametrize("platform_host", ["rtsw1", "rtsw3"])
@pytest.mark.parametrize("char", ["\u2028", "\n", "\x00", '"', "\u202e"])
def test_render_guard_refuses_unsafe_strings_for_every_platform(site, platform_host, char):
    """A value that slipped past the schema (here: set on the compiled intent) still cannot reach a template."""
    intent, _ = load_site(site.path)
    device = intent.devices[platform_host]
    itf = device.interfaces[0].model_copy(update={"description": f"P2P{char}evil"})
    device = device.model_copy(update={"interfaces": [itf, *device.interfaces[1:]]})
    with pytest.raises(InventoryError) as exc:
        render_device(device, intent)
    [f] = exc.value.findings
    assert f.rule == "unsafe-value" and f.host == platform_host


_text = st.text(alphabet=st.sampled_from(["a", "7", " ", "-", "\n", '"', "\\", "\u2028", "\x00", "\u202e", "é",
                                          "\x7f", "\x1e"]),
                max_size=4)
_structured = st.recursive(
    st.none() | st.booleans() | st.integers() | _text,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(_text | st.integers(), inner, max_size=4),
    max_leaves=30)


@settings(max_examples=examples(300), deadline=None)
@given(_structured)
def test_render_guard_fast_pass_agrees_with_the_walk_that_names_the_value(value):
    """The guard decides the common (all safe) case without tracking paths; it must refuse exactly what the
    path-tracking walk refuses (that walk then names the value)."""
    from nr_run.platforms.guard import _all_safe, _walk

    assert _all_safe(value) == (_walk(value, "") is None)


@settings(max_examples=examples(300), deadline=None)
@given(_structured)
def test_render_guard_json_pass_never_passes_what_the_walk_refuses(value):
    """The guard's first pass (json's C encoder) may only say "safe" where the walk finds nothing to refuse;
    it may say "not proven" more often (non-ASCII text, values JSON cannot encode): the walk then decides."""
    from nr_run.platforms.guard import _json_safe, _walk

    if _json_safe(value):
        assert _walk(value, "") is None


@pytest.mark.parametrize("bad", ["\n", "\r", "\x00", "\x7f", "\x1c", '"', "\\", "\u2028", "\u202e", "\x85"])
@pytest.mark.parametrize("where", ["value", "key", "deep"])
def test_render_guard_refuses_each_character_wherever_it_sits(bad, where):
    from nr_run.platforms.guard import check_structured

    text = f"Ethernet1{bad}x"
    value = {"value": {"description": text}, "key": {text: "1"},
             "deep": {"interfaces": [{"name": "Ethernet2"}, {"bgp": [("peer", [text])]}]}}[where]
    with pytest.raises(InventoryError):
        check_structured(value, "rtsw1", "fabric.yaml")
    check_structured({"interfaces": [{"name": "Ethernet1", "description": "é ok"}]}, "rtsw1")


@pytest.mark.parametrize("name", ["../../x", "/abs", "..", "a/b", ".hidden", "x\\y", "a b", "a..b"])
def test_traversing_host_names_are_refused_at_the_schema(site, tmp_path, name):
    site.edit("hosts.yaml", _rename_host("rtsw1", name))
    found = errors(site)
    assert any(f.field == "name" and f.file.endswith("hosts.yaml") for f in found), found
    assert render_rc(site, tmp_path) == 3
    assert not (tmp_path.parent / "x.cfg").exists() and not (tmp_path / "x.cfg").exists()


# ---- malformed files: exit 3, never a traceback ---------------------------------------------------------

def _validate_rc(site) -> int:
    return main(["inventory", "validate", "--site", site.path.name, "--inventory-dir", str(site.path.parent)])


def test_duplicate_yaml_keys_are_an_error(site):
    text = (site.path / "fabric.yaml").read_text()
    (site.path / "fabric.yaml").write_text(text + "\nsite: other\n")
    [f] = errors(site)
    assert f.file.endswith("fabric.yaml") and "duplicate key 'site'" in f.message
    assert _validate_rc(site) == 3


@pytest.mark.parametrize("content", [
    b"\xff\xfe\x00bad", b"a: " + b"[" * 1000 + b"]" * 1000, b"x: " + b"{a: " * 1000 + b"1" + b"}" * 1000,
    b"1: {hostname: 10.0.0.1}\n", b"? [a, b]\n: 1\n", b"a: 2001-13-45\n", b"- a\n- b\n", b"a: &x [*x]\n",
    b"a: &a [1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    b"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    b"g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n",
], ids=["non-utf8", "deep-lists", "deep-maps", "int-host-key", "list-key", "bad-date", "top-list", "recursive",
        "billion-laughs"])
@pytest.mark.parametrize("file", ["hosts.yaml", "groups.yaml", "fabric.yaml"])
def test_malformed_files_exit_3(site, file, content):
    (site.path / file).write_bytes(content)
    assert errors(site)
    assert _validate_rc(site) == 3


def test_a_folder_where_a_file_belongs(site):
    (site.path / "groups.yaml").unlink()
    (site.path / "groups.yaml").mkdir()
    assert any("not a regular file" in f.message for f in errors(site))
    assert _validate_rc(site) == 3


@pytest.mark.parametrize("file, edit, field", [
    ("groups.yaml", lambda d: d.__setitem__("gpu", ["linux"]), ""),
    ("groups.yaml", lambda d: d["gpu"].__setitem__("groups", "linux"), "groups"),
    ("groups.yaml", lambda d: d["gpu"].__setitem__("data", [1, 2]), "data"),
    ("groups.yaml", lambda d: d["gpu"].__setitem__("groups", [["linux"]]), "groups"),
    ("hosts.yaml", lambda d: d["gpu1"].__setitem__("data", "role: gpu"), "data"),
    ("hosts.yaml", lambda d: d["gpu1"].__setitem__("groups", {"gpu": 1}), "groups"),
    ("hosts.yaml", lambda d: d["gpu1"].__setitem__("hostname", 17), "hostname"),
    ("hosts.yaml", lambda d: d["gpu1"].__setitem__("platform", ["linux"]), "platform"),
    ("hosts.yaml", lambda d: d.__setitem__("gpu1", [1]), ""),
    ("defaults.yaml", lambda d: d.__setitem__("data", 5), "data"),
])
def test_wrong_types_in_groups_and_data(site, file, edit, field):
    site.edit(file, edit)
    found = errors(site)
    assert any(f.file.endswith(file) and f.field == field for f in found), found
    assert _validate_rc(site) == 3


@pytest.mark.parametrize("port_name", ["Ethernet{n}{x}", "Ethernet{0}", "Ethernet", "{n}", "Eth{n}{n}",
                                       "Ethernet{n!r}", "Ethernet{n:>99999999}", "Eth {n}"])
def test_bad_port_name_formats(site, port_name):
    site.edit("fabric.yaml", lambda d: d["hardware"]["eos-rtsw"].__setitem__("port_name", port_name))
    assert [f.field for f in errors(site)] == ["hardware.eos-rtsw.port_name"]


def test_huge_lanes_per_port_is_refused_quickly(site):
    site.edit("fabric.yaml", lambda d: d["hardware"]["sonic-rtsw"].__setitem__("lanes_per_port", 10**12))
    assert [f.field for f in errors(site)] == ["hardware.sonic-rtsw.lanes_per_port"]


def test_deep_group_inheritance_is_linear(site, mocker):
    """24 levels, each group listing two parents of the level above: 2^24 paths, each group resolved once."""
    def edit(groups: dict) -> None:
        for level in range(24):
            for k in (0, 1):
                parents = [f"g{level + 1}_0", f"g{level + 1}_1"] if level < 23 else ["linux"]
                groups[f"g{level}_{k}"] = {"groups": parents, "data": {"tier": f"t{level}"}}
        groups["gpu"]["groups"] = ["g0_0", "g0_1"]
    site.edit("groups.yaml", edit)
    from nr_run.intent import source

    resolved = mocker.spy(source._Groups, "_resolve")
    intent, findings = load_site(site.path)
    assert unexpected(findings) == [] and intent is not None
    # one resolution per group (memoized, iterative): never one per path through the 2^24
    assert resolved.call_count == len(site.load("groups.yaml"))


def test_group_cycles_are_an_error(site):
    def edit(groups: dict) -> None:
        groups["a"] = {"groups": ["b"]}
        groups["b"] = {"groups": ["a"]}
        groups["gpu"]["groups"] = ["a"]
    site.edit("groups.yaml", edit)
    found = [f for f in errors(site) if "inherits from itself" in f.message]
    assert len(found) == 1 and found[0].field == "groups" and found[0].file.endswith("groups.yaml")


# ---- loose values ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("spelling", ["400g", " 400G", "400G"])
def test_speed_spellings_are_normalised(site, spelling):
    site.edit("fabric.yaml", lambda d: d["cabling"]["rules"][0].__setitem__("speed", spelling))
    intent, findings = load_site(site.path)
    assert unexpected(findings) == [] and {lk.speed_mbps for lk in intent.links} == {400_000}


@pytest.mark.parametrize("speed", ["400GB", "40G", "400", "4e2G", "400M", 400, "", "1000000G"])
def test_unknown_speeds_exit_3(site, speed):
    site.edit("fabric.yaml", lambda d: d["cabling"]["rules"][0].__setitem__("speed", speed))
    found = errors(site)
    assert [f.field for f in found] == ["cabling.rules.0.speed"], found
    assert _validate_rc(site) == 3


def test_cabling_rule_typo_is_one_error(site):
    site.edit("fabric.yaml", lambda d: d["cabling"]["rules"][1].__setitem__(
        "cable_lenght_m", d["cabling"]["rules"][1].pop("cable_length_m")))
    [f] = errors(site)
    assert f.field == "cabling.rules.1.cable_lenght_m" and "cable_length_m" in f.message


def test_unknown_rule_type_is_one_error(site):
    site.edit("fabric.yaml", lambda d: d["cabling"]["rules"][1].__setitem__("type", "rails"))
    assert [f.field for f in errors(site)] == ["cabling.rules.1"]


@pytest.mark.parametrize("path, value", [
    (("hardware", "eos-rtsw", "ports"), 10**9), (("hardware", "eos-rtsw", "port_step"), 0),
    (("cabling", "rules", 0, "cable_length_m"), 10**7), (("bgp", "keepalive"), 0), (("bgp", "holdtime"), 10**9),
    (("roles", "gpu", "mtu"), 100000), (("roce_profiles", "roce", "ecn", "max_kbytes"), 10**12),
    (("management", "prefix_length"), 31), (("policy", "max_oversubscription"), 1e308),
    (("hardware", "eos-rtsw", "uplinks", "count"), 10**6), (("asn", "ctsw"), 2**32),
])
def test_numbers_are_range_checked(site, path, value):
    def edit(d: dict) -> None:
        for key in path[:-1]:
            d = d[key]
        d[path[-1]] = value
    site.edit("fabric.yaml", edit)
    found = errors(site)
    assert [f.field for f in found] == [".".join(map(str, path))], found


def test_hostile_message_text_is_escaped(site):
    site.edit("fabric.yaml", lambda d: d["cabling"]["rules"][1].__setitem__("type", "rail\nERROR fake"))
    [f] = errors(site)
    assert "\n" not in f.message


def test_unparseable_yaml_is_one_line(site):
    (site.path / "hosts.yaml").write_text("a: [\n")
    [f] = errors(site)
    assert "\n" not in f.message


def test_dc1_round_trip_is_still_clean(site):
    site.save("fabric.yaml", yaml.safe_load((site.path / "fabric.yaml").read_text()))
    assert errors(site) == []


_config_db = st.dictionaries(_text, st.dictionaries(_text, st.dictionaries(_text, _text, max_size=3), max_size=3),
                             max_size=3)


@settings(max_examples=examples(300), deadline=None)
@given(_config_db)
def test_an_escape_free_config_db_text_proves_what_the_walk_would(doc):
    """SONiC's render is checked on its text: a text without an escape may only come from strings the walk
    passes (an escaped one sends render back to the walk)."""
    from nr_run.platforms.guard import _walk, escaped_json_safe
    from nr_run.platforms.sonic.config import to_json

    if escaped_json_safe(to_json(doc)):
        assert _walk(doc, "") is None


def test_a_shared_structured_config_is_proven_before_it_counts_as_proven():
    from nr_run.platforms.guard import check_structured, shared

    bad = shared({"nics": [{"name": "eth0\nreboot"}]})
    for _ in range(2):                            # refused each time: a refusal marks nothing
        with pytest.raises(InventoryError):
            check_structured(bad, "gpu1", "fabric.yaml")
    good = shared({"nics": [{"name": "eth0"}]})
    check_structured(good, "gpu1")
    check_structured(good, "gpu2")


def test_equal_servers_share_one_nic_config_and_script_while_different_ones_do_not():
    from nr_run.platforms.linux.config import LinuxConfig, structured_config

    fabric = compile_site(REPO / "inventory" / "dc1")
    servers = sorted(fabric.servers(), key=lambda d: d.name)
    a, b = servers[0], servers[1]
    assert structured_config(a) is structured_config(b)
    assert LinuxConfig().render(structured_config(a)) is LinuxConfig().render(structured_config(b))
    fewer = a.model_copy(update={"nics": a.nics[:1]})
    assert structured_config(fewer) is not structured_config(a)
    assert structured_config(fewer)["nics"] == structured_config(a)["nics"][:1]
