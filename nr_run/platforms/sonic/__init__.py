"""Community SONiC: CONFIG_DB JSON applied through napalm_sonic (GCU patches), checkpoints and revert timers."""

from nr_run.platforms.base import DeployCapabilities, Platform
from nr_run.platforms.collector import LazyCollector
from nr_run.platforms.sonic.config import SonicConfig
from nr_run.platforms.sonic.policy import SonicPolicy
from nr_run.platforms.sonic.telemetry import telemetry as _telemetry
from nr_run.platforms.sonic.transport import SonicTransport

platform = Platform(
    name="sonic",
    transport=SonicTransport(),
    collector=LazyCollector("nr_run.platforms.sonic.collect"),
    config=SonicConfig(),
    deploy=SonicPolicy("sonic", DeployCapabilities(commit_timer=True, replace=True)),
    telemetry=_telemetry,
)
