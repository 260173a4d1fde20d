"""Arista EOS: CLI config over eAPI (NAPALM eos), config sessions with commit timers."""

from nr_run.platforms.base import DeployCapabilities, Platform
from nr_run.platforms.eos.config import EosConfig
from nr_run.platforms.eos.transport import EosTransport
from nr_run.platforms.policy import RegexPolicy
from nr_run.validators.collect import eos as _collector  # SCAFFOLD: moves to nr_run.platforms.eos.collect

platform = Platform(
    name="eos",
    transport=EosTransport(),
    collector=_collector,  # type: ignore[arg-type]
    config=EosConfig(),
    deploy=RegexPolicy("eos", DeployCapabilities(commit_timer=True, replace=True)),
)
