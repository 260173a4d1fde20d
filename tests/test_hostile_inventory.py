"""Hostile-input suite: hypothesis mutates dc1's inventory files and the command line.

Property for every mutation: the command exits 0 or 3 (never a traceback), within 10 s, and when the site is
accepted every rendered line comes from a template line (tests/render_property.py). Runs in-process: about
1,100 cases in CI (INVENTORY_CASES + CLI_CASES), derandomized so a failure reproduces.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nr_run.cli.main import main
from nr_run.intent.source import DEFAULTS, FABRIC, GROUPS, HOSTS
from nr_run.platforms.site import load_site
from tests.conftest import DC1
from tests.render_property import assert_lines_come_from_templates

INVENTORY_CASES = 850
CLI_CASES = 250
FILES = (HOSTS, GROUPS, DEFAULTS, FABRIC)
ORIGINAL = {name: yaml.safe_load((DC1 / name).read_text()) for name in FILES}
LINE_BREAKS = ["\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]

def _settings(cases: int) -> settings:
    return settings(max_examples=cases, deadline=None, derandomize=True, database=None, print_blob=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large])

tricky_text = st.one_of(
    st.text(max_size=24),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=12),
    st.sampled_from(LINE_BREAKS).map(lambda c: f"x{c}username evil privilege 15 secret x"),
    st.builds(lambda a, c, b: f"{a}{c}{b}", st.sampled_from(["rtsw1", "172.20.20.21", "FABRIC", "roce", "dc1",
                                                             "Ethernet{n}", "400G"]),
              st.sampled_from(LINE_BREAKS + ["\x00", "\t", " ", '"', "\\", "\u202e", "\x1b[2J", "}", "{"]),
              st.sampled_from(["", "x", "AAA", '", "AAA": {"x": "y'])),
    st.sampled_from(["../../x", "/abs", "..", ".", "", " ", "a b", "{n}", "{0}", "{n}{n}", "Eth{n!r}",
                     "{n:>999999999}", "%s%n", "${HOME}", "{{ 7 * 7 }}", "{% raw %}", "!", "end", "a" * 5000,
                     "10.0.0.1/24", "10.0.0.1/8", "0.0.0.0", "255.255.255.255", "::1", "1e309", "0x10",
                     "400g", "400GB", "40G", "100 G", "yes", "null", "~", "-1", "4294967296", "CON", "nul"]),
)
numbers = st.one_of(st.integers(-(2**70), 2**70), st.sampled_from([0, -1, 1, 2**31, 2**32, 4294967295, 10**12]),
                    st.floats(allow_nan=True, allow_infinity=True))
hostile_value = st.recursive(
    st.one_of(tricky_text, numbers, st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.one_of(tricky_text, st.integers(0, 9)), inner, max_size=3)),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into a YAML document (mapping keys and list indexes), containers included."""
    out = [prefix] if prefix else []
    if len(prefix) > 12:        # a mutation may have nested deeper; its inside is not worth a path
        return out
    if isinstance(value, dict):
        for key, sub in value.items():
            out += _paths(sub, prefix + (key,))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            out += _paths(sub, prefix + (i,))
    return out


def _parent(doc: Any, path: tuple) -> Any:
    for key in path[:-1]:
        doc = doc[key]
    return doc


def _set(file: str, *path: Any) -> Any:
    def edit(docs: dict[str, Any], value: Any) -> None:
        target = docs[file]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


