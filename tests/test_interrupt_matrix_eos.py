"""The interrupt matrix of an EOS session commit (an ECN change on rtsw1): SIGTERM, SIGINT or SIGKILL before
the apply, after it, during the stage's post-checks and during the confirm, and on a full disk. All `long`.

The cases and their assertions are in tests/interrupt_cases.py."""

from __future__ import annotations

import pytest

from tests.interrupt_cases import full_disk_case, full_disk_cases, matrix, signal_case


@pytest.mark.parametrize(("kind", "step", "sig"), matrix("eos"))
def test_a_signal_at_any_step_leaves_the_device_reverted_or_confirmed_and_reconciled(
        deployed_twin, tmp_path, capsys, kind, step, sig):
    signal_case(deployed_twin, tmp_path, capsys, kind, step, sig)


@pytest.mark.parametrize(("kind", "sig"), full_disk_cases("eos"))
def test_a_signal_on_a_full_disk_leaves_the_device_reverted_or_kept_and_reconciled(
        deployed_twin, tmp_path, capsys, kind, sig):
    full_disk_case(deployed_twin, tmp_path, capsys, kind, sig)
