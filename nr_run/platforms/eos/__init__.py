"""Arista EOS: CLI config over eAPI (NAPALM eos), config sessions with commit timers."""

from nr_run.platforms.base import DeployCapabilities, Platform
from nr_run.platforms.collector import LazyCollector
from nr_run.platforms.eos.config import EosConfig
from nr_run.platforms.eos.policy import EosPolicy
from nr_run.platforms.eos.telemetry import telemetry as _telemetry
from nr_run.platforms.eos.transport import EosTransport

platform = Platform(
    name="eos",
    transport=EosTransport(),
    collector=LazyCollector("nr_run.platforms.eos.collect"),
    config=EosConfig(),
    deploy=EosPolicy("eos", DeployCapabilities(commit_timer=True, replace=True)),
    telemetry=_telemetry,
)