# well-typed edits that collide, overlap or exceed: the semantic rules must refuse them (or accept them cleanly)
SEMANTIC: list[tuple[Any, Any]] = [
    (_set(FABRIC, "pools", "host_p2p"), "10.254.0.0/16"), (_set(FABRIC, "pools", "loopback", "rtsw"), "172.20.20.0/24"),
    (_set(FABRIC, "pools", "loopback", "ctsw"), "10.254.0.0/26"), (_set(FABRIC, "pools", "host_p2p"), "10.10.0.0/26"),
    (_set(FABRIC, "pools", "fabric_p2p"), "10.254.0.0/29"), (_set(HOSTS, "rtsw2", "hostname"), "172.20.20.21"),
    (_set(HOSTS, "rtsw2", "data", "index"), 1), (_set(HOSTS, "gpu2", "data", "su"), 2),
    (_set(FABRIC, "asn", "rtsw_base"), 4294967294), (_set(FABRIC, "asn", "rtsw_base"), 65099),
    (_set(FABRIC, "hardware", "sonic-rtsw", "ports"), 64), (_set(FABRIC, "hardware", "eos-rtsw", "ports"), 8),
    (_set(FABRIC, "hardware", "gpu-2nic", "speed"), "100G"), (_set(FABRIC, "cabling", "rules", 1, "speed"), "100g"),
    (_set(FABRIC, "roles", "gpu", "mtu"), 4000), (_set(HOSTS, "gpu1", "data", "mtu"), 9216),
    (_set(HOSTS, "gpu1", "data", "mtu"), 4200), (_set(FABRIC, "bgp", "maximum_paths"), 1),
    (_set(FABRIC, "management", "gateway"), "10.0.0.1"), (_set(FABRIC, "management", "gateway"), "172.20.20.21"),
    (_set(FABRIC, "roce_profiles", "roce", "lossless_priorities"), [3, 4]),
    (_set(FABRIC, "roce_profiles", "roce", "lossless_priorities"), [6]),
    (_set(FABRIC, "hardware", "eos-rtsw", "uplinks"), {"from": 0, "count": 1}),
    (_set(FABRIC, "hardware", "gpu-2nic", "downlinks"), {"from": 0, "count": 1}),
    (_set(FABRIC, "hardware", "gpu-2nic", "ports"), 4), (_set(FABRIC, "policy", "max_oversubscription"), 0.5),
    (_set(FABRIC, "cabling", "overrides"), [{"a": "rtsw1:Ethernet2", "remove": True}]),
    (_set(FABRIC, "cabling", "overrides"), [{"a": "gpu1:eth2", "remove": True}]),
    (_set(FABRIC, "cabling", "overrides"), [{"a": "rtsw1:Ethernet9", "b": "ctsw1:Ethernet9", "speed": "400G",
                                             "cable_length_m": 5, "add": True}]),
    (_set(FABRIC, "cabling", "overrides"), [{"a": "rtsw1:Ethernet1", "b": "ctsw2:Ethernet1", "cable_length_m": 5}]),
    (_set(FABRIC, "cabling", "rules", 0, "cable_length_m"), 10000), (_set(HOSTS, "rtsw1", "data", "roce_profile"), "nope"),
    (_set(HOSTS, "ctsw2", "data", "hardware"), "sonic-rtsw"), (_set(HOSTS, "rtsw4", "data", "hardware"), "eos-rtsw"),
]


