"""Slurm hostlist expressions: what Slurm expands, and hostile input refused with the place named."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nr_run.runbooks.hostlist import MAX_HOSTS, HostlistError, expand


@pytest.mark.parametrize("expr, names", [
    ("gpu7", ["gpu7"]),
    ("gpu[1-4,7]", ["gpu1", "gpu2", "gpu3", "gpu4", "gpu7"]),
    ("gpu[01-04]", ["gpu01", "gpu02", "gpu03", "gpu04"]),
    ("gpu[8-10]", ["gpu8", "gpu9", "gpu10"]),             # width from the low bound, as Slurm
    ("gpu[098-101]", ["gpu098", "gpu099", "gpu100", "gpu101"]),
    ("rack[1-2]-gpu[1-2]", ["rack1-gpu1", "rack1-gpu2", "rack2-gpu1", "rack2-gpu2"]),
    ("gpu1,gpu[3-4],cpu.a_b-7", ["gpu1", "gpu3", "gpu4", "cpu.a_b-7"]),
    ("gpu[1-2],gpu[2-3]", ["gpu1", "gpu2", "gpu3"]),      # each name once, first order kept
    ("[1-2]x", ["1x", "2x"]),
])
def test_expands_like_slurm(expr, names):
    assert expand(expr) == names


@pytest.mark.parametrize("expr, said", [
    ("", "empty host list"),
    ("gpu1,,gpu2", "empty name"),
    ("gpu1,", "empty name"),
    ("gpu[1-4", "never closed"),
    ("gpu1-4]", "without '['"),
    ("gpu[1-[2]]", "nested"),
    ("gpu[]", "empty brackets"),
    ("gpu[4-1]", "runs backwards"),
    ("gpu[1-10:2]", "bad range"),
    ("gpu[-1]", "bad range"),
    ("gpu[+1]", "bad range"),
    ("gpu[a-c]", "bad range"),
    ("gpu[1 - 3]", "bad range"),
    ("gpu 1", "unexpected ' '"),
    ("gpu1;rm -rf /", "unexpected ';'"),
    ("gpu$(id)", "unexpected '$'"),
    ("gpu[1-4]\n", "unexpected '\\n'"),
    ("gpu[0-99999999]", "more than"),
    ("a[1-1000]b[1-1000]", "more than"),
    ("gpu[1234567890]", "bad range"),
    ("gpu\u0661", "unexpected"),                            # a non-ASCII digit is not a digit here
    ("gpu[\u0661-\u0663]", "bad range"),                    # nor inside brackets (it would read as 1-3)
])
def test_hostile_input_is_refused_with_the_reason(expr, said):
    with pytest.raises(HostlistError, match=re.escape(said)):
        expand(expr)


def test_expansion_is_bounded_across_items():
    expr = ",".join(f"n{i}[1-1000]" for i in range(MAX_HOSTS // 1000 + 1))
    with pytest.raises(HostlistError, match="more than"):
        expand(expr)


@given(st.sets(st.integers(0, 300), min_size=1, max_size=40), st.sampled_from(["gpu", "node-", "r1n"]))
def test_a_compressed_set_expands_back_to_itself(numbers, prefix):
    """Runs of consecutive numbers written as Slurm writes them (a-b), singles alone."""
    ordered = sorted(numbers)
    runs: list[list[int]] = []
    for n in ordered:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    body = ",".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)
    assert expand(f"{prefix}[{body}]") == [f"{prefix}{n}" for n in ordered]
