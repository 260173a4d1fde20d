"""EOS deploy policy: the regex policy (secrets, lockouts), the config-session deploy marker, the batched commit
steps, and the device-local lines a replace keeps."""

from __future__ import annotations

from nr_run.platforms.eos.commit import EosCommit
from nr_run.platforms.eos.marker import EosMarker
from nr_run.platforms.policy import RegexPolicy


def top_level_blocks(config: str) -> list[list[str]]:
    """EOS running-config text as blocks: a top-level line and the indented lines under it (a top-level '!'
    or blank line closes a block; comments are dropped)."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in config.splitlines():
        if not line.strip() or line.strip().startswith("!"):
            if not line[:1].isspace():
                current = None
            continue
        if line[:1].isspace():
            if current is not None:
                current.append(line)
        else:
            current = [line]
            blocks.append(current)
    return blocks


class EosPolicy(RegexPolicy):
    marker = EosMarker()
    steps = EosCommit(marker)

    def replace_candidate(self, running: str, candidate: str) -> str:
        """The config a replace loads: the rendered candidate plus the running config's blocks that the policy
        preserves (local users, AAA: device-local, never in the inventory, so never in a rendered config) and
        that the candidate does not configure itself. Without them a replace would delete the operators'
        logins. The result stays in memory: saved candidates and diffs hold only what was rendered."""
        patterns = self.preserved
        rendered = {ln for ln in candidate.splitlines() if ln and not ln[:1].isspace()}
        kept = [ln for block in top_level_blocks(running)
                if block[0] not in rendered and any(p.search(block[0]) for p in patterns) for ln in block]
        if not kept:
            return candidate
        lines = candidate.rstrip("\n").splitlines()
        end = len(lines) - 1 if lines and lines[-1].strip() == "end" else len(lines)
        return "\n".join([*lines[:end], *kept, *lines[end:]]) + "\n"