def _mutate(data: st.DataObject, docs: dict[str, Any]) -> dict[str, bytes]:
    """One to three structural mutations of the parsed files, then maybe a raw-text trick; the files' bytes."""
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        if data.draw(st.integers(0, 9), label="kind") < 4:
            edit, value = data.draw(st.sampled_from(SEMANTIC), label="semantic")
            with contextlib.suppress(KeyError, IndexError, TypeError):
                edit(docs, value)
            continue
        name = data.draw(st.sampled_from(FILES), label="file")
        paths = _paths(docs[name])
        op = data.draw(st.sampled_from(["set", "set", "set", "rename", "delete", "copy", "deep", "huge"]), label="op")
        if not paths:
            docs[name] = data.draw(hostile_value, label="top")
            continue
        path = data.draw(st.sampled_from(paths), label="path")
        parent = _parent(docs[name], path)
        key = path[-1]
        if op == "set":
            parent[key] = data.draw(hostile_value, label="value")
        elif op == "rename" and isinstance(parent, dict):
            parent[data.draw(st.one_of(tricky_text, st.integers(), st.booleans()), label="key")] = parent.pop(key)
        elif op == "delete":
            del parent[key]
        elif op == "copy":      # overlaps: one value reused where another belongs
            src = data.draw(st.sampled_from(paths), label="from")
            parent[key] = _parent(docs[name], src)[src[-1]]
        elif op == "deep":
            value: Any = "x"
            for _ in range(data.draw(st.integers(30, 1500), label="depth")):
                value = [value]
            parent[key] = value
        elif op == "huge":
            parent[key] = data.draw(st.sampled_from([10**6, 10**12, 2**63, "x" * 100_000, list(range(5000))]))
    out: dict[str, bytes] = {}
    for name in FILES:
        try:
            text = yaml.safe_dump(docs[name], sort_keys=False, allow_unicode=True, width=10**9)
        except (yaml.YAMLError, RecursionError, ValueError):
            text = "{}\n"
        out[name] = text.encode("utf-8", "surrogatepass")
    trick = data.draw(st.sampled_from(["none"] * 6 + ["dupkey", "tag", "bomb", "bytes", "truncate", "merge",
                                                      "anchor"]), label="trick")
    name = data.draw(st.sampled_from(FILES), label="trick-file")
    raw = out[name]
    if trick == "dupkey":
        first = raw.split(b"\n", 1)[0]
        out[name] = raw + b"\n" + first + b"\n"
    elif trick == "tag":
        out[name] = b"x: !!python/object/apply:os.system ['true']\n" + raw
    elif trick == "bomb":
        lines = [b"a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
        lines += [b"a%d: &a%d [" % (i, i) + b", ".join([b"*a%d" % (i - 1)] * 10) + b"]" for i in range(1, 9)]
        out[name] = b"\n".join(lines) + b"\n" + raw
    elif trick == "bytes":
        pos = data.draw(st.integers(0, max(0, len(raw) - 1)), label="pos")
        out[name] = raw[:pos] + data.draw(st.binary(min_size=1, max_size=4), label="bytes") + raw[pos:]
    elif trick == "truncate":
        out[name] = raw[: data.draw(st.integers(0, len(raw)), label="cut")]
    elif trick == "merge":
        out[name] = b"base: &b {role: gpu}\n" + raw.replace(b"data:", b"data:\n    <<: *b\n   ", 1)
    elif trick == "anchor":
        out[name] = raw + b"\nextra: &e [1, *e]\n"
    return out


def _write_site(files: dict[str, bytes]) -> Path:
    root = Path(tempfile.mkdtemp(prefix="hostile-"))
    site = root / "site"
    site.mkdir()
    for name, content in files.items():
        (site / name).write_bytes(content)
    return site


@contextlib.contextmanager
def _quiet() -> Any:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        yield err


@pytest.fixture(autouse=True)
def _no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("NR_USERNAME", "NR_PASSWORD", "NR_RUN_LAB_STATE_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)        # anything a command writes by default lands here


OUTCOMES: Counter[str] = Counter()


@pytest.mark.long
def test_mutated_inventory_exits_0_or_3_and_renders_only_template_lines() -> None:
    OUTCOMES.clear()
    _mutated_inventory()
    print(f"hostile inventory outcomes: {dict(OUTCOMES.most_common())}")
    # the suite must exercise both sides: accepted sites (rendered and line-checked) and many kinds of refusal
    assert sum(OUTCOMES.values()) >= INVENTORY_CASES
    # at least 1 in 30 accepted: since the inventory declares its format version and per-NIC settings, more of the
    # same mutations land in the schema (38 of 850 accepted on the full corpus)
    assert OUTCOMES["accepted"] >= INVENTORY_CASES // 30, OUTCOMES
    assert len(OUTCOMES) >= 6, OUTCOMES


@_settings(INVENTORY_CASES)
@given(st.data())
def _mutated_inventory(data: st.DataObject) -> None:
    docs = {name: yaml.safe_load(yaml.safe_dump(doc)) for name, doc in ORIGINAL.items()}
    site = _write_site(_mutate(data, docs))
    try:
        intent, findings = load_site(site)
        errors = [f for f in findings if f.severity == "error"]
        OUTCOMES["accepted" if not errors else f"refused: {sorted({f.rule for f in errors})[0]}"] += 1
        assert all(f.file.startswith(str(site)) and "\n" not in f.message for f in findings)
        if not errors:
            assert intent is not None
            assert_lines_come_from_templates(intent)
        out = site.parent / "out"
        with _quiet() as err:
            rc = main(["render", "--site", "site", "--inventory-dir", str(site.parent), "--out", str(out), "--json"])
        assert rc == (3 if errors else 0), err.getvalue()[-2000:]
        assert "Traceback" not in err.getvalue()
        written = sorted(p.relative_to(site.parent) for p in site.parent.rglob("*") if p.is_file())
        assert all(p.parts[0] in ("site", "out") and len(p.parts) == 2 for p in written), written
    finally:
        shutil.rmtree(site.parent, ignore_errors=True)


_HOSTILE_ARG = st.one_of(tricky_text, numbers.map(str))
# per flag: values a user would type (most draws, so commands get past parsing) and hostile ones
_FLAG_VALUES: dict[str, list[str]] = {
    "--workers": ["1", "20", "1000", "0", "-1", "1001"], "--canary": ["0", "1", "5", "-1"],
    "--confirm-timeout": ["30", "60", "3600", "0", "-5", str(10**12)], "--every": ["10s", "15m", "1h", "0s", "8d"],
    "--hosts": ["rtsw1", "rtsw1,rtsw3", "ctsw1, ctsw2", "gpu1", "nope", "", ","],
    "--batch": ["1", "25%", "100%", "0", "150%", "x"], "--role": ["rtsw", "ctsw", "gpu"],
    "--checks": ["pfc", "ecn,bgp", "routing", "rails", "nope"],
    "--option": ["counters.interval_s=0.2", "rdma.pattern=all", "rdma.pattern=star", "x.y=1", "rdma.seconds=0"],
    "--format": ["json", "table,junit", "html,prom", "nope"], "--latency-ms": ["0", "10", "-1"],
    "--out": ["out", "a/b/c"], "--artifacts": ["art", "x"], "--inventory-dir": ["inv"], "--site": ["dc1", "dc2"],
}
# the options each command takes (and, now and then, one it does not)
_COMMAND_FLAGS: dict[str, tuple[list[str], list[str]]] = {
    "inventory validate": ([], []),
    "render": (["--hosts", "--role", "--out"], []),
    "deploy": (["--hosts", "--role", "--workers", "--canary", "--batch", "--confirm-timeout", "--option"],
               ["--insecure", "--commit", "--yes", "--replace", "--skip-checks"]),
    "check": (["--workers", "--checks", "--option"], ["--insecure"]),
    "compliance": (["--workers", "--format", "--out", "--every", "--option"], ["--insecure"]),
}
_COMMON_SWITCHES = ["--json", "-v", "-q"]


def _option(flags: list[str]) -> st.SearchStrategy[tuple[str, str]]:
    flag = st.one_of(st.sampled_from(flags), st.sampled_from(flags), st.sampled_from(sorted(_FLAG_VALUES))) \
        if flags else st.sampled_from(sorted(_FLAG_VALUES))
    return flag.flatmap(lambda f: st.tuples(st.just(f), st.one_of(
        st.sampled_from(_FLAG_VALUES[f]), st.sampled_from(_FLAG_VALUES[f]), _HOSTILE_ARG)))


@st.composite
def command_lines(draw: st.DrawFn) -> tuple[str, str, list[tuple[str, str]], list[str]]:
    command = draw(st.sampled_from(sorted(_COMMAND_FLAGS)))
    flags, switches = _COMMAND_FLAGS[command]
    site = draw(st.one_of(st.just("dc1"), st.just("dc1"), st.just("dc1"), tricky_text))
    options = draw(st.lists(_option(flags), max_size=4 if flags else 1))
    chosen = draw(st.lists(st.sampled_from(switches + _COMMON_SWITCHES + ["--bogus"]), max_size=3))
    return command, site, options, chosen


@pytest.mark.long
@_settings(CLI_CASES)
@given(line=command_lines())
def test_hostile_command_lines_exit_0_or_3(line: tuple[str, str, list[tuple[str, str]], list[str]]) -> None:
    command, site, options, switches = line
    scratch = Path(tempfile.mkdtemp(prefix="hostile-cli-"))
    try:
        argv = [*command.split(), "--site", site, "--inventory-dir", str(DC1.parent)]
        if command != "inventory validate":
            argv += ["--artifacts", str(scratch / "art")]
        if command == "render":
            argv += ["--out", str(scratch / "out")]
        for flag, value in options:
            if flag in ("--out", "--artifacts", "--inventory-dir"):
                # hostile folder names, but never a write outside the scratch folder
                value = str(scratch / "d" / value.replace("..", "__").lstrip("/"))
            argv += [flag, value]
        argv += switches
        with _quiet() as err:
            rc = main(argv)
        # no credentials and no --lab: anything that gets as far as a device stops with exit 3 too
        assert rc in (0, 3), (argv, rc, err.getvalue()[-2000:])
        if "--bogus" in switches:       # an unknown option is always a usage error
            assert rc == 3, argv
        assert "Traceback" not in err.getvalue()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
